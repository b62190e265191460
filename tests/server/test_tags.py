"""Tags: textDocument/references on a ``#tag`` (prose or front matter) lists every place the tag
(or a tag nested under it) is written; workspace/symbol with ``#tag`` lists the tagged cards."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from tests.server.conftest import find, slice_range
from tests.server.test_references import references as refs
from zettel_lsp.notes.scan import load_vault

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def references(
    client: LanguageClient, path: Path, pos: types.Position
) -> list[types.Location]:
    return await refs(client, path, pos, declaration=True)


def rel(vault: Path, uri: str) -> str:
    return Path(to_fs_path(uri) or "").relative_to(vault).as_posix()


def tagged(vault: Path, *names: str) -> set[str]:
    """Cards with one of ``names`` (exactly) among their tags: read from the files."""
    cards, _ = load_vault(vault)
    return {c.path for c in cards if any(t.name in names for t in c.tags)}


def texts(vault: Path, got: list[types.Location], enc: str) -> list[str]:
    return [slice_range(vault / rel(vault, loc.uri), loc.range, enc) for loc in got]


async def test_references_on_a_prose_tag(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    got = await references(client, path, find(path, "#ir", enc))
    assert {rel(shared_vault, loc.uri) for loc in got} == tagged(shared_vault, "ir")
    written = texts(shared_vault, got, enc)
    assert set(written) == {"#ir", "ir"}  # in prose and in front matter
    here = [loc for loc in got if rel(shared_vault, loc.uri) == "retrieval/BM25.md"]
    assert [slice_range(path, loc.range, enc) for loc in here] == ["ir", "#ir"]


async def test_references_on_a_front_matter_tag(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    pos = find(path, "ir, ranking", enc)
    got = await references(client, path, pos)
    assert {rel(shared_vault, loc.uri) for loc in got} == tagged(shared_vault, "ir")
    on_ranking = await references(client, path, find(path, "ranking]", enc))
    assert set(texts(shared_vault, on_ranking, enc)) == {"ranking"}
    assert {rel(shared_vault, loc.uri) for loc in on_ranking} == tagged(shared_vault, "ranking")


async def test_references_on_a_parent_tag_include_nested_tags(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "method" / "Progressive summarization.md"
    got = await references(client, path, find(path, "#method", enc))
    written = set(texts(shared_vault, got, enc))
    assert {"#method", "method", "method/zettelkasten", "#method/zettelkasten"} <= written
    assert all(w.lstrip("#").startswith("method") for w in written)
    assert {rel(shared_vault, loc.uri) for loc in got} == tagged(
        shared_vault, "method", "method/zettelkasten"
    )


async def test_references_off_a_tag_still_list_backlinks(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "BM25.md"
    got = await references(client, path, find(path, "# BM25", enc))
    assert got and all(
        slice_range(shared_vault / rel(shared_vault, loc.uri), loc.range, enc).startswith(
            ("[[", "![[", "[", "#")
        )
        for loc in got[1:]
    )
    assert not any(t in ("#ir", "ir") for t in texts(shared_vault, got[1:], enc))


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert isinstance(got, list)
    return got  # type: ignore[return-value]


async def test_workspace_symbol_with_a_tag_lists_tagged_cards(
    client: LanguageClient, shared_vault: Path
) -> None:
    got = await symbols(client, "#method")
    paths = {rel(shared_vault, s.location.uri) for s in got}
    assert paths == tagged(shared_vault, "method", "method/zettelkasten")
    assert "method/Progressive summarization.md" in paths  # #method only
    nested = await symbols(client, "#method/zettelkasten")
    nested_paths = {rel(shared_vault, s.location.uri) for s in nested}
    assert nested_paths == tagged(shared_vault, "method/zettelkasten")
    assert "method/Progressive summarization.md" not in nested_paths
    for s in nested:  # each at a line that writes the tag
        lines = (shared_vault / rel(shared_vault, s.location.uri)).read_text("utf-8").split("\n")
        assert "method/zettelkasten" in lines[s.location.range.start.line]
        assert s.kind == types.SymbolKind.File


async def test_workspace_symbol_tag_prefix_and_unknown_tag(
    client: LanguageClient, shared_vault: Path
) -> None:
    typing = await symbols(client, "#text-ana")  # while typing #text-analysis
    assert {rel(shared_vault, s.location.uri) for s in typing} == tagged(
        shared_vault, "text-analysis"
    )
    for s in typing:
        lines = (shared_vault / rel(shared_vault, s.location.uri)).read_text("utf-8").split("\n")
        assert "text-analysis" in lines[s.location.range.start.line]
    assert await symbols(client, "#no-such-tag-anywhere") == []
    normal = await symbols(client, "maps of content")  # a normal query is unchanged
    assert normal[0].name == "Maps of Content"
