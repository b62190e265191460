"""The Ollama wrapper against the stand-in server: answers, status, errors, cancellation."""

from __future__ import annotations

import threading
import time

import pytest

from tests.llm.conftest import make_llm
from tests.llm.stub import OllamaStub, StubModel, free_port
from zettel_lsp.llm import LLMCancelled, LLMError, LLMUnavailable
from zettel_lsp.llm.client import DEFAULT_CONTEXT_LENGTH

HELLO = [{"role": "user", "content": "Say hello"}]


def test_chat_stream_yields_the_answer_in_pieces(stub: OllamaStub) -> None:
    stub.answer_chat = lambda body: "Hello there, reader of notes."
    llm = make_llm(stub.url)
    pieces = list(llm.chat_stream(HELLO))
    assert len(pieces) > 1
    assert "".join(pieces) == "Hello there, reader of notes."
    body = stub.bodies("/api/chat")[0]
    assert body["model"] == "llama3.2" and body["stream"] is True
    assert body["options"]["temperature"] == 0.2


def test_chat_non_streaming_and_json_format(stub: OllamaStub) -> None:
    stub.answer_chat = lambda body: '{"ok": true}'
    llm = make_llm(stub.url, temperature=0.7)
    assert llm.chat(HELLO, format="json") == '{"ok": true}'
    body = stub.bodies("/api/chat")[0]
    assert body["stream"] is False and body["format"] == "json"
    assert body["options"]["temperature"] == 0.7


def test_status_lists_models_and_is_cached(stub: OllamaStub) -> None:
    llm = make_llm(stub.url, chat_model="llama3.2", embed_model="nomic-embed-text")
    s = llm.status()
    assert s["reachable"] is True and s["host"] == stub.url and s["message"] is None
    assert "llama3.2:latest" in s["models"] and "nomic-embed-text:latest" in s["models"]
    assert s["chat_model_available"] and s["embed_model_available"]
    llm.status()
    assert stub.paths().count("/api/tags") == 1  # cached
    llm.status(refresh=True)
    assert stub.paths().count("/api/tags") == 2


def test_status_names_a_missing_chat_model(stub: OllamaStub) -> None:
    s = make_llm(stub.url, chat_model="mistral").status()
    assert s["reachable"] and not s["chat_model_available"]
    assert "ollama pull mistral" in s["message"]


def test_status_without_a_server_is_quick_and_says_so() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    s = make_llm(url).status()
    assert time.monotonic() - t0 < 2.0
    assert s["reachable"] is False and s["models"] == []
    assert "not reachable" in s["message"] and url in s["message"]


def test_context_window_from_model_info(stub: OllamaStub) -> None:
    stub.models["small:latest"] = StubModel("qwen2", 2048)
    stub.models["nolength:latest"] = StubModel("phi3", None)
    assert make_llm(stub.url).context_length() == 131072
    assert make_llm(stub.url).context_window() == 8192  # capped by the setting
    assert make_llm(stub.url, context_window=65536).context_window() == 65536
    assert make_llm(stub.url, chat_model="small").context_window() == 2048
    assert make_llm(stub.url, chat_model="nolength").context_window() == DEFAULT_CONTEXT_LENGTH
    llm = make_llm(stub.url)
    llm.context_window()
    llm.context_window()
    assert len(stub.bodies("/api/show")) == 6  # once per client and model


def test_embed(stub: OllamaStub) -> None:
    vectors = make_llm(stub.url).embed(["one text", "another text"])
    assert len(vectors) == 2 and all(len(v) == 64 for v in vectors)
    assert stub.bodies("/api/embed")[0]["model"] == "nomic-embed-text"


def test_refused_connection_is_unavailable_at_once() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    llm = make_llm(url)
    t0 = time.monotonic()
    for call in (
        lambda: list(llm.chat_stream(HELLO)),
        lambda: llm.chat(HELLO),
        lambda: llm.embed(["x"]),
        lambda: llm.context_window(),
    ):
        with pytest.raises(LLMUnavailable) as info:
            call()
        assert "not reachable" in info.value.message and url in info.value.message
        assert "\n" not in info.value.message
    assert time.monotonic() - t0 < 3.0


def test_unknown_model_is_unavailable_with_a_hint(stub: OllamaStub) -> None:
    llm = make_llm(stub.url, chat_model="no-such-model")
    for call in (lambda: list(llm.chat_stream(HELLO)), lambda: llm.context_window()):
        with pytest.raises(LLMUnavailable) as info:
            call()
        assert "model 'no-such-model' not found" in info.value.message
        assert "ollama pull no-such-model" in info.value.message


def test_a_silent_server_times_out(stub: OllamaStub) -> None:
    stub.delay = 5.0
    llm = make_llm(stub.url, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"did not answer within 0.5 s"):
        llm.chat(HELLO)
    with pytest.raises(LLMUnavailable, match=r"did not answer within 0.5 s"):
        list(llm.chat_stream(HELLO))
    assert time.monotonic() - t0 < 3.0


def test_a_stream_that_stalls_times_out(stub: OllamaStub) -> None:
    stub.stall_after = 2
    llm = make_llm(stub.url, timeout=0.5)
    got: list[str] = []
    with pytest.raises(LLMUnavailable, match="did not answer"):
        got.extend(llm.chat_stream(HELLO))
    assert len(got) == 2  # what arrived before the silence


def test_garbage_in_the_stream_is_a_malformed_answer(stub: OllamaStub) -> None:
    stub.garbage_after = 3
    got: list[str] = []
    with pytest.raises(LLMError, match="malformed answer") as info:
        got.extend(make_llm(stub.url).chat_stream(HELLO))
    assert not isinstance(info.value, LLMUnavailable)
    assert len(got) == 3


def test_server_errors_are_llm_errors(stub: OllamaStub) -> None:
    stub.error_after = 2
    got: list[str] = []
    with pytest.raises(LLMError) as info:
        got.extend(make_llm(stub.url).chat_stream(HELLO))
    assert info.value.message == (
        f"Ollama at {stub.url} answered with an error: "
        "an error was encountered while running the model"
    )
    assert not isinstance(info.value, LLMUnavailable) and len(got) == 2
    stub.fail_status = 500
    with pytest.raises(LLMError) as info:
        make_llm(stub.url).chat(HELLO)
    assert info.value.message == (
        f"Ollama at {stub.url} answered with an error: "
        "llama runner process has terminated (HTTP 500)"
    )


def test_cancel_stops_a_slow_stream(stub: OllamaStub) -> None:
    stub.answer_chat = lambda body: "word " * 200
    stub.token_delay = 0.05
    cancel = threading.Event()
    got: list[str] = []
    t0 = time.monotonic()
    for piece in make_llm(stub.url).chat_stream(HELLO, cancel):
        got.append(piece)
        if len(got) == 3:
            cancel.set()
    assert len(got) == 3
    assert time.monotonic() - t0 < 2.0  # the full answer takes 10 s


def test_cancel_returns_while_the_server_is_silent(stub: OllamaStub) -> None:
    """The read timeout is 30 s; a callable cancel still ends the stream at once."""
    stub.stall_after = 1
    deadline = time.monotonic() + 0.5
    llm = make_llm(stub.url, timeout=30.0)
    t0 = time.monotonic()
    got = list(llm.chat_stream(HELLO, lambda: time.monotonic() > deadline))
    assert len(got) == 1
    assert time.monotonic() - t0 < 1.5


def test_cancel_a_non_streaming_call(stub: OllamaStub) -> None:
    stub.delay = 10.0
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    with pytest.raises(LLMCancelled):
        make_llm(stub.url, timeout=30.0).chat(HELLO, cancel)
    assert time.monotonic() - t0 < 1.5


def test_first_time_reports_a_message_once(stub: OllamaStub) -> None:
    llm = make_llm(stub.url)
    assert llm.first_time("Ollama is down") is True
    assert llm.first_time("Ollama is down") is False
    assert llm.first_time("another problem") is True
