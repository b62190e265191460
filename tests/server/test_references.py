"""textDocument/references: a card's backlinks, each at the exact range of the link."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    find,
    open_doc,
    slice_range,
)
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def references(
    client: LanguageClient, path: Path, pos: types.Position, declaration: bool = False
) -> list[types.Location]:
    uri = await open_doc(client, path)
    got = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=pos,
            context=types.ReferenceContext(include_declaration=declaration),
        )
    )
    return list(got or [])


def expected_backlinks(vault: Path, target: str) -> set[str]:
    cards, _ = load_vault(vault)
    return set(LinkGraph.build(cards).backlinks(target))


async def test_references_on_the_title_line_list_backlinks(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    title = find(path, "# BM25", client.encoding)  # type: ignore[attr-defined]
    got = await references(client, path, title)
    sources = {Path(to_fs_path(loc.uri) or "").relative_to(shared_vault).as_posix() for loc in got}
    assert sources == expected_backlinks(shared_vault, "retrieval/BM25.md")
    assert len(sources) >= 4
    for loc in got:
        src = Path(to_fs_path(loc.uri) or "")
        text = slice_range(src, loc.range, client.encoding)  # type: ignore[attr-defined]
        assert text.startswith(("[[", "![[", "[")), text
        assert "BM25" in text or "BM-25" in text or "bm25" in text.lower(), text


async def test_references_on_a_link_list_the_targets_backlinks(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "retrieval" / "Cross-encoder reranking.md"
    pos = find(path, "[[RRF]]", client.encoding)  # type: ignore[attr-defined]
    got = await references(client, path, pos, declaration=True)
    rrf = (shared_vault / "retrieval" / "Reciprocal rank fusion.md").as_uri()
    assert got[0].uri == rrf  # the declaration first
    sources = {
        Path(to_fs_path(loc.uri) or "").relative_to(shared_vault).as_posix() for loc in got[1:]
    }
    assert sources == expected_backlinks(shared_vault, "retrieval/Reciprocal rank fusion.md")
    assert "retrieval/Cross-encoder reranking.md" in sources
