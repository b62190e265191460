"""Query expansion and LLM rerank on the real search stack (a real index of examples/vault)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.llm.conftest import make_llm
from tests.llm.stub import OllamaStub, free_port
from zettel_lsp.llm import search_llm
from zettel_lsp.llm.search import fused_candidates
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.vault import Vault

RRF = "retrieval/Reciprocal rank fusion.md"
LISTS = {"Related reading.md", "Information retrieval index.md", "retrieval/Overview.md"}


def paths(results: Any) -> list[str]:
    return [r.path for r in results]


def test_off_means_plain_search_and_no_request(vault: Vault, stub: OllamaStub) -> None:
    llm = make_llm(stub.url)
    for q in ("Reciprocal rank fusion", "how long should bulk fermentation take", ""):
        results, messages = search_llm(vault.engine, llm, q, SearchOptions())
        assert paths(results) == paths(vault.engine.search(q)) and messages == []
    assert stub.requests == []


def test_expansion_splits_a_two_topic_query(vault: Vault, stub: OllamaStub) -> None:
    """The stand-in splits on 'and'; each part runs through every leg and the search's fusion
    joins them."""
    q = "shaping and tf-idf"
    plain = paths(vault.engine.search(q))
    # Precondition that makes this case worth testing: plain search misses Shaping in its top 2
    # (TF-IDF's neighbours, BM25 and cosine similarity, come second and third).
    assert "baking/Shaping.md" not in plain[:2]
    results, messages = search_llm(
        vault.engine, make_llm(stub.url), q, SearchOptions(), expand=True
    )
    assert messages == []
    assert set(paths(results)[:2]) == {"baking/Shaping.md", "retrieval/TF-IDF.md"}
    legs = {leg for r in results for leg in r.legs}
    assert {"dense", "bm25", "q1:dense", "q1:title", "q2:bm25", "q2:title"} <= legs
    body = stub.bodies("/api/chat")[0]
    assert body["format"] == "json" and body["stream"] is False
    assert q in body["messages"][-1]["content"]


def test_expansion_with_prose_falls_back(vault: Vault, stub: OllamaStub) -> None:
    stub.answer_expand = lambda body: "Sure! You could search for levain, and for indexes."
    q = "levain and inverted index"
    results, messages = search_llm(
        vault.engine, make_llm(stub.url), q, SearchOptions(), expand=True
    )
    assert paths(results) == paths(vault.engine.search(q))
    assert messages == ["query expansion skipped: the model did not answer in JSON"]


def test_no_server_falls_back_at_once(vault: Vault) -> None:
    llm = make_llm(f"http://127.0.0.1:{free_port()}")
    q = "Reciprocal rank fusion"
    t0 = time.monotonic()
    results, messages = search_llm(vault.engine, llm, q, SearchOptions(), expand=True, rerank=True)
    assert time.monotonic() - t0 < 3.0
    assert paths(results) == paths(vault.engine.search(q))
    assert len(messages) == 2
    assert messages[0].startswith("query expansion skipped: Ollama at http://127.0.0.1:")
    assert messages[1].startswith("LLM rerank skipped: ") and "not reachable" in messages[1]


def naive_rating(body: dict[str, Any]) -> str:
    """A naive judge: a note that shows the query's title as a link is 'exactly about it'."""
    user = body["messages"][-1]["content"]
    notes = re.findall(r"^\[(\d+)\] (.*)$", user, re.MULTILINE)
    return json.dumps(
        {
            "ratings": [
                {"id": int(n), "rating": 3 if "[[Reciprocal rank fusion" in line else 0}
                for n, line in notes
            ]
        }
    )


def test_llm_rerank_then_graph_rerank_keeps_the_topic_card_first(
    vault: Vault, stub: OllamaStub
) -> None:
    stub.answer_rerank = naive_rating
    llm = make_llm(stub.url)
    q = "Reciprocal rank fusion"
    # (the query is the card's title, so exact-title-first alone would put it first: switched off
    # here to show what the graph rerank does)
    # Without the graph rerank, the naive ratings promote the cards that list the title...
    plain = SearchOptions(graph=False, exact_title_first=False)
    naive, messages = search_llm(vault.engine, llm, q, plain, rerank=True)
    assert messages == []
    top = paths(naive)
    assert top[0] in LISTS and top.index(RRF) > top.index(top[0])
    assert naive[0].notes["llm_rating"] == 3.0 and "llm" in naive[0].legs
    # with the defaults' exact-title-first (as engine.search), the card named by the query leads
    exact, _ = search_llm(vault.engine, llm, q, SearchOptions(graph=False), rerank=True)
    assert paths(exact)[0] == RRF and exact[0].notes["exact_title"] == 1.0
    # ... the graph rerank, applied after the LLM's ratings, keeps the card about the topic first
    graph = SearchOptions(exact_title_first=False)
    results, messages = search_llm(vault.engine, llm, q, graph, rerank=True)
    assert messages == []
    assert paths(results)[0] == RRF
    assert results[0].notes["llm_rating"] == 0.0  # it won on its own prose, not on the rating
    for listing in LISTS & set(paths(results)):
        assert paths(results).index(listing) > 0
    prompt = stub.bodies("/api/chat")[0]["messages"][-1]["content"]
    fused, _, _ = fused_candidates(vault.engine, [q], plain)  # the first request's
    rated = re.findall(r"^\[\d+\] (.+?): ", prompt, re.MULTILINE)
    assert rated == [r.title for r in fused[:20]]  # the top candidates (at most 20), in order
    assert "Reciprocal rank fusion: Reciprocal rank fusion (RRF) merges" in prompt


def test_malformed_ratings_fall_back(vault: Vault, stub: OllamaStub) -> None:
    stub.answer_rerank = lambda body: '{"ratings": "they are all relevant"}'
    q = "Reciprocal rank fusion"
    results, messages = search_llm(
        vault.engine, make_llm(stub.url), q, SearchOptions(), rerank=True
    )
    assert paths(results) == paths(vault.engine.search(q))
    assert len(messages) == 1 and "malformed" in messages[0]


def test_a_slow_rerank_times_out_and_falls_back(vault: Vault, stub: OllamaStub) -> None:
    stub.delay = 5.0
    q = "Reciprocal rank fusion"
    results, messages = search_llm(
        vault.engine, make_llm(stub.url, timeout=0.5), q, SearchOptions(), rerank=True
    )
    assert paths(results) == paths(vault.engine.search(q))
    assert messages == [
        f"LLM rerank skipped: Ollama at {stub.url} did not answer within 0.5 s (llmTimeout)"
    ]


def test_expansion_and_rerank_together(vault: Vault, stub: OllamaStub) -> None:
    q = "levain and inverted index"
    results, messages = search_llm(
        vault.engine, make_llm(stub.url), q, SearchOptions(limit=5), expand=True, rerank=True
    )
    assert messages == [] and len(results) == 5
    assert {"baking/Levain.md", "retrieval/Inverted index.md"} <= set(paths(results))
    assert len(stub.bodies("/api/chat")) == 2


def test_with_llm_steps_a_larger_limit_only_appends(vault: Vault, stub: OllamaStub) -> None:
    """Expansion and LLM rerank rank the first tier; more results continue with the plain
    ranking, so search_llm(limit=a) is search_llm(limit=b)[:a] (issue #14)."""
    llm = make_llm(stub.url)
    q = "levain and inverted index"
    runs = {
        limit: paths(
            search_llm(vault.engine, llm, q, SearchOptions(limit=limit), expand=True, rerank=True)[
                0
            ]
        )
        for limit in (3, 10, 40, 80)
    }
    for a, b in ((3, 10), (10, 40), (40, 80), (3, 80)):
        assert runs[a] == runs[b][:a], (a, b)
    assert len(runs[80]) > len(runs[10]) and len(set(runs[80])) == len(runs[80])
