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


def whole_note(path: Path) -> types.Range:
    lines = path.read_text(encoding="utf-8").split("\n")
    return types.Range(
        start=types.Position(line=0, character=0),
        end=types.Position(line=len(lines), character=0),
    )


async def test_link_confident_mentions_comes_after_the_fixes_and_says_how_many(
    client: LanguageClient, shared_vault: Path
) -> None:
    """Issue #14: "Link all" linked every mention, common words included, and came first. Now
    "Link N confident mentions" follows the quick fixes, one per mentioned card, and links
    only the mentions of confident cards."""
    path = shared_vault / "retrieval" / "Inverted index.md"
    uri = await open_doc(client, path)
    got = await actions(client, uri, whole_note(path))
    kinds = [a.kind for a in got]
    fixes = [a for a in got if a.kind == types.CodeActionKind.QuickFix]
    (link_all,) = [a for a in got if re.fullmatch(r"Link \d+ confident mentions?", a.title)]
    assert not [a for a in got if a.title.startswith("Link all")]
    at = got.index(link_all)
    assert at == len(fixes) and kinds[:at] == [types.CodeActionKind.QuickFix] * at
    assert all(a.title.startswith("Add related links") for a in got[at + 1 :])
    edits = edits_of(link_all, uri)
    n = int(link_all.title.split()[1])
    assert n == len(edits) >= 1
    assert "[[Niklas Luhmann]]" in {e.new_text for e in edits}
    # every confident edit is also offered as a quick fix, and fixes name each card once
    fix_edits = {
        (e.range.start.line, e.range.start.character, e.new_text)
        for f in fixes
        for e in edits_of(f, uri)
    }
    assert {(e.range.start.line, e.range.start.character, e.new_text) for e in edits} <= fix_edits
    targets = [edits_of(f, uri)[0].new_text.split("|")[0].strip("[]") for f in fixes]
    assert len(targets) == len(set(targets))
    spans = sorted(
        (e.range.start.line, e.range.start.character, e.range.end.character) for e in edits
    )
    for a, b in itertools.pairwise(spans):
        assert a[0] < b[0] or a[2] <= b[1]


async def test_a_card_mentioned_twice_gets_one_fix_with_its_count(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "baking" / "Crumb.md"
    text = path.read_text(encoding="utf-8")
    added = "Cosine similarity, they say, is not cosine similarity."
    uri = await open_doc(client, path, added + "\n" + text)
    first_line = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=1, character=0)
    )
    got = await actions(client, uri, first_line)
    (fix,) = [a for a in got if a.kind == types.CodeActionKind.QuickFix]
    assert fix.title == "Link 'Cosine similarity' → [[Cosine similarity]] (2 mentions)"
    assert [e.new_text for e in edits_of(fix, uri)] == [
        "[[Cosine similarity]]",
        "[[Cosine similarity|cosine similarity]]",
    ]


async def test_suggest_links_json_adds_targets_and_the_confident_edits(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "baking" / "Crumb.md"
    text = path.read_text(encoding="utf-8")
    added = "Cosine similarity, they say, is not cosine similarity: see https://example.org/crumb."
    uri = await open_doc(client, path, added + "\n" + text)
    got = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.suggestLinks", arguments=[{"uri": uri}])
    )
    mentions = got["unlinked_mentions"]
    assert mentions and all(
        {"text", "target", "target_title", "replacement", "range"} <= set(m) for m in mentions
    )
    targets = got["mention_targets"]
    assert len({t["target"] for t in targets}) == len(targets)
    (cos,) = [t for t in targets if t["target"] == "retrieval/Cosine similarity.md"]
    assert cos["count"] == 2 and len(cos["ranges"]) == 2
    assert [t["confidence"] for t in targets] == sorted(
        (t["confidence"] for t in targets), reverse=True
    )
    assert all(
        m["count"] == next(t["count"] for t in targets if t["target"] == m["target"])
        for m in mentions
    )
    confident = got["link_confident"]
    assert (
        confident["count"]
        == len(confident["edits"])
        == sum(t["count"] for t in targets if t["confident"])
    )
    assert confident["title"].startswith(f"Link {confident['count']} confident mention")
    # nothing inside the URL on line 0
    url_at = added.index("https://")
    assert not [
        m
        for m in mentions
        if m["range"]["start"]["line"] == 0 and m["range"]["start"]["character"] >= url_at
    ]


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
