"""The legs of the related ranking (named rankings of candidate cards) and their fusion."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace

from zettel_lsp.index.chunker import Chunk, chunk_card
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.mentions import unlinkable
from zettel_lsp.notes.model import Card
from zettel_lsp.search.engine import Reader, SearchEngine, direct
from zettel_lsp.search.fusion import rrf_scores
from zettel_lsp.search.suggest.graph_legs import graph_legs, linked_by_similar
from zettel_lsp.search.suggest.mentions import linked_targets, mention_suggestions, rank_mentions
from zettel_lsp.search.suggest.names import inflected, labelled, short_named


@dataclass(frozen=True, slots=True)
class SuggestFusion:
    """How the legs of the related-card ranking are fused: weighted reciprocal rank fusion,
    ``weight / (k + rank)`` summed over the legs, each read to ``depth``. A leg without a weight
    (or with weight 0) is left out. ``lead``: a leg (with a weight) whose cards come first, in
    its order, before the fused rest (the editor lists confident mentions first, as fixes in
    place)."""

    weights: Mapping[str, float]
    k: float = 60.0
    depth: int = 30
    lead: str | None = None

    def only(self, legs: Iterable[str]) -> SuggestFusion:
        """The same fusion with just ``legs`` (for ``--legs`` and ablations)."""
        keep = set(legs)
        return replace(self, weights={n: w for n, w in self.weights.items() if n in keep})

    def without(self, legs: Iterable[str]) -> SuggestFusion:
        return self.only(set(self.weights) - set(legs))

    @property
    def legs(self) -> tuple[str, ...]:
        return tuple(n for n, w in self.weights.items() if w > 0)


# The legs (named rankings of candidate cards), each best first:
# - mentions: cards this card names without linking, most confident first (rank_mentions;
#   common words too: the editor hides every mentioned card from the related list anyway);
#   confident: the same, only those with confidence >= SURE_MENTION, so the fusion can trust a
#   sure name more than a rank;
# - inflections: cards this card names in another number, "Digital Certificates" for
#   "Digital Certificate", "logic gate" for "Logic Gates" (inflected: English plurals of a
#   name's last word), which no mention finds;
# - short_names: cards this card names by a title or alias too short for the mention pass
#   ("OS", "DC", "C"), written exactly as the name is (short_named);
# - dense: the card's passages as queries, one dense ranking per chunk, fused by plain RRF
#   (cards close to several passages rise); dense_max: by the best passage-to-passage cosine;
# - bm25: BM25 of the card's text (its first 4,000 characters) against every chunk;
# - adamic_adar: two hops away by shared neighbours, either direction;
# - cocitation: cards that the same sources link together with this card;
# - coupling: cards that link the same targets as this card (bibliographic coupling);
# - hub_lines: cards linked on the same line as this card in another card, or on an adjacent
#   item of the same list or table;
# - backlinks: cards that link to this card (that it does not link back);
# - similar_links: cards that the cards most similar to this one link (the dense ranking's first
#   SIMILAR_CARDS, else BM25's): what a card like this one links;
# - labels: cards this card names by the text other cards' links to them show ("neural nets"
#   where other cards write [[Neural Network|neural nets]]), a name the vault's writers gave
#   them that is no title or alias (link_labels).
CONTENT_LEGS: tuple[str, ...] = (
    "mentions",
    "confident",
    "inflections",
    "short_names",
    "dense",
    "dense_max",
    "bm25",
)
GRAPH_LEGS: tuple[str, ...] = (
    "adamic_adar",
    "cocitation",
    "coupling",
    "hub_lines",
    "backlinks",
    "similar_links",
    "labels",
)
SUGGEST_LEGS: tuple[str, ...] = CONTENT_LEGS + GRAPH_LEGS
LEG_DEPTH = 50  # each leg lists at most this many cards
MAX_QUERY_CHUNKS = 32  # passages used as dense queries (the first ones): bounded cost per card
BM25_CHARS = 4000
SURE_MENTION = 0.3  # the "confident" leg: mentions at least this confident (mention_confidence)
SIMILAR_CARDS = 10  # similar_links: the links of this many most similar cards

# Chosen on the link hold-outs of four vaults, both variants, with SURE_MENTION
# (benchmarks/suggest_tune.py: the setting that maximises the vaults' mean Recall@10). A small k
# lets a leg's first ranks count much more than its tail; the confident mentions lead, as the
# editor lists them first, as fixes in place. short_names finds something on one vault only: it
# has the inflections leg's weight, and each vault's own links re-weigh it (calibrate.py).
DEFAULT_SUGGEST_FUSION = SuggestFusion(
    weights={
        "mentions": 5.0,
        "confident": 5.0,
        "dense": 1.5,
        "dense_max": 1.0,
        "bm25": 0.5,
        "adamic_adar": 1.0,
        "cocitation": 1.0,
        "coupling": 1.0,
        "hub_lines": 0.25,
        "backlinks": 1.0,
        "similar_links": 5.0,
        "inflections": 2.0,
        "short_names": 2.0,
        "labels": 5.0,
    },
    k=5.0,
    depth=50,
    lead="confident",
)


def fuse_suggestions(legs: Mapping[str, Sequence[str]], fusion: SuggestFusion) -> list[str]:
    """Candidate cards, best first: the ``lead`` leg's cards, then the rest by weighted RRF of
    ``legs`` (see :class:`SuggestFusion`); ties by path. Pure: the offline tuning sweeps it
    over stored legs."""
    return ordered_suggestions(legs, fusion, fused_scores(legs, fusion))


def ordered_suggestions(
    legs: Mapping[str, Sequence[str]], fusion: SuggestFusion, scores: Mapping[str, float]
) -> list[str]:
    lead: list[str] = []
    if fusion.lead and fusion.weights.get(fusion.lead, 0.0) > 0:
        lead = [p for p in legs.get(fusion.lead, ())[: fusion.depth] if p in scores]
    first = set(lead)
    return lead + sorted((p for p in scores if p not in first), key=lambda p: (-scores[p], p))


def fused_scores(legs: Mapping[str, Sequence[str]], fusion: SuggestFusion) -> dict[str, float]:
    weighed = {n: r[: fusion.depth] for n, r in legs.items() if fusion.weights.get(n, 0.0) > 0}
    return rrf_scores(weighed, fusion.k, fusion.weights)


@dataclass(slots=True)
class SuggestionLegs:
    """The legs of one card's related ranking, with what the reasons need."""

    rankings: dict[str, list[str]]
    payloads: dict[str, ChunkPayload]  # best chunk seen per candidate (dense, BM25)
    # leg -> candidate -> the cards that join them (graph legs) or the text that names it
    via: dict[str, dict[str, list[str]]]
    confidence: dict[str, float] = field(default_factory=dict)  # mentioned card -> confidence
    mentioned: frozenset[str] | None = None  # every card named without a link (mention legs)


def suggestion_legs(
    engine: SearchEngine,
    card: Card,
    legs: Iterable[str] = SUGGEST_LEGS,
    *,
    depth: int = LEG_DEPTH,
    read: Reader = direct,
) -> SuggestionLegs:
    """The named rankings (:data:`SUGGEST_LEGS`, only those in ``legs``) of the cards this
    card neither is nor links to, each at most ``depth`` long. A few index queries per card
    (one dense query per passage, one BM25 query); the model runs only for passages whose
    vectors the index does not hold."""
    wanted = set(legs)
    vectors = None
    if engine.dense_available and wanted & {"dense", "dense_max", "similar_links"}:
        chunks = chunk_card(card, engine.embedder.count_tokens)[:MAX_QUERY_CHUNKS]
        vectors = chunk_vectors(engine, card.path, chunks, read=read) if chunks else None
    return read(lambda: _legs(engine, card, vectors, wanted, depth))


def _legs(
    engine: SearchEngine,
    card: Card,
    vectors: Sequence[list[float]] | None,
    wanted: Set[str],
    depth: int,
) -> SuggestionLegs:
    graph = engine.graph
    exclude = linked_targets(graph, card) | {card.path}
    out = SuggestionLegs({}, {}, {})
    if wanted & {"mentions", "confident"}:
        mentions = [m for m in mention_suggestions(graph, card) if m.target not in exclude]
        out.mentioned = frozenset(m.target for m in mentions)
        targets = rank_mentions(graph, mentions, common=True)
        if "mentions" in wanted:
            out.rankings["mentions"] = [t.target for t in targets[:depth]]
        if "confident" in wanted:
            sure = [t.target for t in targets if t.confidence >= SURE_MENTION]
            out.rankings["confident"] = sure[:depth]
        out.confidence = {t.target: t.confidence for t in targets[:depth]}
        said = {t.target: [t.mentions[0].text] for t in targets[:depth]}
        out.via.update({leg: said for leg in ("mentions", "confident") if leg in wanted})
    blocked = unlinkable(card) if wanted & {"inflections", "short_names", "labels"} else []
    for leg, find in (("inflections", inflected), ("short_names", short_named)):
        if leg in wanted:
            found = find(graph, card, exclude, blocked)
            out.rankings[leg] = [p for p, _ in found[:depth]]
            out.via[leg] = dict(found[:depth])
    if vectors:
        per_chunk: list[list[str]] = []
        best: dict[str, float] = {}
        fetch = depth + min(len(exclude), depth)
        for hits in engine.store.dense_search_many(vectors, fetch):
            hits = [h for h in hits if h.path not in exclude]
            per_chunk.append(list(dict.fromkeys(h.path for h in hits)))
            for h in hits:
                if h.score > best.get(h.path, -math.inf):
                    best[h.path] = h.score
                    out.payloads[h.path] = h.payload
        scores = rrf_scores({str(i): r for i, r in enumerate(per_chunk)})
        dense = sorted(scores, key=lambda p: (-scores[p], p))[:depth]
        if "dense" in wanted:
            out.rankings["dense"] = dense
        if "dense_max" in wanted:
            out.rankings["dense_max"] = sorted(best, key=lambda p: (-best[p], p))[:depth]
    else:
        dense = []
    bm25: list[str] = []
    if wanted & {"bm25", "similar_links"} and card.text.strip():
        hits = engine.store.bm25_search(
            card.text[:BM25_CHARS], 2 * depth + min(len(exclude), depth)
        )
        hits = [h for h in hits if h.path not in exclude]
        for h in hits:
            out.payloads.setdefault(h.path, h.payload)
        bm25 = list(dict.fromkeys(h.path for h in hits))[:depth]
        if "bm25" in wanted:
            out.rankings["bm25"] = bm25
    ranked_legs = graph_legs(graph, card.path, exclude, wanted)
    if "similar_links" in wanted:
        similar = (dense or bm25)[:SIMILAR_CARDS]
        ranked_legs["similar_links"] = linked_by_similar(graph, similar, exclude)
    if "labels" in wanted:
        ranked_legs["labels"] = labelled(graph, card, exclude, blocked)
    for name, ranked in ranked_legs.items():
        out.rankings[name] = [p for p, _ in ranked[:depth]]
        out.via[name] = dict(ranked[:depth])
    return out


def chunk_vectors(
    engine: SearchEngine, path: str, chunks: Sequence[Chunk], *, read: Reader = direct
) -> list[list[float]]:
    """Vectors for a card's chunks: the index's where the text is unchanged (read through
    ``read``), else embedded now (unsaved edits; outside ``read``)."""
    texts = [c.embed_text for c in chunks]
    stored = read(lambda: engine.stored_vectors(path, texts))
    missing = [i for i, v in enumerate(stored) if v is None]
    out: list[list[float] | None] = list(stored)
    if missing:
        fresh = engine.embedder.embed([texts[i] for i in missing])
        for i, vec in zip(missing, fresh, strict=True):
            out[i] = vec.tolist()
    return [v for v in out if v is not None]
