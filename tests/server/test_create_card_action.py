"""Quick fixes of an unresolved link: "Link to «closest match»" and "Create card «X»" (a
``CreateFile`` where the client takes resource operations, else a text edit to the new file),
and the diagnostic clearing once the card exists. The module has its own vault copy (a test
creates a card in it) with ``newNoteFolder: inbox``."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from tests.conftest import EXAMPLE_VAULT
from tests.server.conftest import (
    CLIENTS,
    SERVER,
    encoding_of,
    open_doc,
    options,
    start_session,
    wait_ready,
)
from tests.server.test_diagnostics import diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("create-card") / "vault"
    shutil.copytree(EXAMPLE_VAULT, dst)
    return dst


@pytest_lsp.fixture(config=SERVER, params=CLIENTS, scope="module")
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, vault: Path, server_cache: Path
):
    result = await start_session(
        lsp_client,
        request.param,
        vault,
        options(server_cache, vault.parent / f"index-{request.param}", newNoteFolder="inbox"),
    )
    lsp_client.encoding = encoding_of(result)  # type: ignore[attr-defined]
    lsp_client.kind = request.param  # type: ignore[attr-defined]
    await wait_ready(lsp_client, ("embedding", "ready"))
    yield
    await lsp_client.shutdown_session()


async def actions(
    client: LanguageClient,
    uri: str,
    line: int,
    character: int,
    diagnostics: Sequence[types.Diagnostic] = (),
) -> list[types.CodeAction]:
    """The code actions with the cursor at (line, character) (ASCII lines: no unit issue)."""
    at = types.Position(line=line, character=character)
    got = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    return [a for a in got or [] if isinstance(a, types.CodeAction)]


def text_edits(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [
            e
            for c in edit.document_changes
            if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == uri
            for e in c.edits
            if isinstance(e, types.TextEdit)
        ]
    assert edit.changes is not None
    return list(edit.changes[uri])


def apply(text: str, edit: types.TextEdit) -> str:
    """One single-line edit, in code points (the test texts are ASCII)."""
    lines = text.split("\n")
    r = edit.range
    assert r.start.line == r.end.line
    line = lines[r.start.line]
    lines[r.start.line] = line[: r.start.character] + edit.new_text + line[r.end.character :]
    return "\n".join(lines)


async def test_link_to_the_closest_match(client: LanguageClient, vault: Path) -> None:
    text = "# Scratch\n\nRead [[Zettelkasten methd#Origins|the method]] and [[Qqqq zzzz]].\n"
    uri = await open_doc(client, vault / "method" / "Scratch.md", text)
    line = text.split("\n")[2]
    got = await actions(client, uri, 2, line.index("methd"))
    assert [a.title for a in got][:3] == [
        "Link to «Zettelkasten method»",
        "Create card «Zettelkasten methd»",
        "Add related links under '## Related'",  # today's actions follow
    ]
    far = await actions(client, uri, 2, line.index("Qqqq"))
    assert [a.title for a in far if a.kind == "quickfix"] == ["Create card «Qqqq zzzz»"]
    fix = got[0]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.edit is not None
    (edit,) = text_edits(fix.edit, uri)
    assert apply(text, edit).split("\n")[2] == (
        "Read [[Zettelkasten method#Origins|the method]] and [[Qqqq zzzz]]."
    )
    # outside a broken link: no link fix
    outside = await actions(client, uri, 2, 1)
    assert not [a for a in outside if a.title.startswith(("Link to", "Create"))]
    # named by the client's diagnostic, with the cursor elsewhere: the fix, for that diagnostic
    diags = await diagnostics(client, uri, lambda ds: len(ds) == 2)
    (typo,) = [d for d in diags if "methd" in d.message]
    named = await actions(client, uri, 0, 0, [typo])
    assert [a.title for a in named][:2] == [
        "Link to «Zettelkasten method»",
        "Create card «Zettelkasten methd»",
    ]
    assert list(named[0].diagnostics or []) == [typo]


async def test_create_card_edit(client: LanguageClient, vault: Path) -> None:
    text = "A [[Brand new idea]] here.\n"
    uri = await open_doc(client, vault / "method" / "Scratch2.md", text)
    (create,) = [a for a in await actions(client, uri, 0, 5) if a.title.startswith("Create")]
    assert create.title == "Create card «Brand new idea»"
    new_uri = (vault / "inbox" / "Brand new idea.md").as_uri()
    edit = create.edit
    assert edit is not None
    if client.kind == "visual_studio_code":  # type: ignore[attr-defined]
        first, second = edit.document_changes or []
        assert isinstance(first, types.CreateFile) and first.uri == new_uri
        assert first.options is not None and first.options.ignore_if_exists
        assert isinstance(second, types.TextDocumentEdit) and second.text_document.uri == new_uri
    else:  # no documentChanges: a text edit to the new file (Neovim opens it as a buffer)
        assert edit.document_changes is None and edit.changes is not None
        assert list(edit.changes) == [new_uri]
    (insert,) = text_edits(edit, new_uri)
    assert insert.new_text == "# Brand new idea\n"
    assert insert.range.start == insert.range.end == types.Position(line=0, character=0)
    assert not (vault / "inbox" / "Brand new idea.md").exists()  # the editor applies it


async def test_creating_the_card_clears_the_diagnostic(client: LanguageClient, vault: Path) -> None:
    name = f"Card for {client.kind}"  # type: ignore[attr-defined]
    text = f"Soon: [[{name}]].\n"
    uri = await open_doc(client, vault / "Waiting.md", text)
    (before,) = await diagnostics(client, uri, lambda ds: len(ds) == 1)
    assert before.code == "unresolved-link"
    (create,) = [a for a in await actions(client, uri, 0, 9) if a.title.startswith("Create")]
    assert create.edit is not None
    # what the editor does with the edit: create the file with its text
    if create.edit.document_changes:
        target = next(
            c for c in create.edit.document_changes if isinstance(c, types.CreateFile)
        ).uri
    else:
        (target,) = list(create.edit.changes or {})
    path = Path(to_fs_path(target) or "")
    (insert,) = text_edits(create.edit, target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(insert.new_text, encoding="utf-8")
    # another file changed: the open card's diagnostic goes away
    assert await diagnostics(client, uri, lambda ds: len(ds) == 0) == []
