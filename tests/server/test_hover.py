"""textDocument/hover: link targets with preview and related cards; related notes elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    client_column,
    find,
    open_doc,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def hover_at(client: LanguageClient, path: Path, pos: types.Position) -> types.Hover | None:
    uri = await open_doc(client, path)
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )


def markdown(h: types.Hover | None) -> str:
    assert h is not None, "no hover"
    assert isinstance(h.contents, types.MarkupContent)
    assert h.contents.kind == types.MarkupKind.Markdown
    return h.contents.value


async def test_link_to_heading_shows_target_preview_and_related(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "retrieval" / "TF-IDF.md"
    enc = client.encoding  # type: ignore[attr-defined]
    pos = find(path, "[[BM25#Saturation", enc)
    h = await hover_at(client, path, types.Position(line=pos.line, character=pos.character + 3))
    md = markdown(h)
    bm25_uri = (shared_vault / "retrieval" / "BM25.md").as_uri()
    assert md.startswith(f"### [BM25]({bm25_uri})")
    assert "backlink" in md
    # the preview is the linked section, not the card's start
    assert "k1" in md.split("**Related**")[0]
    assert "**Related**" in md
    # the hover's range is exactly the link
    assert h is not None and h.range is not None
    assert h.range.start == pos
    assert h.range.end.character - h.range.start.character == len(
        "[[BM25#Saturation and the k1 parameter]]"
    )


async def test_unresolved_link_says_so(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "baking" / "Sourdough starter.md"
    pos = find(path, "[[Rye sourdough]]", client.encoding)  # type: ignore[attr-defined]
    md = markdown(await hover_at(client, path, pos))
    assert "Unresolved link" in md and "Rye sourdough" in md


async def test_utf16_columns_after_an_emoji(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "Sourdough around the world.md"
    enc = client.encoding  # type: ignore[attr-defined]
    line = path.read_text(encoding="utf-8").split("\n")[6]
    assert line.startswith("🍞")
    cp = line.index("[[Sourdough starter]]")
    assert cp == 137
    start = client_column(line, cp, enc)
    if enc == "utf-16":
        assert start == 138  # the emoji counts two UTF-16 units
    # one unit before the link: no link hover there; the first unit of the link: the link
    before = await hover_at(client, path, types.Position(line=6, character=start - 1))
    assert before is None or "Sourdough starter" not in markdown(before).split("\n")[0]
    h = await hover_at(client, path, types.Position(line=6, character=start))
    assert "### [Sourdough starter]" in markdown(h)
    assert h is not None and h.range is not None
    assert (h.range.start.character, h.range.end.character) == (
        start,
        client_column(line, cp + len("[[Sourdough starter]]"), enc),
    )


async def test_related_notes_for_a_paragraph(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    pos = find(path, "BM25 sums one contribution", client.encoding)  # type: ignore[attr-defined]
    h = await hover_at(client, path, pos)
    md = markdown(h)
    assert md.startswith("**Related notes**")
    # the hover covers the paragraph: from its first line to the end of its last
    lines = path.read_text(encoding="utf-8").split("\n")
    assert h is not None and h.range is not None
    assert h.range.start == types.Position(line=pos.line, character=0)
    assert h.range.end.line == pos.line and lines[pos.line + 1] == ""
    assert h.range.end.character == client_column(
        lines[pos.line], len(lines[pos.line]), client.encoding
    )  # type: ignore[attr-defined]
    items = [line for line in md.split("\n") if line.startswith("- [")]
    assert 1 <= len(items) <= 5
    assert all("BM25.md" not in item.split("](")[1].split(")")[0] for item in items)
    relations = {"*linked*", "*backlink*", "*2 hops*", "*not linked*"}
    assert all(any(r in item for r in relations) for item in items)
    assert any("TF-IDF" in item or "Inverted index" in item for item in items), md


async def test_no_hover_on_a_blank_line_or_outside_the_vault(
    client: LanguageClient, shared_vault: Path, tmp_path: Path
) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    blank = path.read_text(encoding="utf-8").split("\n").index("")
    assert await hover_at(client, path, types.Position(line=blank, character=0)) is None
    outside = tmp_path / "Elsewhere.md"
    outside.write_text("# Elsewhere\n\nSee [[BM25]] for ranking.\n", encoding="utf-8")
    assert await hover_at(client, outside, types.Position(line=2, character=6)) is None
