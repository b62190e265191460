"""textDocument/definition: from a link to its card, heading or block."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    find,
    open_doc,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def definition(client: LanguageClient, path: Path, needle: str) -> types.Location | None:
    uri = await open_doc(client, path)
    pos = find(path, needle, client.encoding)  # type: ignore[attr-defined]
    got = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=pos.line, character=pos.character + 2),
        )
    )
    if isinstance(got, list):
        assert len(got) <= 1
        got = got[0] if got else None
    assert got is None or isinstance(got, types.Location)
    return got


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().split("\n")) if needle in t)


@pytest.mark.parametrize(
    ("source", "needle", "target", "target_line"),
    [
        ("retrieval/TF-IDF.md", "[[BM25#Saturation", "retrieval/BM25.md", "## Saturation and"),
        ("retrieval/TF-IDF.md", "[[BM25#^bm25-formula]]", "retrieval/BM25.md", "^bm25-formula"),
        ("retrieval/TF-IDF.md", "[BM25](BM25.md)", "retrieval/BM25.md", None),
        ("baking/Autolyse.md", "[[Overview]]", "baking/Overview.md", None),  # same folder wins
        (
            "retrieval/Cross-encoder reranking.md",
            "[[RRF]]",
            "retrieval/Reciprocal rank fusion.md",
            None,
        ),
        (
            "baking/Proofing.md",
            "(Bulk%20fermentation.md#temperature)",
            "baking/Bulk fermentation.md",
            "## Temperature",
        ),
    ],
)
async def test_link_goes_to_its_target(
    client: LanguageClient,
    shared_vault: Path,
    source: str,
    needle: str,
    target: str,
    target_line: str | None,
) -> None:
    if needle.startswith("("):  # a Markdown link's target part: ask on its text instead
        needle = "[how temperature"
    loc = await definition(client, shared_vault / source, needle)
    assert loc is not None
    assert loc.uri == (shared_vault / target).as_uri()
    want = 0 if target_line is None else line_of(shared_vault / target, target_line)
    assert loc.range.start.line == want


async def test_unresolved_link_has_no_definition(
    client: LanguageClient, shared_vault: Path
) -> None:
    assert (
        await definition(client, shared_vault / "baking" / "Sourdough starter.md", "[[Rye") is None
    )
