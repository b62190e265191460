"""The search pipeline: legs → fusion per card → graph rerank → exact title first. Used by the CLI,
server and benchmarks.

Legs (each fetches ``SearchOptions.leg_depth`` chunks: a fixed depth, or the limit when that is
larger, so the first results do not depend on how many were asked for):
- ``dense``: the query's embedding against chunk vectors (skipped while no vector exists yet);
- ``bm25``: Edge's BM25 on the sparse vectors;
- ``keyword``: exact phrase, then all content words, on the full-text index (catches what
  stemming normalises away), ranked by BM25 among the matches;
- ``title``: titles and aliases (see :mod:`zettel_lsp.search.titles`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.embedder import Embedder, EmbedderError
from zettel_lsp.index.store_api import Hit, VectorStore
from zettel_lsp.index.sync import point_id, text_hash
from zettel_lsp.search.fusion import RRF_K, CardResult, LegHit, fuse, fuse_convex
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.rerank import RerankParams, graph_rerank
from zettel_lsp.search.titles import TitleIndex, TitleMatch, exact_first

log = logging.getLogger(__name__)

ALL_LEGS: tuple[str, ...] = ("dense", "bm25", "keyword", "title")
QUERY_CACHE_SIZE = 256
# Chosen by leave-one-collection-out over obsidian-help, CACM, CISI, HotpotQA-100 and MuSiQue-100
# (benchmarks/tune.py; the held-out figures are in docs/evaluation.md).
DEFAULT_WEIGHTS: dict[str, float] = {"dense": 1.5, "bm25": 1.0, "keyword": 0.1, "title": 0.5}
DEFAULT_DEPTH = 30
DEFAULT_FUSION = "convex"
FUSIONS = ("rrf", "convex")


@dataclass(frozen=True, slots=True)
class SearchOptions:
    limit: int = 10
    legs: tuple[str, ...] = ALL_LEGS
    graph: bool = True
    rerank: RerankParams = field(default_factory=RerankParams)
    depth: int = DEFAULT_DEPTH  # chunks each leg fetches (at least ``limit``)
    fusion: str = DEFAULT_FUSION  # "rrf" or "convex" (search/fusion.py)
    rrf_k: int = RRF_K
    # weight per leg in the fusion (see DEFAULT_WEIGHTS)
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # a card whose title or alias *is* the query (see search/titles.py) ranks first
    exact_title_first: bool = True
    # a failing query embedding skips the dense leg (logged); False: raise EmbedderError
    dense_fallback: bool = True

    @property
    def leg_depth(self) -> int:
        return max(1, self.depth, self.limit)


class SearchEngine:
    def __init__(self, store: VectorStore, embedder: Embedder, graph: LinkGraph) -> None:
        self.store = store
        self.embedder = embedder
        self.graph = graph
        self.titles = title_index(graph)
        self.dense_available = True  # the owner clears it while no vector exists
        self._query_cache: dict[str, list[float]] = {}  # text -> vector, oldest first

    def refresh_titles(self) -> None:
        """After the graph changed: titles and aliases may have too."""
        self.titles = title_index(self.graph)

    def search(self, text: str, options: SearchOptions | None = None) -> list[CardResult]:
        opts = options or SearchOptions()
        query = parse_query(text)
        if query.empty:
            return self.default_results(opts.limit)
        matches = self.titles.search(query, opts.leg_depth)
        return self.rank(query, self.run_legs(query, opts, matches), matches, opts)

    def rank(
        self,
        query: Query,
        legs: dict[str, list[LegHit]],
        matches: list[TitleMatch],
        opts: SearchOptions,
    ) -> list[CardResult]:
        """Fuse the legs' hits and apply the graph rerank: the ranking step of :meth:`search`
        (reads the graph and, for credited cards, the store; computes no embedding)."""
        fused = fuse_legs(legs, opts)
        if opts.graph:
            title_matches: dict[str, str] = {}
            for m in matches:
                title_matches.setdefault(m.path, m.kind)
            fused = graph_rerank(
                fused,
                self.graph,
                query.terms,
                title_matches=title_matches,
                first_chunk=self.first_chunk,
                params=opts.rerank,
            )
        if opts.exact_title_first and "title" in legs:
            fused = exact_first(fused, matches)
        return fused[: opts.limit]

    def run_legs(
        self, query: Query, opts: SearchOptions, matches: list[TitleMatch]
    ) -> dict[str, list[LegHit]]:
        n = opts.leg_depth
        legs: dict[str, list[LegHit]] = {}
        for leg in opts.legs:
            if leg == "dense":
                if self.dense_available:
                    try:
                        vec = self.query_vector(query.text)
                    except EmbedderError as exc:  # e.g. an ollama: model while Ollama is down
                        if not opts.dense_fallback:
                            raise
                        log.warning("dense leg skipped: %s", exc)
                        continue
                    legs[leg] = _hits(self.store.dense_search(vec, n))
            elif leg == "bm25":
                legs[leg] = _hits(self.store.bm25_search(query.text, n))
            elif leg == "keyword":
                legs[leg] = self._keyword(query, n)
            elif leg == "title":
                chunks = self.first_chunks([m.path for m in matches])
                legs[leg] = [LegHit(m.path, chunks[m.path]) for m in matches if m.path in chunks]
            else:
                raise ValueError(f"unknown leg {leg!r}; choose from {', '.join(ALL_LEGS)}")
        return legs

    def _keyword(self, query: Query, n: int) -> list[LegHit]:
        hits: list[Hit] = []
        if len(query.words) >= 2:
            hits.extend(self.store.keyword_search(query.text, n, phrase=True))
        seen = {h.id for h in hits}
        hits.extend(h for h in self.store.keyword_search(query.keyword_text, n) if h.id not in seen)
        return _hits(hits[:n])

    def query_vector(self, text: str) -> list[float]:
        """The query's embedding; the last few are cached (editors re-send a query as the user
        types, and hovers repeat)."""
        vec = self._query_cache.pop(text, None)
        if vec is None:
            vec = self.embedder.embed_query(text).tolist()
        self._query_cache[text] = vec
        while len(self._query_cache) > QUERY_CACHE_SIZE:
            self._query_cache.pop(next(iter(self._query_cache)))
        return vec

    def stored_vectors(self, path: str, texts: Sequence[str]) -> list[list[float] | None]:
        """The index's vectors for chunk texts of card ``path`` (matched by the hash of the
        embedded text), so an unchanged card is never embedded again; None where none fits."""
        ids = [point_id(path, i) for i in range(len(texts) + 8)]
        by_hash: dict[str, list[float]] = {}
        for _, payload, vec in self.store.retrieve(ids, with_dense=True):
            if vec is not None and payload.get("embed_hash"):
                by_hash[str(payload["embed_hash"])] = list(vec)
        return [by_hash.get(text_hash(t)) for t in texts]

    def first_chunk(self, path: str) -> dict[str, object] | None:
        return self.first_chunks([path]).get(path)

    def first_chunks(self, paths: Sequence[str]) -> dict[str, dict[str, object]]:
        got = self.store.retrieve([point_id(p, 0) for p in paths])
        return {str(payload.get("path")): payload for _, payload, _ in got}

    def default_results(self, limit: int) -> list[CardResult]:
        """For an empty query: the most-linked cards."""
        top = self.graph.most_linked(limit)
        chunks = self.first_chunks([p for p, _ in top])
        return [CardResult(p, float(n), chunks[p], {}) for p, n in top if p in chunks]


def fuse_legs(
    legs: dict[str, list[LegHit]], opts: SearchOptions, weights: dict[str, float] | None = None
) -> list[CardResult]:
    """The fusion ``opts`` names, with ``weights`` (default: ``opts.weights``) per leg."""
    w = weights if weights is not None else (opts.weights or None)
    if opts.fusion == "convex":
        return fuse_convex(legs, weights=w)
    if opts.fusion == "rrf":
        return fuse(legs, k=opts.rrf_k, weights=w)
    raise ValueError(f"unknown fusion {opts.fusion!r}; choose from {', '.join(FUSIONS)}")


def title_index(graph: LinkGraph) -> TitleIndex:
    """Every name a card answers to: its title, aliases and file name (what ``[[links]]`` use,
    also where a frontmatter title or an identifier file name made the title differ)."""
    return TitleIndex(
        (name, c.path)
        for c in graph.cards.values()
        for name in dict.fromkeys((c.title, *c.aliases, c.stem))
    )


def _hits(hits: Sequence[Hit]) -> list[LegHit]:
    return [LegHit(h.path, h.payload, h.score) for h in hits]
