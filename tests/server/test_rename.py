"""textDocument/prepareRename, textDocument/rename and workspace/willRenameFiles over stdio, for
both client profiles. The server never writes: each test applies the returned edit to an
in-memory copy of the vault and checks the links there (the shared vault stays untouched)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from tests.conftest import copy_index
from tests.server.conftest import (
    SERVER,
    client_column,
    encoding_of,
    find,
    open_doc,
    options,
    slice_range,
    start_session,
    wait_ready,
)
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import load_vault

pytestmark = pytest.mark.asyncio(loop_scope="module")


def rel(vault: Path, uri: str) -> str:
    return Path(to_fs_path(uri) or "").relative_to(vault).as_posix()


def apply(vault: Path, edit: types.WorkspaceEdit, encoding: str) -> dict[str, str]:
    """The vault's cards after ``edit`` (text edits, then file renames), in memory."""
    cards, _ = load_vault(vault)
    texts = {c.path: (vault / c.path).read_text(encoding="utf-8") for c in cards}
    changes = list(edit.document_changes or [])
    for uri, edits in (edit.changes or {}).items():
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=list(edits),
            )
        )
    for change in changes:
        if isinstance(change, types.TextDocumentEdit):
            path = rel(vault, change.text_document.uri)
            lines = texts[path].split("\n")
            for e in sorted(
                (e for e in change.edits if isinstance(e, types.TextEdit)),
                key=lambda e: (e.range.start.line, e.range.start.character),
                reverse=True,
            ):
                assert e.range.start.line == e.range.end.line
                line = lines[e.range.start.line]
                cols = [client_column(line, i, encoding) for i in range(len(line) + 1)]
                a, b = cols.index(e.range.start.character), cols.index(e.range.end.character)
                lines[e.range.start.line] = line[:a] + e.new_text + line[b:]
            texts[path] = "\n".join(lines)
        elif isinstance(change, types.RenameFile):
            texts[rel(vault, change.new_uri)] = texts.pop(rel(vault, change.old_uri))
    return texts


def graph_of(texts: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in texts.items())


async def test_capabilities_announce_rename_and_file_renames(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert isinstance(caps.rename_provider, types.RenameOptions)
    assert caps.rename_provider.prepare_provider is True
    if client.capabilities.workspace.file_operations is None:  # neovim: never sends it
        return
    will = caps.workspace.file_operations.will_rename
    assert [f.pattern.glob for f in will.filters] == ["**/*.md"]


async def test_prepare_rename_on_the_title_line(client: LanguageClient, shared_vault: Path) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    got = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(path, "# BM25", enc),
        )
    )
    assert isinstance(got, types.PrepareRenamePlaceholder)
    assert got.placeholder == "BM25"
    assert slice_range(path, got.range, enc) == "BM25"


async def test_prepare_rename_on_prose_answers_null(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    got = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(path, "ranking function for lexical", enc),
        )
    )
    assert got is None  # no error: the client says there is nothing to rename


async def test_prepare_rename_on_a_link_shows_the_file_name(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "Cross-encoder reranking.md"
    uri = await open_doc(client, path)
    pos = find(path, "[[RRF]]", enc)
    got = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=pos.line, character=pos.character + 3),
        )
    )
    assert isinstance(got, types.PrepareRenamePlaceholder)
    assert got.placeholder == "Reciprocal rank fusion"
    assert slice_range(path, got.range, enc) == "RRF"


async def test_rename_a_card_moves_the_file_and_rewrites_every_link(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(path, "# BM25", enc),
            new_name="Okapi ranking",
        )
    )
    assert edit is not None and edit.document_changes
    moves = [c for c in edit.document_changes if isinstance(c, types.RenameFile)]
    assert [(rel(shared_vault, m.old_uri), rel(shared_vault, m.new_uri)) for m in moves] == [
        ("retrieval/BM25.md", "retrieval/Okapi ranking.md")
    ]
    assert edit.document_changes[-1] is moves[0]  # text edits first, on the old uri
    before = graph_of(apply(shared_vault, types.WorkspaceEdit(), enc))
    after_texts = apply(shared_vault, edit, enc)
    after = graph_of(after_texts)
    assert after.backlinks("retrieval/Okapi ranking.md") == before.backlinks("retrieval/BM25.md")
    assert after_texts["retrieval/Okapi ranking.md"].split("\n")[4] == "# Okapi ranking"
    links = {
        rl.link.raw
        for src in after.backlinks("retrieval/Okapi ranking.md")
        for rl in after.links_of(src)
        if rl.target == "retrieval/Okapi ranking.md"
    }
    assert "[[retrieval/Okapi ranking|BM25]]" in links
    assert "[[Okapi ranking#Saturation and the k1 parameter]]" in links
    assert "[[Okapi ranking#^bm25-formula]]" in links
    assert "[BM25](Okapi%20ranking.md)" in links
    assert "[[Okapi BM25]]" in links  # a link by alias stays as it is
    assert not any("yourself" in m.message for m in client.messages)  # no move left to do
    # applying the edit, the editor announces the move (willRenameFiles): its links are in
    # this edit already, so nothing more (VS Code would ask the user about a second edit)
    move = types.RenameFilesParams(
        files=[types.FileRename(old_uri=moves[0].old_uri, new_uri=moves[0].new_uri)]
    )
    again = await client.workspace_will_rename_files_async(move)
    assert again is None or not (again.document_changes or again.changes)
    # the same move made later by the user (in the file tree) gets its link edits
    later = await client.workspace_will_rename_files_async(move)
    assert later is not None and (later.document_changes or later.changes)


async def test_rename_a_heading_rewrites_links_to_it(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    pos = find(path, "Saturation and the k1 parameter", enc)
    prep = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    assert isinstance(prep, types.PrepareRenamePlaceholder)
    assert prep.placeholder == "Saturation and the k1 parameter"
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos, new_name="k1"
        )
    )
    assert edit is not None
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes or [])
    texts = apply(shared_vault, edit, enc)
    assert "## k1" in texts["retrieval/BM25.md"]
    assert any("[[BM25#k1]]" in t for t in texts.values())
    assert not any("[[BM25#Saturation and the k1 parameter]]" in t for t in texts.values())


async def test_rename_to_an_existing_card_is_refused(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    for name, why in (("TF-IDF", "exists"), ("a/b", "cannot contain")):
        with pytest.raises(Exception, match=why):
            await client.text_document_rename_async(
                types.RenameParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=find(path, "# BM25", enc),
                    new_name=name,
                )
            )


async def test_will_rename_files_updates_links(client: LanguageClient, shared_vault: Path) -> None:
    enc = client.encoding  # type: ignore[attr-defined]
    old = shared_vault / "retrieval" / "Stemming.md"
    new = shared_vault / "retrieval" / "Word stems.md"
    edit = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[types.FileRename(old_uri=old.as_uri(), new_uri=new.as_uri())]
        )
    )
    assert edit is not None
    before = graph_of(apply(shared_vault, types.WorkspaceEdit(), enc))
    texts = apply(shared_vault, edit, enc)
    texts["retrieval/Word stems.md"] = texts.pop("retrieval/Stemming.md")  # the editor moves it
    after = graph_of(texts)
    assert before.backlinks("retrieval/Stemming.md")
    assert after.backlinks("retrieval/Word stems.md") == before.backlinks("retrieval/Stemming.md")


@pytest_lsp.fixture(config=SERVER, params=["emacs"], scope="module")
async def no_move_client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    shared_vault: Path,
    server_cache: Path,
    indexed_example: Path,
):
    """A client without the ``rename`` resource operation (Emacs' eglot profile)."""
    ix = shared_vault.parent / "ix"  # an index of its own, copied: a warm start
    if not ix.exists():
        copy_index(indexed_example, shared_vault, ix)
    result = await start_session(lsp_client, request.param, shared_vault, options(server_cache, ix))
    lsp_client.encoding = encoding_of(result)  # type: ignore[attr-defined]
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_a_client_without_file_renames_gets_the_text_edits_and_the_move_to_do(
    no_move_client: LanguageClient, shared_vault: Path
) -> None:
    client = no_move_client
    enc = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(path, "# BM25", enc),
            new_name="Okapi ranking",
        )
    )
    assert edit is not None and edit.document_changes
    assert all(isinstance(c, types.TextDocumentEdit) for c in edit.document_changes)
    edited = {
        rel(shared_vault, c.text_document.uri)
        for c in edit.document_changes
        if isinstance(c, types.TextDocumentEdit)
    }
    assert "retrieval/BM25.md" in edited and len(edited) > 1  # the title and other cards' links
    before = graph_of(apply(shared_vault, types.WorkspaceEdit(), enc))
    texts = apply(shared_vault, edit, enc)
    assert texts["retrieval/BM25.md"].split("\n")[4] == "# Okapi ranking"
    texts["retrieval/Okapi ranking.md"] = texts.pop("retrieval/BM25.md")  # the user moves it
    after = graph_of(texts)
    assert after.backlinks("retrieval/Okapi ranking.md") == before.backlinks("retrieval/BM25.md")
    told = [m.message for m in client.messages if "retrieval/Okapi ranking.md" in m.message]
    assert told and "move retrieval/BM25.md to retrieval/Okapi ranking.md" in told[0]
    # the user's move, if the client announces it, gets no second edit of those links
    moved = types.FileRename(
        old_uri=path.as_uri(), new_uri=path.with_name("Okapi ranking.md").as_uri()
    )
    again = await client.workspace_will_rename_files_async(types.RenameFilesParams(files=[moved]))
    assert again is None or not (again.document_changes or again.changes)
    # a heading rename moves no file: the same as for any client, and no message
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(path, "Saturation and the k1 parameter", enc),
            new_name="k1",
        )
    )
    assert edit is not None
    assert any("[[BM25#k1]]" in t for t in apply(shared_vault, edit, enc).values())
    assert len([m for m in client.messages if "yourself" in m.message]) == 1
