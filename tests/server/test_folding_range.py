"""textDocument/foldingRange: the front matter and every section of a card."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def folds(client: LanguageClient, uri: str) -> list[types.FoldingRange]:
    got = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(got or [])


async def test_front_matter_and_sections(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    got = await folds(client, await open_doc(client, path))
    front = got[0]
    assert (front.start_line, front.end_line) == (0, 3)
    assert front.kind == types.FoldingRangeKind.Comment
    assert lines[front.end_line] == "---"
    sections = [f for f in got if f.kind == types.FoldingRangeKind.Region]
    starts = [lines[f.start_line] for f in sections]
    assert starts == [
        "# BM25",
        "## The formula",
        "## Saturation and the k1 parameter",
        "## Length normalization and b",
        "## IDF",
        "## Strengths and limits",
    ]
    for f in sections:
        assert lines[f.end_line].strip()  # ends on its last non-blank line
        assert not lines[f.end_line + 1].startswith("#") or f.end_line + 1 == len(lines)
    formula = sections[1]
    assert lines[formula.end_line + 2] == "## Saturation and the k1 parameter"


async def test_fenced_code_and_unsaved_text(client: LanguageClient, shared_vault: Path) -> None:
    text = "# Top\n\n```\n# not a heading\n\nstill code\n```\n\n## Next\none\ntwo\n"
    got = await folds(client, await open_doc(client, shared_vault / "scratch-fold.md", text))
    assert [(f.start_line, f.end_line) for f in got] == [(0, 10), (8, 10)]
