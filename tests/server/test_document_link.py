"""textDocument/documentLink: every link that points somewhere, with the target file (and the
``#L<line>`` of a heading or block), at the link's exact range."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import client_column, open_doc, slice_range

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def links(client: LanguageClient, uri: str) -> list[types.DocumentLink]:
    got = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(got or [])


def _tooltips(client: LanguageClient) -> bool:
    caps = client.capabilities.text_document if client.capabilities is not None else None
    link = caps.document_link if caps is not None else None
    return bool(link and link.tooltip_support)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text("utf-8").split("\n")) if needle in ln)


async def test_wikilinks_markdown_links_and_anchors(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    path = shared_vault / "retrieval" / "TF-IDF.md"
    got = await links(client, await open_doc(client, path))
    by_text = {slice_range(path, ln.range, enc): ln for ln in got}
    bm25 = shared_vault / "retrieval" / "BM25.md"
    assert by_text["[BM25](BM25.md)"].target == bm25.as_uri()
    heading = by_text["[[BM25#Saturation and the k1 parameter]]"]
    assert heading.target == f"{bm25.as_uri()}#L{line_of(bm25, '## Saturation') + 1}"
    block = by_text["[[BM25#^bm25-formula]]"]
    assert block.target == f"{bm25.as_uri()}#L{line_of(bm25, '^bm25-formula') + 1}"
    assert (
        by_text["[[Cosine similarity]]"].target
        == (shared_vault / "retrieval" / "Cosine similarity.md").as_uri()
    )
    if _tooltips(client):
        assert heading.tooltip and heading.tooltip.startswith("BM25")
    else:
        assert heading.tooltip is None
    # every link the card has, each once
    assert len(got) == len(by_text)
    assert all(t.startswith(("[[", "![[", "[", "![")) for t in by_text)


async def test_unsaved_text_unresolved_links_and_utf16_ranges(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "# Scratch\n\n🍞🍞 [[Gluten]] and [[No such card anywhere]] and [x](../nowhere.md)\n"
    uri = await open_doc(client, shared_vault / "baking" / "scratch-links.md", text)
    got = await links(client, uri)
    assert len(got) == 1  # the unresolved ones have no target, so no entry
    rng = got[0].range
    line = text.split("\n")[2]
    assert rng.start.line == 2
    assert rng.start.character == client_column(line, line.index("[[Gluten]]"), enc)
    assert rng.end.character == client_column(line, line.index(" and [[No"), enc)
    assert got[0].target == (shared_vault / "baking" / "Gluten.md").as_uri()
