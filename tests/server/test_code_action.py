"""textDocument/codeAction: link an unlinked mention, link all, add related links."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    find,
    open_doc,
    slice_range,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def actions(client: LanguageClient, uri: str, rng: types.Range) -> list[types.CodeAction]:
    got = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert got is not None
    return [a for a in got if isinstance(a, types.CodeAction)]


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None, action.title
    if edit.document_changes:
        (change,) = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        return [e for e in change.edits if isinstance(e, types.TextEdit)]
    assert edit.changes is not None
    return list(edit.changes[uri])


def line_range(line: int) -> types.Range:
    return types.Range(
        start=types.Position(line=line, character=0), end=types.Position(line=line, character=1)
    )


async def test_quick_fix_links_exactly_the_mention(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "retrieval" / "Vector database.md"
    enc = client.encoding  # type: ignore[attr-defined]
    uri = await open_doc(client, path)
    at = find(path, "reciprocal rank fusion", enc)
    cursor = types.Position(line=at.line, character=at.character + 5)
    got = await actions(client, uri, types.Range(start=cursor, end=cursor))
    fixes = [a for a in got if a.kind == types.CodeActionKind.QuickFix]
    fix = next(a for a in fixes if "reciprocal rank fusion" in a.title)
    replacement = "[[Reciprocal rank fusion|reciprocal rank fusion]]"  # alias form: case differs
    assert fix.title == f"Link 'reciprocal rank fusion' → {replacement}"
    (edit,) = edits_of(fix, uri)
    assert edit.new_text == replacement
    assert edit.range.start == at
    assert slice_range(path, edit.range, enc) == "reciprocal rank fusion"
    # only the mention under the cursor gets a quick fix; elsewhere on the line, none
    assert len(fixes) == 1
    assert not [a for a in await actions(client, uri, line_range(at.line)) if a.kind == "quickfix"]


async def test_unsaved_text_is_what_counts(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "baking" / "Crumb.md"
    text = path.read_text(encoding="utf-8")
    added = "An open crumb needs 🍞 good cosine similarity, said nobody."
    uri = await open_doc(client, path, added + "\n" + text)
    whole_line = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=1, character=0)
    )
    got = await actions(client, uri, whole_line)
    fix = next(a for a in got if "'cosine similarity'" in a.title)
    (edit,) = edits_of(fix, uri)
    enc = client.encoding  # type: ignore[attr-defined]
    start = added.index("cosine similarity")
    prefix = added[:start]
    want = {
        "utf-8": len(prefix.encode()),
        "utf-16": len(prefix.encode("utf-16-le")) // 2,
        "utf-32": len(prefix),
    }[enc]
    assert (edit.range.start.line, edit.range.start.character) == (0, want)
    assert edit.new_text == "[[Cosine similarity|cosine similarity]]"


async def test_link_all_covers_every_mention(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "retrieval" / "Inverted index.md"
    uri = await open_doc(client, path)
    got = await actions(client, uri, line_range(0))
    link_all = next(a for a in got if a.title.startswith("Link all unlinked mentions"))
    edits = edits_of(link_all, uri)
    n = int(re.search(r"\((\d+)\)", link_all.title).group(1))  # type: ignore[union-attr]
    assert n == len(edits) >= 2
    texts = {e.new_text for e in edits}
    assert "[[Niklas Luhmann]]" in texts
    # edits never overlap
    spans = sorted(
        (e.range.start.line, e.range.start.character, e.range.end.character) for e in edits
    )
    for a, b in itertools.pairwise(spans):
        assert a[0] < b[0] or a[2] <= b[1]


async def test_add_related_links_inserts_new_links_under_the_heading(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "baking" / "Autolyse.md"
    text = path.read_text(encoding="utf-8")
    uri = await open_doc(client, path)
    got = await actions(client, uri, line_range(0))
    action = next(a for a in got if a.title.startswith("Add related links under '## Related'"))
    if action.edit is None:  # lazy: both clients here support resolving the edit
        action = await client.code_action_resolve_async(action)
    (edit,) = edits_of(action, uri)
    assert edit.range.start == edit.range.end  # an insertion
    assert "## Related" in edit.new_text
    added = re.findall(r"^- \[\[([^\]]+)\]\]$", edit.new_text, flags=re.MULTILINE)
    assert 1 <= len(added) <= 5
    already = {t.split("|")[0].split("#")[0].lower() for t in re.findall(r"\[\[([^\]]+)\]\]", text)}
    assert not {a.lower() for a in added} & already
    assert "Autolyse" not in added


async def test_no_actions_outside_the_vault(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "Loose.md"
    path.write_text("Cosine similarity and BM25.\n", encoding="utf-8")
    uri = await open_doc(client, path)
    assert await actions(client, uri, line_range(0)) == []
