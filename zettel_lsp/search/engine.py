"""The search pipeline: legs → fusion per card → graph rerank → exact title first. Used by the CLI,
server and benchmarks.

Legs (each fetches ``SearchOptions.leg_depth`` chunks, a fixed depth):
- ``dense``: the query's embedding against chunk vectors (skipped while no vector exists yet);
- ``dense_ml``: see *languages* below;
- ``bm25``: Edge's BM25 on the sparse vectors;
- ``keyword``: exact phrase, then all content words, on the full-text index (catches what
  stemming normalises away), ranked by BM25 among the matches;
- ``title``: titles and aliases (see :mod:`zettel_lsp.search.titles`);
- ``anchor``: what other cards say around their links to a card (see
  :mod:`zettel_lsp.search.anchors`), a use of the graph: it runs when ``SearchOptions.graph``
  is on and its weight is above 0, whatever ``SearchOptions.legs`` lists; it reads English
  (its stems are English), so only for an English query on a vault whose one main language
  is English.

**Languages** (issue #17; docs/multilingual.md). The query's language is read the way a card's is
(:func:`zettel_lsp.notes.language.language_of`), and one rule routes it:

- *Not English:* the ``dense`` leg searches the multilingual vectors (``dense_ml``) with the
  multilingual model's embedding of the query, over every card that has them; until any card
  has them (the multilingual phase is still running), the English model's leg answers as
  before. The vault is told (``Multilingual.on_foreign_query``): every card gets such vectors.
- *English:* the ``dense`` leg is the English model's, as always; when non-English cards have
  multilingual vectors (a mixed vault: under ``auto`` every non-English card gets them), each
  card is read by the model that reads its language: ``dense`` searches the English cards
  only, and a ``dense_ml`` leg the non-English ones, with the multilingual model's embedding
  of the query. BM25 cannot match such a card's words, so ``dense_ml`` weighs as ``dense`` and
  ``bm25`` together (:func:`multilingual_weight`), and its scores are read on the ``dense``
  leg's scale (:data:`ML_SCALE`): a few cards make no distribution of their own. An English
  vault runs the legs it always ran. :meth:`SearchEngine.route` says which applies (logged
  when it changes).
- *Lexical legs:* BM25 and the keyword leg read the query in each main language of the vault
  (2% of its cards) and in its own (each card's terms are stemmed in its language); a Chinese,
  Japanese or Korean query searches the keyword field whose tokenizer segments such text.

One fusion ranks whatever legs ran.

**One ranking, whatever the limit.** The first ``k`` results never depend on how many were asked
for: ``search(limit=a) == search(limit=b)[:a]`` for every ``a < b`` (a property test checks it).
Fetching more chunks per leg for a larger limit would change the top: a card found by one more
leg gains score, the graph rerank sees other candidates. So the legs fetch a fixed depth, and
the whole candidate pool is ranked (*tier 1*). Only when more cards are asked for than tier 1
holds does the ranking go on, with the cards of the ranking at twice the depth that are not
listed yet (*tier 2*), then four times, and so on until the legs have nothing more to give
(:meth:`SearchEngine.rank_tiers`). A larger limit only ever appends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.embedders import Embedder, EmbedderError
from zettel_lsp.index.store import DENSE_ML
from zettel_lsp.index.store_api import ChunkPayload, Hit, VectorStore, point_id, text_hash
from zettel_lsp.notes.language import EN, language_of
from zettel_lsp.search.anchors import AnchorIndex
from zettel_lsp.search.fusion import RRF_K, CardResult, LegHit, card_ranking, fuse
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.rerank import RerankParams, graph_rerank
from zettel_lsp.search.titles import TitleIndex, TitleMatch, exact_first

if TYPE_CHECKING:  # suggest imports this module
    from zettel_lsp.notes.model import Card
    from zettel_lsp.search.suggest import SuggestFusion

log = logging.getLogger(__name__)

ALL_LEGS: tuple[str, ...] = ("dense", "bm25", "keyword", "title")
QUERY_CACHE_SIZE = 256
# The weights and the fusion chosen by leave-one-collection-out over obsidian-help, CACM, CISI,
# HotpotQA-100 and MuSiQue-100 (benchmarks/tune.py; the held-out figures are in
# docs/evaluation.md): every fold chose DBSF (search/fusion.py normalised), and the best
# configuration over all five is DBSF with these weights.
DEFAULT_WEIGHTS: dict[str, float] = {"dense": 1.5, "bm25": 1.0, "keyword": 0.1, "title": 0.5}
# The anchor-text leg (search/anchors.py): what other cards say around their links to a card.
# A use of the graph: it runs with the graph rerank (SearchOptions.graph) and a weight above 0.
ANCHOR = "anchor"
DEFAULT_WEIGHTS[ANCHOR] = 1.0
ML_KEY = "\x00ml\x00"  # prefix of a query's multilingual embedding in a Vectors mapping
# the multilingual leg of an English query is normalised on the English dense leg's scale
ML_SCALE = {"dense_ml": "dense"}
DEFAULT_DEPTH = 30
DEFAULT_FUSION = "dbsf"
# The known-item boost (docs/decisions/0007-known-item-boost.md): when the keyword
# leg's whole match set, every chunk that holds all the query's words, lies in at most this many
# cards, its weight rises by SearchOptions.known_item (DEFAULT_KNOWN_ITEM; 0 turns it off).
KNOWN_ITEM_CARDS = 3
DEFAULT_KNOWN_ITEM = 1.0
FUSIONS = ("rrf", "convex", "dbsf")
# the convex fusions and how each puts a leg's scores on one scale (search/fusion.py normalised)
CONVEX_NORMS = {"convex": "top", "dbsf": "dbsf"}


@dataclass(frozen=True, slots=True)
class SearchOptions:
    limit: int = 10
    legs: tuple[str, ...] = ALL_LEGS
    graph: bool = True
    rerank: RerankParams = field(default_factory=RerankParams)
    depth: int = DEFAULT_DEPTH  # chunks each leg fetches for the first tier (not the limit)
    fusion: str = DEFAULT_FUSION  # one of FUSIONS (search/fusion.py)
    rrf_k: int = RRF_K
    # weight per leg in the fusion (see DEFAULT_WEIGHTS)
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # a card whose title or alias *is* the query (see search/titles.py) ranks first
    exact_title_first: bool = True
    # a failing query embedding skips the dense leg (logged); False: raise EmbedderError
    dense_fallback: bool = True
    # extra keyword weight when the query's words are all found in only a few cards (see
    # KNOWN_ITEM_CARDS and known_item); 0 = off
    known_item: float = DEFAULT_KNOWN_ITEM

    @property
    def leg_depth(self) -> int:
        """Chunks each leg fetches for the first tier of results: ``depth``, whatever the
        limit (see the module's "one ranking, whatever the limit")."""
        return max(1, self.depth)


T = TypeVar("T")

# query text -> its embedding, computed before the ranking step (see SearchEngine.query_vectors)
Vectors = Mapping[str, list[float]]
# depth -> (each leg's hits, title matches) fetched at that depth: what one tier ranks
Fetch = Callable[[int], tuple[dict[str, list[LegHit]], list[TitleMatch]]]


class Reader(Protocol):
    """Runs ``fn`` while the index and the graph hold still (the server's vault lock; see
    :meth:`zettel_lsp.server.service.VaultService.read`) and returns its result."""

    def __call__(self, fn: Callable[[], T], /) -> T: ...


def direct(fn: Callable[[], T], /) -> T:
    """The :class:`Reader` of a single-threaded caller (the CLI, benchmarks): no lock."""
    return fn()


@dataclass(frozen=True, slots=True)
class Multilingual:
    """What the owning vault tells the engine about the multilingual leg (see the module)."""

    embedder: Embedder
    query_ready: Callable[[], bool]  # the model is loaded and some card has its vectors
    foreign_ready: Callable[[], bool]  # some non-English card has multilingual vectors
    on_foreign_query: Callable[[], None]  # a query was not English


def multilingual_key(text: str) -> str:
    """The key of a query's multilingual embedding in a :data:`Vectors` mapping."""
    return ML_KEY + text


class SearchEngine:
    """Ranking over one index and graph.

    Two steps, so that a server never waits for a model while holding its vault lock:
    :meth:`query_vectors` computes the query embeddings (a model call: no lock; its cache has a
    lock of its own), then :meth:`search` / :meth:`run_legs` with ``vectors=`` rank (index and
    graph reads: under the caller's lock). Without ``vectors=``, :meth:`search` embeds itself
    (the CLI and benchmarks, which have no lock)."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        graph: LinkGraph,
        *,
        dense_ready: Callable[[], bool] = lambda: True,
        multilingual: Multilingual | None = None,
        languages: Callable[[], Sequence[str]] = lambda: (EN,),
        titles: TitleIndex | None = None,
        suggest_fusion: Callable[[], SuggestFusion | None] = lambda: None,
        anchors: AnchorIndex | None = None,
    ) -> None:
        """``languages``: the vault's main languages, for the lexical legs (English alone by
        default); ``multilingual``: the multilingual leg, None where there is none; ``titles``:
        the graph's :func:`title_index`, when the caller has it already; ``suggest_fusion``:
        the fusion of the link suggestions' legs the vault chose (its own links:
        :mod:`zettel_lsp.search.calibrate`), None for the default; ``anchors``: the graph's
        :class:`AnchorIndex`, built at the first anchor search when not given."""
        self.store = store
        self.embedder = embedder
        self.multilingual = multilingual
        self._languages = languages
        self.graph = graph
        self.titles = titles if titles is not None else title_index(graph)
        self._dense_ready = dense_ready  # the vault says when vectors (and the model) are there
        self.suggest_fusion = suggest_fusion
        self._anchors = anchors
        self._query_cache: dict[str, list[float]] = {}  # text -> vector, oldest first
        self._last_route = ""  # the last route logged (_log_route)
        self._cache_lock = threading.Lock()
        self._anchors_lock = threading.Lock()

    @property
    def anchors(self) -> AnchorIndex:
        """The anchor texts of the graph's cards, built by the first search that needs them
        (not on start-up), then kept in step by the owner of the graph (:meth:`update_anchors`)."""
        with self._anchors_lock:
            if self._anchors is None:
                self._anchors = AnchorIndex.of(self.graph)
            return self._anchors

    def update_anchors(self, paths: list[str], *, everything: bool = False) -> None:
        """Re-read what the cards at ``paths`` say; nothing before the first build, which reads
        the graph as it is then."""
        with self._anchors_lock:
            if self._anchors is not None:
                self._anchors.update(self.graph, paths, everything=everything)

    @property
    def dense_available(self) -> bool:
        """Whether the dense leg runs (the owning vault decides: vectors exist, model loaded)."""
        return self._dense_ready()

    def search(
        self,
        text: str | Query,
        options: SearchOptions | None = None,
        *,
        vectors: Vectors | None = None,
    ) -> list[CardResult]:
        """The ranked cards for ``text``: the first ``opts.limit`` of one ranking that does not
        depend on the limit (see the module). With ``vectors`` (from :meth:`query_vectors`) no
        model is called: a query without a vector there runs without the dense leg."""
        opts = options or SearchOptions()
        query = text if isinstance(text, Query) else parse_query(text)
        if query.empty:
            return self.default_results(opts.limit)
        if vectors is None:
            vectors = self.query_vectors([query], opts)  # once, not per tier

        def fetch(depth: int) -> tuple[dict[str, list[LegHit]], list[TitleMatch]]:
            matches = self.titles.search(query, depth)
            at = replace(opts, depth=depth)
            return self.run_legs(query, at, matches, vectors=vectors), matches

        return self.rank_tiers(query, fetch, opts)

    def rank_tiers(self, query: Query, fetch: Fetch, opts: SearchOptions) -> list[CardResult]:
        """The first ``opts.limit`` cards of the tiered ranking (see the module), until a fetch
        comes back short (every leg and the titles returned fewer than asked). ``fetch(depth)``
        returns the legs' hits and the title matches at that depth (the engine runs the legs;
        benchmarks cut stored hit lists)."""
        out: dict[str, CardResult] = {}  # each card where a tier first listed it
        depth = opts.leg_depth
        while True:
            legs, matches = fetch(depth)
            for r in self.rank_all(query, legs, matches, opts):
                out.setdefault(r.path, r)
            exhausted = len(matches) < depth and all(len(h) < depth for h in legs.values())
            if len(out) >= opts.limit or exhausted:
                return list(out.values())[: opts.limit]
            depth *= 2

    def query_vectors(
        self, texts: Sequence[str | Query], opts: SearchOptions
    ) -> dict[str, list[float]]:
        """The embeddings the dense leg needs for these queries (none when it does not run): the
        model-calling step of a search, to run without holding the vault lock. A failing model
        (an ``ollama:`` model while Ollama is down) leaves its query out and logs, or raises
        :class:`EmbedderError` when ``opts.dense_fallback`` is False."""
        out: dict[str, list[float]] = {}
        if "dense" not in opts.legs:
            return out
        multilingual = self.multilingual
        for t in texts:
            query = t if isinstance(t, Query) else parse_query(t)
            if query.empty or query.text in out or multilingual_key(query.text) in out:
                continue
            english = language_of(query.text) == EN
            if not english and multilingual is not None:
                multilingual.on_foreign_query()
            self._log_route(query.text)
            wants_multilingual = multilingual is not None and (
                multilingual.foreign_ready() if english else multilingual.query_ready()
            )
            wants_english = self.dense_available and (english or not wants_multilingual)
            try:
                if wants_english:
                    out[query.text] = self.query_vector(query.text)
                if wants_multilingual and multilingual is not None:
                    out[multilingual_key(query.text)] = self.query_vector(
                        query.text, multilingual.embedder
                    )
            except EmbedderError as exc:
                if not opts.dense_fallback:
                    raise
                log.warning("dense leg skipped: %s", exc)
        return out

    def _log_route(self, text: str) -> None:
        """Log the route of a query (:meth:`route`) when it differs from the last one logged:
        once per change (a model loads, the vault's first non-English card gets its vectors),
        not once per keystroke."""
        if not log.isEnabledFor(logging.INFO):
            return
        route = self.route(text)
        if route != self._last_route:
            self._last_route = route
            log.info("search: %s", route)

    def route(self, text: str) -> str:
        """Which model reads which cards for the query ``text``, and why (see the module),
        in plain words: logged with each search."""
        lang = language_of(text)
        ml = self.multilingual
        english_model = "the English model" if self.dense_available else "no model (loading)"
        if lang == EN:
            if ml is None:
                return f"English query: {english_model}; multilingual search is off"
            if ml.foreign_ready():
                return (
                    f"English query: {english_model} reads the English cards, the multilingual "
                    "model the non-English ones (dense_ml, weighed as dense and BM25)"
                )
            return (
                f"English query: {english_model}; the multilingual leg waits for a non-English "
                "card with multilingual vectors and its model (none in an English vault)"
            )
        if ml is None:
            return f"query in {lang}: {english_model} and the lexical legs; multilingual off"
        if ml.query_ready():
            return f"query in {lang}: the multilingual model, over every card with its vectors"
        return f"query in {lang}: {english_model} until cards have multilingual vectors"

    def rank_all(
        self,
        query: Query,
        legs: dict[str, list[LegHit]],
        matches: list[TitleMatch],
        opts: SearchOptions,
    ) -> list[CardResult]:
        """Fuse the legs' hits and apply the graph rerank and the exact-title rule: the
        ranking step of one tier (reads the graph and, for credited cards, the store; computes
        no embedding). Every candidate, best first; the limit plays no part."""
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
        return fused

    def run_legs(
        self,
        query: Query,
        opts: SearchOptions,
        matches: list[TitleMatch],
        *,
        vectors: Vectors | None = None,
    ) -> dict[str, list[LegHit]]:
        """Each leg's hits. The dense leg uses ``vectors[query.text]`` when ``vectors`` is
        given (no model call), else embeds the query now."""
        n = opts.leg_depth
        legs: dict[str, list[LegHit]] = {}
        lang = language_of(query.text)
        english = lang == EN
        langs = self._lexical_languages(lang)
        for leg in opts.legs:
            if leg == "dense":
                if vectors is None:
                    vectors = self.query_vectors([query], opts)
                vec = vectors.get(query.text)
                vec_multilingual = vectors.get(multilingual_key(query.text))
                if not english and vec_multilingual is not None:
                    legs[leg] = _hits(self.store.dense_search(vec_multilingual, n, using=DENSE_ML))
                elif vec is not None:
                    # beside the multilingual leg, the English model reads the English cards
                    only = EN if english and vec_multilingual is not None else None
                    legs[leg] = _hits(self.store.dense_search(vec, n, only_lang=only))
                if english and vec_multilingual is not None:
                    legs["dense_ml"] = _hits(
                        self.store.dense_search(vec_multilingual, n, using=DENSE_ML, skip_lang=EN)
                    )
            elif leg == "bm25":
                legs[leg] = _hits(self.store.bm25_search(query.text, n, langs=langs))
            elif leg == "keyword":
                legs[leg] = self._keyword(query, n, langs)
            elif leg == "title":
                chunks = self.first_chunks([m.path for m in matches])
                legs[leg] = [LegHit(m.path, chunks[m.path]) for m in matches if m.path in chunks]
            else:
                raise ValueError(f"unknown leg {leg!r}; choose from {', '.join(ALL_LEGS)}")
        if uses_anchors(opts) and english and tuple(self._languages()) == (EN,):
            hits = self.anchors.search(query.text, n)
            chunks = self.first_chunks([p for p, _ in hits])
            legs[ANCHOR] = [LegHit(p, chunks[p], s) for p, s in hits if p in chunks]
        return legs

    def query_languages(self, text: str) -> tuple[str, ...]:
        """The languages the lexical legs read ``text`` in: the vault's main ones, and the
        query's own."""
        return self._lexical_languages(language_of(text))

    def _lexical_languages(self, lang: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self._languages(), lang]))

    def _keyword(self, query: Query, n: int, langs: Sequence[str] = (EN,)) -> list[LegHit]:
        hits: list[Hit] = []
        if len(query.words) >= 2:
            hits.extend(self.store.keyword_search(query.text, n, phrase=True, langs=langs))
        seen = {h.id for h in hits}
        hits.extend(
            h
            for h in self.store.keyword_search(query.keyword_text, n, langs=langs)
            if h.id not in seen
        )
        return _hits(hits[:n])

    def query_vector(self, text: str, embedder: Embedder | None = None) -> list[float]:
        """The query's embedding by ``embedder`` (the English model by default); the last few
        are cached (editors re-send a query as the user types, and hovers repeat)."""
        model = embedder or self.embedder
        key = text if model is self.embedder else multilingual_key(text)
        with self._cache_lock:
            vec = self._query_cache.pop(key, None)
        if vec is None:
            vec = model.embed_query(text).tolist()  # the model call: no lock held
        with self._cache_lock:
            self._query_cache[key] = vec
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

    def first_chunk(self, path: str) -> ChunkPayload | None:
        return self.first_chunks([path]).get(path)

    def first_chunks(self, paths: Sequence[str]) -> dict[str, ChunkPayload]:
        got = self.store.retrieve([point_id(p, 0) for p in paths])
        return {str(payload.get("path")): payload for _, payload, _ in got}

    def default_results(self, limit: int) -> list[CardResult]:
        """For an empty query: the most-linked cards."""
        top = self.graph.most_linked(limit)
        chunks = self.first_chunks([p for p, _ in top])
        return [CardResult(p, float(n), chunks[p], {}) for p, n in top if p in chunks]

    def similar_cards(
        self, path: str, limit: int, *, exclude: set[str] | None = None
    ) -> list[tuple[str, str, ChunkPayload]]:
        """Cards closest to the indexed card ``path``, as (path, title, best chunk), at most
        ``limit``, never ``path`` or one in ``exclude``: by its first chunk's stored vector (no
        model call: fine under the vault lock), or BM25 on that chunk's text while it has no
        vector. Empty when ``path`` is not indexed."""
        if limit <= 0:
            return []
        skip = {path} | (exclude or set())
        got = self.store.retrieve([point_id(path, 0)], with_dense=True)
        if not got:
            return []
        _, payload, vec = got[0]
        n = limit + len(skip) + 2
        if vec is not None:
            hits = self.store.dense_search(list(vec), n)
        else:
            hits = self.store.bm25_search(str(payload.get("text", ""))[:2000], n)
        cards = [h for h in card_ranking(_hits(hits)) if h.path not in skip][:limit]
        return [(h.path, str(h.chunk.get("title", h.path)), h.chunk) for h in cards]


def fuse_legs(
    legs: dict[str, list[LegHit]], opts: SearchOptions, weights: dict[str, float] | None = None
) -> list[CardResult]:
    """The fusion ``opts`` names, with ``weights`` (default: ``opts.weights``) per leg."""
    w = weights if weights is not None else (opts.weights or None)
    if ANCHOR in legs and not uses_anchors(opts, w):
        legs = {leg: hits for leg, hits in legs.items() if leg != ANCHOR}
    if "dense_ml" in legs and "dense_ml" not in (w or {}):
        w = {**(w or {}), "dense_ml": multilingual_weight(legs, w)}
    if opts.known_item > 0 and known_item(legs.get("keyword", ()), opts.leg_depth):
        base = 1.0 if w is None else w.get("keyword", 1.0)
        w = {**(w or {}), "keyword": base + opts.known_item}
    if opts.fusion in CONVEX_NORMS:
        return fuse(legs, weights=w, norm=CONVEX_NORMS[opts.fusion], scale=ML_SCALE)
    if opts.fusion == "rrf":
        return fuse(legs, k=opts.rrf_k, weights=w)
    raise ValueError(f"unknown fusion {opts.fusion!r}; choose from {', '.join(FUSIONS)}")


def multilingual_weight(legs: Mapping[str, object], weights: Mapping[str, float] | None) -> float:
    """The weight of the ``dense_ml`` leg of an English query (the vault's non-English cards):
    the dense leg's and BM25's together, when they ran. A card in another language than the
    query is read by the multilingual model alone: BM25 cannot match its words, so that leg
    stands in for both (read on the dense leg's scale, :data:`ML_SCALE`)."""
    return sum(
        1.0 if weights is None else weights.get(leg, 1.0)
        for leg in ("dense", "bm25")
        if leg in legs
    )


def uses_anchors(opts: SearchOptions, weights: Mapping[str, float] | None = None) -> bool:
    """Whether the anchor-text leg takes part: the graph is on and the leg has a weight."""
    w = opts.weights if weights is None else weights
    return opts.graph and w.get(ANCHOR, 0.0) > 0


def known_item(keyword: Sequence[LegHit], depth: int) -> bool:
    """Whether the keyword leg found a *known item*: it returned fewer chunks than ``depth``
    (so that is every chunk holding the query's words, as a phrase or all of them) and they lie
    in at most :data:`KNOWN_ITEM_CARDS` cards. Words that rare together point at the card the
    user remembers writing them in."""
    if not keyword or len(keyword) >= depth:
        return False
    return len({h.path for h in keyword}) <= KNOWN_ITEM_CARDS


def title_index(graph: LinkGraph) -> TitleIndex:
    """Every name a card answers to: its title, aliases and file name (what ``[[links]]`` use,
    also where a frontmatter title or an identifier file name made the title differ)."""
    return TitleIndex(
        (name, c.path) for c in graph.cards.values() for name in dict.fromkeys(card_names(c))
    )


def card_names(card: Card | None) -> tuple[str, ...]:
    """What :func:`title_index` files a card under."""
    return () if card is None else (card.title, *card.aliases, card.stem)


def names_change(graph: LinkGraph, removed: Iterable[str], cards: Iterable[Card]) -> bool:
    """Whether removing ``removed`` and adding ``cards`` changes a name :func:`title_index`
    files (then it is to be built again; a change of prose leaves it as it is)."""
    return any(p in graph.cards for p in removed) or any(
        card_names(c) != card_names(graph.cards.get(c.path)) for c in cards
    )


def _hits(hits: Sequence[Hit]) -> list[LegHit]:
    return [LegHit(h.path, h.payload, h.score) for h in hits]
