"""workspace/symbol: the hybrid + graph pipeline over the real server, results as cards."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert isinstance(result, list)
    return result  # type: ignore[return-value]


async def test_known_query_puts_the_card_first(client: LanguageClient, shared_vault: Path) -> None:
    got = await symbols(client, "fusing ranked lists from BM25 and embeddings")
    assert got, "no results"
    first = got[0]
    assert first.name == "Reciprocal rank fusion"
    assert first.container_name == "retrieval"
    assert first.location.uri == (shared_vault / "retrieval" / "Reciprocal rank fusion.md").as_uri()
    rng = first.location.range
    assert rng.start.character == 0 and rng.end.line > rng.start.line


async def test_about_beats_mentions(client: LanguageClient) -> None:
    # hubs list the title; the card about it must come first
    got = await symbols(client, "maps of content")
    assert got[0].name == "Maps of Content"


async def test_empty_query_returns_most_linked_cards(client: LanguageClient) -> None:
    got = await symbols(client, "")
    assert 0 < len(got) <= 20
    assert all(s.location.uri.endswith(".md") for s in got)


async def test_cancelled_requests_leave_the_server_answering(client: LanguageClient) -> None:
    # an editor cancels the previous query each time the user types another character
    queries = ["f", "fu", "fus", "fusi", "fusin", "fusing ranked lists from BM25 and embeddings"]
    futures = []
    for i, q in enumerate(queries):
        futures.append(
            asyncio.ensure_future(
                client.protocol.send_request_async(
                    types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=q), msg_id=f"q{i}"
                )
            )
        )
        await asyncio.sleep(0)  # let the request go out before its cancel
        if i:
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=f"q{i - 1}"))
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    last = outcomes[-1]
    assert isinstance(last, list) and last[0].name == "Reciprocal rank fusion"
    for o in outcomes[:-1]:  # answered before the cancel arrived, or cancelled
        assert isinstance(o, list | JsonRpcRequestCancelled), o
    again = await symbols(client, "fusing ranked lists from BM25 and embeddings")
    assert again[0].name == "Reciprocal rank fusion"
