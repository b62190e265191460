"""textDocument/documentSymbol: a card's headings as a tree, each symbol covering its section."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import client_column, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRATCH = """---
tags: [scratch]
---
# Outline 🍞 test

Intro with [[BM25]].

## First 🥖 part

```
# not a heading in fenced code
```

### Deep

## Second
last line
"""


async def symbols(client: LanguageClient, uri: str) -> list[types.DocumentSymbol]:
    got = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert got is not None
    assert all(isinstance(s, types.DocumentSymbol) for s in got)
    return got  # type: ignore[return-value]


def text_of(text: str, rng: types.Range, encoding: str) -> str:
    lines = text.split("\n")
    assert rng.start.line == rng.end.line
    line = lines[rng.start.line]
    cols = [client_column(line, i, encoding) for i in range(len(line) + 1)]
    return line[cols.index(rng.start.character) : cols.index(rng.end.character)]


def tree(syms: list[types.DocumentSymbol]) -> list[object]:
    return [(s.name, tree(s.children)) if s.children else s.name for s in syms]


async def test_headings_of_a_card_as_a_tree(client: LanguageClient, shared_vault: Path) -> None:
    uri = await open_doc(client, shared_vault / "retrieval" / "BM25.md")
    got = await symbols(client, uri)
    assert tree(got) == [
        (
            "BM25",
            [
                "The formula",
                "Saturation and the k1 parameter",
                "Length normalization and b",
                "IDF",
                "Strengths and limits",
            ],
        )
    ]
    root = got[0]
    assert root.range.start == types.Position(line=4, character=0)
    lines = (shared_vault / "retrieval" / "BM25.md").read_text(encoding="utf-8").split("\n")
    assert root.range.end.line == len(lines) - 1  # the title's section is the whole body
    formula = root.children[0]  # type: ignore[index]
    assert lines[formula.range.start.line] == "## The formula"
    assert lines[formula.range.end.line + 1] == "## Saturation and the k1 parameter"


async def test_unsaved_text_fenced_code_and_utf16_columns(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    uri = await open_doc(client, shared_vault / "scratch-outline.md", SCRATCH)  # not on disk
    got = await symbols(client, uri)
    assert tree(got) == [("Outline 🍞 test", [("First 🥖 part", ["Deep"]), "Second"])]
    first = got[0].children[0]  # type: ignore[index]
    assert text_of(SCRATCH, first.selection_range, enc) == "First 🥖 part"
    assert text_of(SCRATCH, got[0].selection_range, enc) == "Outline 🍞 test"
    # the selection lies inside the range (VS Code rejects a symbol otherwise)
    for s in (got[0], first):
        assert s.range.start.line <= s.selection_range.start.line <= s.range.end.line
    last = SCRATCH.split("\n")[-2]
    second = got[0].children[1]  # type: ignore[index]
    assert second.range.end.line == len(SCRATCH.split("\n")) - 1
    assert last == "last line"


async def test_a_card_without_headings_has_no_symbols(
    client: LanguageClient, shared_vault: Path
) -> None:
    uri = await open_doc(client, shared_vault / "scratch-plain.md", "Just prose, #tag.\n")
    assert await symbols(client, uri) == []
