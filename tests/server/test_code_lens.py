"""textDocument/codeLens: "N backlinks" and "M unlinked mentions" on a card's title line; the
first shows the backlinks as references, the second (resolved lazily) runs zettel.suggestLinks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import open_doc
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    got = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert got is not None and len(got) == 2
    # both clients resolve a lens without a command (VS Code when shown, Neovim before display)
    return [
        lens if lens.command is not None else await client.code_lens_resolve_async(lens)
        for lens in got
    ]


async def suggested_mentions(client: LanguageClient, uri: str) -> int:
    got: Any = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.suggestLinks", arguments=[{"uri": uri}])
    )
    return len(got["unlinked_mentions"])


async def test_counts_on_the_title_line(client: LanguageClient, shared_vault: Path) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    backlinks, mentions = await lenses(client, uri)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[backlinks.range.start.line] == "# BM25"
    assert mentions.range == backlinks.range
    cards, _ = load_vault(shared_vault)
    n = len(LinkGraph.build(cards).backlinks("retrieval/BM25.md"))
    assert n >= 4
    assert backlinks.command is not None and backlinks.command.title == f"{n} backlinks"
    m = await suggested_mentions(client, uri)
    assert m >= 2
    assert mentions.command is not None and mentions.command.title == f"{m} unlinked mentions"
    assert mentions.command.command == "zettel.suggestLinks"
    assert list(mentions.command.arguments or []) == [{"uri": uri}]


async def test_the_backlinks_lens_carries_the_references(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "retrieval" / "BM25.md"
    uri = await open_doc(client, path)
    backlinks, _ = await lenses(client, uri)
    cmd = backlinks.command
    assert cmd is not None and cmd.command == "zettel.showReferences"
    assert cmd.arguments is not None
    at_uri, position, locations = cmd.arguments
    assert at_uri == uri and position == {"line": backlinks.range.start.line, "character": 0}
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=backlinks.range.start.line, character=2),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert refs
    want = [
        {
            "uri": r.uri,
            "range": {
                "start": {"line": r.range.start.line, "character": r.range.start.character},
                "end": {"line": r.range.end.line, "character": r.range.end.character},
            },
        }
        for r in refs
    ]
    assert list(locations) == want


async def test_unsaved_text_and_singular(client: LanguageClient, shared_vault: Path) -> None:
    text = (
        "# Scratch lens\n\nBulk fermentation and Autolyse, named but not linked.\nAutolyse again.\n"
    )
    uri = await open_doc(client, shared_vault / "baking" / "scratch-lens.md", text)
    backlinks, mentions = await lenses(client, uri)
    assert backlinks.range.start.line == 0
    assert backlinks.command is not None and backlinks.command.title == "0 backlinks"
    assert backlinks.command.arguments is not None and list(backlinks.command.arguments[2]) == []
    m = await suggested_mentions(client, uri)
    assert m == 3  # every mention counts, Autolyse twice
    assert mentions.command is not None and mentions.command.title == "3 unlinked mentions"
    uri = await open_doc(
        client, shared_vault / "baking" / "scratch-lens-2.md", "no heading, just Autolyse\n"
    )
    backlinks, mentions = await lenses(client, uri)
    assert backlinks.range.start.line == 0
    assert mentions.command is not None and mentions.command.title == "1 unlinked mention"
