"""Settings from camelCase keys, the host rules, and reading the model's JSON leniently."""

from __future__ import annotations

import pytest

from zettel_lsp.llm import LLM_KEYS, LLMError, LLMSettings, parse
from zettel_lsp.llm.expand import MAX_SUBQUERIES, parse_queries
from zettel_lsp.llm.jsonout import loads_lenient
from zettel_lsp.llm.rerank import parse_ratings
from zettel_lsp.ollama_client import OLLAMA_DEFAULT_HOST, ollama_url, resolve_ollama_host


def test_defaults_are_off_and_local() -> None:
    s = LLMSettings()
    assert not s.expand_query and not s.llm_rerank
    assert s.connect_timeout <= 2.0
    assert resolve_ollama_host(None, {}) == OLLAMA_DEFAULT_HOST == "http://127.0.0.1:11434"


def test_parse_camel_case_keys() -> None:
    raw = {
        "ollamaHost": "http://192.168.1.20:11434",
        "chatModel": "qwen2.5:7b",
        "embedModel": "mxbai-embed-large",
        "llmTimeout": 30,
        "llmConnectTimeout": 1.5,
        "temperature": 0,
        "maxContextChunks": 12,
        "contextWindow": 16384,
        "expandQuery": True,
        "llmRerank": True,
        "symbolLimit": 20,  # a server key: not ours, ignored without a problem
    }
    s, problems = parse(raw)
    assert problems == []
    assert s == LLMSettings(
        host="http://192.168.1.20:11434",
        chat_model="qwen2.5:7b",
        embed_model="mxbai-embed-large",
        timeout=30.0,
        connect_timeout=1.5,
        temperature=0.0,
        max_context_chunks=12,
        context_window=16384,
        expand_query=True,
        llm_rerank=True,
    )
    assert set(LLM_KEYS) == set(raw) - {"symbolLimit"}
    nested, _ = parse({"zettel": {"chatModel": "phi3"}})
    assert nested.chat_model == "phi3"


def test_bad_values_are_reported_and_keep_the_default() -> None:
    base = LLMSettings(chat_model="phi3", max_context_chunks=4)
    s, problems = parse(
        {"maxContextChunks": 0, "llmRerank": "yes", "temperature": 9, "chatModel": ""}, base
    )
    assert len(problems) == 4 and all("using the default" in p for p in problems)
    assert s.max_context_chunks == LLMSettings().max_context_chunks
    assert s.llm_rerank is False and s.chat_model == LLMSettings().chat_model
    assert parse("nope")[1] == ["settings must be an object, got str"]
    assert parse(None) == (LLMSettings(), [])
    assert parse({}, base) == (base, [])  # a missing key keeps the base's value


@pytest.mark.parametrize(
    ("setting", "env", "expected"),
    [
        ("http://10.0.0.5:11434", {}, "http://10.0.0.5:11434"),  # the user's own setting
        ("gpu-box", {"OLLAMA_HOST": "127.0.0.1:9999"}, "http://gpu-box:11434"),
        (None, {"OLLAMA_HOST": "127.0.0.1:9999"}, "http://127.0.0.1:9999"),
        (None, {"OLLAMA_HOST": "0.0.0.0"}, "http://127.0.0.1:11434"),  # a bind address
        (None, {"OLLAMA_HOST": "http://localhost:8080"}, "http://localhost:8080"),
        (None, {"OLLAMA_HOST": "[::1]:7000"}, "http://[::1]:7000"),
        (None, {"OLLAMA_HOST": "gpu-box.example.com:11434"}, OLLAMA_DEFAULT_HOST),  # remote
        (None, {"OLLAMA_HOST": "10.0.0.5"}, OLLAMA_DEFAULT_HOST),
        ("", {}, OLLAMA_DEFAULT_HOST),
    ],
)
def test_host_rules(setting: str | None, env: dict[str, str], expected: str) -> None:
    assert resolve_ollama_host(setting, env) == expected


def test_ollama_url_follows_the_client() -> None:
    assert ollama_url("example.com") == "http://example.com:11434"
    assert ollama_url("https://example.com") == "https://example.com:443"
    assert ollama_url(":1234") == "http://127.0.0.1:1234"


def test_loads_lenient() -> None:
    assert loads_lenient('{"a": 1}') == {"a": 1}
    assert loads_lenient('Sure! ```json\n{"a": [1, 2]}\n``` Hope it helps.') == {"a": [1, 2]}
    assert loads_lenient('Here you go: {"a": 1} and some more {') == {"a": 1}
    assert loads_lenient("[1, 2] trailing") == [1, 2]
    assert loads_lenient("I cannot do that.") is None
    assert loads_lenient("") is None


def test_parse_queries() -> None:
    q = "integrated circuits and iPhones"
    assert parse_queries('{"queries": ["integrated circuits", "iPhones"]}', q) == [
        "integrated circuits",
        "iPhones",
    ]
    assert parse_queries('["Integrated  circuits", "integrated circuits", "iPhones"]', q) == [
        "Integrated circuits",
        "iPhones",
    ]
    assert parse_queries('{"sub_queries": [{"query": "chips"}, 3, null]}', q) == ["chips"]
    assert parse_queries('{"rewritten": "microchips"}', q) == ["microchips"]
    assert parse_queries('{"queries": ["integrated circuits and iPhones"]}', q) == []
    many = '{"queries": [' + ", ".join(f'"q{i}"' for i in range(10)) + "]}"
    assert len(parse_queries(many, q)) == MAX_SUBQUERIES
    with pytest.raises(LLMError, match="did not answer in JSON"):
        parse_queries("You could search for integrated circuits, and for iPhones.", q)
    with pytest.raises(LLMError, match="held no queries"):
        parse_queries('{"answer": 42}', q)


def test_parse_ratings() -> None:
    assert parse_ratings('{"ratings": [{"id": 1, "rating": 3}, {"id": 2, "rating": 0}]}', 2) == {
        0: 3.0,
        1: 0.0,
    }
    assert parse_ratings('{"ratings": [2, "1", 7]}', 3) == {0: 2.0, 1: 1.0, 2: 3.0}  # clamped
    assert parse_ratings('{"1": 3, "3": 1, "9": 2}', 3) == {0: 3.0, 2: 1.0}
    assert parse_ratings('[{"note": "[2]", "score": 2.5}, {"id": 1, "relevance": 1}]', 2) == {
        1: 2.5,
        0: 1.0,
    }
    for bad in ("not json at all", '{"ratings": "all good"}', '{"ratings": [{"id": 1}]}', "[]"):
        with pytest.raises(LLMError, match="malformed"):
            parse_ratings(bad, 4)
