"""Ask on the real search stack: answer, sources, context size, fallbacks, cancellation."""

from __future__ import annotations

import math
import re
import threading
import time

from tests.llm.conftest import make_llm
from tests.llm.stub import OllamaStub, StubModel, free_port
from zettel_lsp.llm import ask
from zettel_lsp.llm.ask import estimate_tokens
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.vault import Vault

QUESTION = "How does reciprocal rank fusion combine rankings?"
RRF = "retrieval/Reciprocal rank fusion.md"
SOURCE_KEYS = {"path", "title", "chunk", "line_start", "line_end", "score", "excerpt"}
SOURCE_KEYS |= {"heading", "excerpt_text"}  # issue #14: as zettel.search rows


def notes_in_prompt(stub: OllamaStub) -> list[str]:
    user = stub.bodies("/api/chat")[-1]["messages"][-1]["content"]
    return re.findall(r"^Note \d+: \[(.+?)\]$", user, re.MULTILINE)


def test_answer_with_sources(vault: Vault, stub: OllamaStub) -> None:
    deltas: list[str] = []
    result = ask(vault.engine, make_llm(stub.url), QUESTION, on_delta=deltas.append)
    assert result.fallback is None and not result.cancelled
    assert result.answer == "According to [Reciprocal rank fusion], the notes answer the question."
    assert "".join(deltas) == result.answer and len(deltas) > 1  # streamed
    assert result.model == "llama3.2"
    # 45 cards: ceil(sqrt(45)) = 7 chunks, under the default cap of 8 and the window
    assert result.context_chunks == len(result.sources) == math.ceil(math.sqrt(45)) == 7
    assert result.sources[0]["path"] == RRF
    for src in result.sources:
        assert set(src) == SOURCE_KEYS
        assert "[[" not in src["excerpt_text"] and "]]" not in src["excerpt_text"]
        assert 0 < len(src["excerpt"]) <= 200
        assert 0 <= src["line_start"] <= src["line_end"] and src["chunk"] >= 0
        assert src["score"] > 0
    scores = [s["score"] for s in result.sources]
    assert scores == sorted(scores, reverse=True)
    # the prompt: instructions, the sources in order (by title), the question
    body = stub.bodies("/api/chat")[0]
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "Cite each note you use by its title" in system
    assert "If the notes do not contain the answer, say so" in system
    assert notes_in_prompt(stub) == [s["title"] for s in result.sources]
    assert user.endswith(f"Question: {QUESTION}")
    assert body["options"]["num_ctx"] == 8192  # llama3.2's 131072 capped by contextWindow
    assert stub.paths() == ["/api/show", "/api/chat"]  # no expansion, no rerank


def test_the_setting_caps_the_context(vault: Vault, stub: OllamaStub) -> None:
    result = ask(vault.engine, make_llm(stub.url, max_context_chunks=3), QUESTION)
    assert result.context_chunks == 3 and len(notes_in_prompt(stub)) == 3


def test_a_small_context_window_takes_fewer_chunks(vault: Vault, stub: OllamaStub) -> None:
    stub.models["tiny:latest"] = StubModel("gemma", 1024)
    result = ask(vault.engine, make_llm(stub.url, chat_model="tiny"), QUESTION)
    assert result.fallback is None
    assert 1 <= result.context_chunks < 7
    body = stub.bodies("/api/chat")[0]
    assert body["options"]["num_ctx"] == 1024
    prompt = "".join(m["content"] for m in body["messages"])
    assert estimate_tokens(prompt) <= 1024 - 256  # room for the answer
    assert result.sources[0]["path"] == RRF


def test_no_server_gives_the_retrieved_cards(vault: Vault) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    result = ask(vault.engine, make_llm(url), QUESTION)
    assert time.monotonic() - t0 < 3.0
    assert result.answer == "" and result.context_chunks == 0
    assert result.fallback is not None and "\n" not in result.fallback
    assert result.fallback.startswith(f"Ollama at {url} is not reachable")
    expected = [r.path for r in vault.engine.search(QUESTION)][:7]
    assert [s["path"] for s in result.sources] == expected
    assert all(set(s) == SOURCE_KEYS for s in result.sources)


def test_unknown_model(vault: Vault, stub: OllamaStub) -> None:
    result = ask(vault.engine, make_llm(stub.url, chat_model="llama9"), QUESTION)
    assert result.answer == "" and result.sources[0]["path"] == RRF
    assert result.fallback == (
        f"Ollama at {stub.url}: model 'llama9' not found; pull it with 'ollama pull llama9'"
    )


def test_timeout(vault: Vault, stub: OllamaStub) -> None:
    stub.delay = 5.0
    t0 = time.monotonic()
    result = ask(vault.engine, make_llm(stub.url, timeout=0.5), QUESTION)
    assert time.monotonic() - t0 < 3.0
    assert result.answer == "" and len(result.sources) == 7
    assert result.fallback == f"Ollama at {stub.url} did not answer within 0.5 s (llmTimeout)"


def test_a_broken_stream_keeps_what_arrived(vault: Vault, stub: OllamaStub) -> None:
    stub.garbage_after = 2
    deltas: list[str] = []
    result = ask(vault.engine, make_llm(stub.url), QUESTION, on_delta=deltas.append)
    assert result.answer == "".join(deltas) == "According to "
    assert result.fallback is not None
    assert result.fallback.startswith("the answer was cut off: ")
    assert "malformed answer" in result.fallback
    assert result.context_chunks == len(result.sources) == 7


def test_cancel_stops_the_answer(vault: Vault, stub: OllamaStub) -> None:
    stub.answer_chat = lambda body: "word " * 400
    stub.token_delay = 0.05  # 20 s for the whole answer
    cancel = threading.Event()
    deltas: list[str] = []

    def on_delta(piece: str) -> None:
        deltas.append(piece)
        if len(deltas) == 3:
            cancel.set()

    t0 = time.monotonic()
    result = ask(vault.engine, make_llm(stub.url), QUESTION, on_delta=on_delta, cancel=cancel)
    assert time.monotonic() - t0 < 3.0
    assert result.cancelled and result.fallback is None
    assert result.answer == "word word word "
    assert len(result.sources) == 7


def test_cancel_while_the_model_is_silent(vault: Vault, stub: OllamaStub) -> None:
    stub.stall_after = 0
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    result = ask(vault.engine, make_llm(stub.url, timeout=30.0), QUESTION, cancel=cancel)
    assert time.monotonic() - t0 < 2.0
    assert result.cancelled and result.answer == "" and result.fallback is None


def test_empty_question_and_no_match(vault: Vault, stub: OllamaStub) -> None:
    llm = make_llm(stub.url)
    result = ask(vault.engine, llm, "  ")
    assert result.answer == "" and result.sources == [] and result.fallback is None
    result = ask(vault.engine, llm, "qwxzzy", options=SearchOptions(legs=("bm25", "keyword")))
    assert result.sources == [] and result.messages
    assert stub.requests == []


def test_expansion_and_rerank_settings_are_used(vault: Vault, stub: OllamaStub) -> None:
    stub.answer_expand = lambda body: "I would search for RRF."  # prose: expansion skipped
    llm = make_llm(stub.url, expand_query=True, llm_rerank=True)
    result = ask(vault.engine, llm, QUESTION)
    assert result.fallback is None and result.answer
    assert result.messages == ["query expansion skipped: the model did not answer in JSON"]
    chats = stub.bodies("/api/chat")
    systems = [b["messages"][0]["content"] for b in chats]
    assert "better search queries" in systems[0] and "You judge search results" in systems[1]
    assert {b["options"]["num_ctx"] for b in chats} == {8192}  # one window: no model reload
    assert [b["options"]["temperature"] for b in chats] == [0.0, 0.0, 0.2]
    assert result.sources[0]["path"] == RRF
