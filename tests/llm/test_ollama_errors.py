"""The one Ollama error map (zettel_lsp.ollama_client), shared by the LLM features and the
index's ``ollama:`` models: each failure, classified once, in the words each caller uses."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import ollama
import pytest

from tests.llm.conftest import make_llm
from tests.llm.stub import OllamaStub, free_port
from zettel_lsp.index.embedders import EmbedderError, make_embedder
from zettel_lsp.llm import LLMError, LLMUnavailable
from zettel_lsp.ollama_client import (
    Failure,
    OllamaError,
    OllamaHttp,
    OllamaSettings,
    classify,
)

HOST = "http://127.0.0.1:9"
SETTINGS = OllamaSettings(HOST, connect_timeout=2.0, timeout=60.0)
REQUEST = httpx.Request("POST", f"{HOST}/api/embed")


@pytest.mark.parametrize(
    ("exc", "kind", "detail"),
    [
        (
            ollama.ResponseError("model 'x' not found", 404),
            Failure.NOT_FOUND,
            "model 'x' not found",
        ),
        (ollama.ResponseError("boom\n  again", 500), Failure.SERVER_ERROR, "boom again"),
        (httpx.ConnectTimeout("slow", request=REQUEST), Failure.CONNECT_TIMEOUT, ""),
        (httpx.ReadTimeout("silent", request=REQUEST), Failure.READ_TIMEOUT, ""),
        (httpx.ConnectError("refused", request=REQUEST), Failure.UNREACHABLE, ""),
        (ConnectionRefusedError(111, "refused"), Failure.UNREACHABLE, ""),
        (
            httpx.RemoteProtocolError("closed", request=REQUEST),
            Failure.TRANSPORT,
            "RemoteProtocolError: closed",
        ),
        (json.JSONDecodeError("bad", "<html>", 0), Failure.MALFORMED, "JSONDecodeError"),
        (RuntimeError("bug"), Failure.OTHER, "RuntimeError: bug"),
    ],
)
def test_classify(exc: BaseException, kind: Failure, detail: str) -> None:
    failure = classify(exc)
    assert (failure.kind, failure.detail) == (kind, detail)
    assert classify(failure) is failure


@pytest.mark.parametrize(
    ("failure", "llm", "index"),
    [
        (
            OllamaError(Failure.NOT_FOUND, "model 'm:latest' not found", 404),
            f"Ollama at {HOST}: model 'm:latest' not found; pull it with 'ollama pull m:latest'",
            f"embedding model 'ollama:m:latest' at {HOST}: model 'm:latest' not found; "
            "pull it with 'ollama pull m:latest'",
        ),
        (
            OllamaError(Failure.SERVER_ERROR, "runner died", 500),
            f"Ollama at {HOST} answered with an error: runner died (HTTP 500)",
            f"embedding model 'ollama:m:latest' at {HOST}: runner died (HTTP 500)",
        ),
        (
            OllamaError(Failure.CONNECT_TIMEOUT),
            f"Ollama at {HOST} did not accept a connection within 2 s",
            f"embedding model 'ollama:m:latest' at {HOST}: no connection within 2 s; "
            "start Ollama ('ollama serve') or choose another model",
        ),
        (
            OllamaError(Failure.READ_TIMEOUT),
            f"Ollama at {HOST} did not answer within 60 s (llmTimeout)",
            f"embedding model 'ollama:m:latest' at {HOST}: no answer within 60 s; "
            "start Ollama ('ollama serve') or choose another model",
        ),
        (
            OllamaError(Failure.UNREACHABLE),
            f"Ollama at {HOST} is not reachable; start it with 'ollama serve' or set ollamaHost",
            f"embedding model 'ollama:m:latest' at {HOST}: not reachable; "
            "start Ollama ('ollama serve') or choose another model",
        ),
        (
            OllamaError(Failure.MALFORMED, "JSONDecodeError"),
            f"Ollama at {HOST} sent a malformed answer (JSONDecodeError)",
            f"embedding model 'ollama:m:latest' at {HOST}: malformed answer (JSONDecodeError)",
        ),
    ],
)
def test_one_map_in_the_words_of_each_caller(failure: OllamaError, llm: str, index: str) -> None:
    http = OllamaHttp(SETTINGS)
    assert http.host == HOST
    assert http.message(failure, "m:latest") == llm
    assert http.message(failure, "m:latest", embedding_model="ollama:m:latest") == index


def test_embed_answers_are_checked(stub: OllamaStub) -> None:
    http = OllamaHttp(OllamaSettings(stub.url, timeout=5.0))
    assert [len(v) for v in http.embed("nomic-embed-text", ["a", "b"])] == [64, 64]
    assert http.embed("nomic-embed-text", []) == []
    with pytest.raises(OllamaError) as info:
        http.embed("nope", ["a"])
    assert info.value.kind is Failure.NOT_FOUND
    http.close()


def test_both_callers_share_the_client_and_the_map(cache_dir: Path) -> None:
    """The same refused connection, through the LLM client and through an index embedder."""
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(LLMUnavailable) as llm_info:
        make_llm(url).embed(["x"])
    assert llm_info.value.message == (
        f"Ollama at {url} is not reachable; start it with 'ollama serve' or set ollamaHost"
    )
    embedder = make_embedder(
        "ollama:nomic-embed-text", cache_dir=cache_dir, ollama=OllamaSettings(url)
    )
    with pytest.raises(EmbedderError) as index_info:
        embedder.embed_query("x")
    assert str(index_info.value) == (
        f"embedding model 'ollama:nomic-embed-text:latest' at {url}: not reachable; "
        "start Ollama ('ollama serve') or choose another model"
    )


def test_settings_are_passed_not_global(stub: OllamaStub, cache_dir: Path) -> None:
    """Two embedders in one process, each with its own host: nothing leaks between them."""
    dead = f"http://127.0.0.1:{free_port()}"
    up = make_embedder("ollama:other-embed", cache_dir=cache_dir, ollama=OllamaSettings(stub.url))
    down = make_embedder("ollama:other-embed", cache_dir=cache_dir, ollama=OllamaSettings(dead))
    assert up.embed_query("sourdough").shape == (32,)
    with pytest.raises(EmbedderError, match="not reachable"):
        down.embed_query("sourdough")
    assert up.embed_query("levain").shape == (32,)


def test_a_server_error_is_an_llm_error_not_unavailable(stub: OllamaStub) -> None:
    llm = make_llm(stub.url)
    with pytest.raises(LLMError) as info:
        llm.embed(["x"], model="llama3.2")  # the stub says: no embeddings (HTTP 400)
    assert not isinstance(info.value, LLMUnavailable)
    assert "does not support embeddings (HTTP 400)" in info.value.message
