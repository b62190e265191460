"""Search with optional LLM steps: query expansion and LLM rerank, then the graph rerank.

    query ──(expand?)──▶ [query, sub-query 1, ...] ──legs each──▶ one fusion over all legs
          ──(LLM rerank?)──▶ graph rerank ──▶ results

The original query's legs keep their names (``dense``, ``bm25``, ...); sub-query ``i``'s legs
are named ``q<i>:<leg>`` and weighted like the leg they come from (``SearchOptions.weights``).
Title matches of every query can make a card a graph-rerank target (a sub-query that is
exactly a card's title makes that card one), and the rerank counts the words of every query.
Each LLM step that fails is skipped with a one-line message; with both failing (or both off)
the result is exactly ``engine.search``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from zettel_lsp.index.embedders import EmbedderError
from zettel_lsp.llm.client import Cancel, Ollama
from zettel_lsp.llm.errors import LLMError
from zettel_lsp.llm.expand import expand_query
from zettel_lsp.llm.rerank import llm_rerank
from zettel_lsp.search.engine import (
    Reader,
    SearchEngine,
    SearchOptions,
    Vectors,
    direct,
    fuse_legs,
)
from zettel_lsp.search.fusion import CardResult, LegHit
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.rerank import graph_rerank
from zettel_lsp.search.titles import TitleMatch, exact_first


def search_llm(
    engine: SearchEngine,
    llm: Ollama | None,
    text: str | Query,
    options: SearchOptions | None = None,
    *,
    expand: bool = False,
    rerank: bool = False,
    cancel: Cancel | None = None,
    read: Reader = direct,
) -> tuple[list[CardResult], list[str]]:
    """Results (as ``engine.search`` returns them) and one message per LLM step skipped.

    Also when the query embedding fails (an ``ollama:`` embedding model while Ollama is down):
    the search runs again without the dense leg, with a message. ``read`` (e.g. the server's
    :meth:`~zettel_lsp.server.service.VaultService.read`) runs the steps that read the index
    and the graph; the waits for a model (query embeddings, Ollama) run outside it."""
    # this function reports a failing query embedding itself (a message, then lexical legs)
    opts = replace(options or SearchOptions(), dense_fallback=False)
    query = text if isinstance(text, Query) else parse_query(text)
    messages: list[str] = []
    subqueries: list[str] = []
    if llm is not None and not query.empty and expand:
        try:
            subqueries = expand_query(llm, query.text, cancel)
        except LLMError as exc:
            messages.append(f"query expansion skipped: {exc.message}")
    llm = None if query.empty or not (subqueries or rerank) else llm
    try:
        return _search(engine, llm, query, subqueries, opts, rerank, cancel, read, messages)
    except EmbedderError as exc:
        if "dense" not in opts.legs:
            raise
        messages.append(f"dense leg skipped: {exc}")
        lexical = replace(opts, legs=tuple(leg for leg in opts.legs if leg != "dense"))
        if not lexical.legs:
            return [], messages
        return _search(engine, llm, query, subqueries, lexical, rerank, cancel, read, messages)


def _search(
    engine: SearchEngine,
    llm: Ollama | None,
    query: Query,
    subqueries: list[str],
    opts: SearchOptions,
    rerank: bool,
    cancel: Cancel | None,
    read: Reader,
    messages: list[str],
) -> tuple[list[CardResult], list[str]]:
    if llm is None:  # no LLM step: exactly engine.search
        vectors = engine.query_vectors([query], opts)  # the model call, outside ``read``
        return read(lambda: engine.search(query, opts, vectors=vectors)), messages
    queries: list[str | Query] = [query, *subqueries]
    vectors = engine.query_vectors(queries, opts)
    fused, title_matches, words = read(
        lambda: fused_candidates(engine, queries, opts, vectors=vectors)
    )
    if rerank:
        try:
            fused = llm_rerank(llm, query.text, fused, query.terms, k=opts.rrf_k, cancel=cancel)
        except LLMError as exc:
            messages.append(f"LLM rerank skipped: {exc.message}")
    if opts.graph:
        candidates = fused
        fused = read(
            lambda: graph_rerank(
                candidates,
                engine.graph,
                words,
                title_matches=title_matches,
                first_chunk=engine.first_chunk,
                params=opts.rerank,
            )
        )
    if opts.exact_title_first and "title" in opts.legs:  # as engine.search does
        fused = exact_first(fused, [TitleMatch(p, k, "") for p, k in title_matches.items()])
    if len(fused) < opts.limit:
        # more asked for than the candidates hold: go on with the plain ranking (itself the
        # same whatever the limit), so a larger limit only appends (engine.py's tiers)
        seen = {r.path for r in fused}
        more = read(lambda: engine.search(query, opts, vectors=vectors))
        fused = fused + [r for r in more if r.path not in seen]
    return fused[: opts.limit], messages


_KINDS = ("exact", "prefix", "covers", "inside")  # search/titles.py, strongest first


def fused_candidates(
    engine: SearchEngine,
    queries: Sequence[str | Query],
    opts: SearchOptions,
    *,
    vectors: Vectors | None = None,
) -> tuple[list[CardResult], dict[str, str], list[str]]:
    """The fusion (``opts.fusion``) of the legs of every query (before any rerank), each leg
    fetched at ``opts.leg_depth`` chunks whatever the limit (the first tier of
    :meth:`SearchEngine.rank_tiers`); the title matches of all queries (path -> the strongest
    kind any query gave it) and all their words (deduplicated). With ``vectors``
    (:meth:`SearchEngine.query_vectors`) no model is called."""
    legs: dict[str, list[LegHit]] = {}
    weights: dict[str, float] = {}
    title_matches: dict[str, str] = {}
    words: list[str] = []
    for i, text in enumerate(queries):
        query = text if isinstance(text, Query) else parse_query(text)
        if query.empty:
            continue
        matches = engine.titles.search(query, opts.leg_depth)
        for m in matches:
            old = title_matches.get(m.path)
            if old is None or _KINDS.index(m.kind) < _KINDS.index(old):
                title_matches[m.path] = m.kind
        words.extend(w for w in query.terms if w not in words)
        for leg, hits in engine.run_legs(query, opts, matches, vectors=vectors).items():
            name = leg if i == 0 else f"q{i}:{leg}"
            legs[name] = hits
            weights[name] = (opts.weights or {}).get(leg, 1.0)
    fused = fuse_legs(legs, opts, weights)
    return fused, title_matches, words
