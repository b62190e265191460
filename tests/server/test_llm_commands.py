"""zettel.ask, LLM search steps and Ollama status through the real server, against a local
stand-in of the Ollama HTTP API (no Ollama server can run in the tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from tests.llm.stub import OllamaStub, free_port
from tests.server.conftest import CLIENTS, SERVER, options, start_session, wait_ready


@pytest.fixture(params=["answering", "absent"])
def host(request: pytest.FixtureRequest, stub: OllamaStub) -> str:
    return stub.url if request.param == "answering" else f"http://127.0.0.1:{free_port()}"


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    shared_vault: Path,
    server_cache: Path,
    host: str,
):
    deltas: list[dict[str, Any]] = []
    lsp_client.deltas = deltas  # type: ignore[attr-defined]

    @lsp_client.feature("zettel/askDelta")
    def on_delta(params: Any) -> None:
        deltas.append({"token": params.token, "delta": params.delta})

    init = options(server_cache, shared_vault.parent / "index", ollamaHost=host, llmRerank=True)
    await start_session(lsp_client, request.param, shared_vault, init)
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def run(client: LanguageClient, command: str, arg: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[arg])
    )


async def test_ask_answers_with_sources_or_falls_back(
    client: LanguageClient, host: str, stub: OllamaStub
) -> None:
    question = "how does reciprocal rank fusion combine result lists"
    got = await run(client, "zettel.ask", {"question": question, "token": "t1"})
    sources = got["sources"]
    assert sources, got
    assert sources[0]["path"] == "retrieval/Reciprocal rank fusion.md"
    for s in sources:
        assert set(s) >= {"path", "uri", "title", "chunk", "line_start", "line_end", "score"}
        assert len(s["excerpt"]) <= 200
    if host == stub.url:
        assert got["fallback"] is None
        assert got["answer"].startswith("According to [Reciprocal rank fusion]")
        assert got["model"].startswith("llama3.2")
        streamed = "".join(d["delta"] for d in client.deltas if d["token"] == "t1")  # type: ignore[attr-defined]
        assert streamed == got["answer"]
    else:
        assert got["answer"] == "" and "Ollama" in got["fallback"]
        again = await run(client, "zettel.ask", {"question": question})
        assert again["fallback"] == got["fallback"]
        shown = [m for m in client.messages if "Ollama" in m.message]
        assert len(shown) == 1  # told once, not on every request


async def test_llm_rerank_or_plain_results(
    client: LanguageClient, host: str, stub: OllamaStub
) -> None:
    got = await run(client, "zettel.search", {"query": "fusing ranked lists", "limit": 5})
    assert got["results"][0]["path"] == "retrieval/Reciprocal rank fusion.md"
    if host == stub.url:
        assert stub.bodies("/api/chat"), "the rerank did not ask the model"
        assert got["note"] == ""
    else:
        assert "Ollama" in got["note"]
    # workspace/symbol never waits for an LLM
    before = len(stub.requests)
    await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="fusing ranked lists"))
    assert len(stub.requests) == before


async def test_status_reports_ollama(client: LanguageClient, host: str, stub: OllamaStub) -> None:
    st = await run(client, "zettel.status", {"ollama": True})
    ollama = st["ollama"]
    if host == stub.url:
        assert ollama["reachable"] is True
        assert "llama3.2:latest" in ollama["models"]
    else:
        assert ollama["reachable"] is False and ollama["message"]


@pytest.mark.parametrize("kind", ["visual_studio_code"])
async def test_cancelling_an_ask_stops_the_stream(
    kind: str, stub: OllamaStub, shared_vault: Path, server_cache: Path
) -> None:
    stub.token_delay = 0.05  # a slow model: a long answer takes seconds
    stub.answer_chat = lambda body: " ".join(["word"] * 200)
    client = await SERVER.start()
    deltas: list[str] = []

    @client.feature("zettel/askDelta")
    def on_delta(params: Any) -> None:
        deltas.append(params.delta)

    try:
        init = options(server_cache, shared_vault.parent / "index", ollamaHost=stub.url)
        await start_session(client, kind, shared_vault, init)
        await wait_ready(client)
        pending = asyncio.ensure_future(
            client.protocol.send_request_async(
                types.WORKSPACE_EXECUTE_COMMAND,
                types.ExecuteCommandParams(
                    command="zettel.ask", arguments=[{"question": "what is BM25", "token": "c"}]
                ),
                msg_id="ask-1",
            )
        )
        deadline = asyncio.get_running_loop().time() + 30
        while len(deltas) < 3:
            assert asyncio.get_running_loop().time() < deadline, "no streaming"
            await asyncio.sleep(0.02)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="ask-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await pending
        await asyncio.sleep(0.5)  # anything still in flight arrives
        settled = len(deltas)
        await asyncio.sleep(1.0)
        assert len(deltas) == settled  # the stream stopped
        assert settled < 100  # far from the 200-word answer
        # and the server answers the next request
        st = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="zettel.status", arguments=[])
        )
        assert st["vaults"][0]["phase"] == "ready"
    finally:
        await client.shutdown_session()
        await client.stop()
