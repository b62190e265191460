"""Link suggestions for one card (its current text, unsaved edits included):

- **unlinked mentions**: spans that name another card (title or alias) without linking it, each
  with its exact range and the ``[[...]]`` text to put there (the alias form ``[[Target|text]]``
  when the visible text differs from the name the link would use);
- **related**: the cards a careful writer would link, even where the sentence that named them is
  gone: named rankings ("legs", :data:`SUGGEST_LEGS`) from the card's own passages (one dense
  query per chunk), BM25 of its whole text, its unlinked mentions, and graph evidence that is not
  a title (shared neighbours, co-citation, coupling, hub lines, backlinks, the links of similar
  cards), fused by weighted RRF (:class:`SuggestFusion`, defaults chosen by leave-one-vault-out
  on link hold-outs); excluding the card itself and cards it already links to, each with a
  one-line reason. ``eval-links`` scores exactly this ranking (``--legs``, ``--no-graph``).
"""

from __future__ import annotations

import math
import re
import unicodedata
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import card_keys, strip_md
from zettel_lsp.index.chunker import Chunk, chunk_card
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.frontmatter import string_list
from zettel_lsp.notes.masking import heading_line_spans
from zettel_lsp.notes.mentions import (
    MentionMatcher,
    long_enough,
    lower_same_length,
    normalise,
    unlinkable,
)
from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.search.engine import Reader, SearchEngine, direct
from zettel_lsp.search.fusion import rrf_scores
from zettel_lsp.search.rerank import is_list_line
from zettel_lsp.search.results import excerpt


@dataclass(frozen=True, slots=True)
class MentionSuggestion:
    start: int  # code-point offsets into the card text
    end: int
    start_pos: Position
    end_pos: Position
    text: str  # as written
    target: str  # card path
    target_title: str
    replacement: str  # "[[Target]]" or "[[Target|text]]"
    in_heading: bool = False  # on a section heading line: offered, never linked in bulk


@dataclass(frozen=True, slots=True)
class RelatedSuggestion:
    path: str
    title: str
    score: float
    reason: str
    line_start: int
    line_end: int
    excerpt: str


def link_name(graph: LinkGraph, target: str, source: str) -> str:
    """The shortest name that links ``source`` to ``target``: the file stem when it resolves
    there, else the vault path without ``.md``."""
    stem = strip_md(target.rsplit("/", 1)[-1])
    if graph.resolve(stem, source).target == target:
        return stem
    return strip_md(target)


def mention_suggestions(graph: LinkGraph, card: Card) -> list[MentionSuggestion]:
    lines = LineIndex(card.text)
    headings = heading_line_spans(card.text)
    starts = [s for s, _ in headings]
    out = []
    names: dict[str, str] = {}  # a card named a thousand times is resolved once
    for m in graph.find_mentions_in(card):
        target = graph.cards[m.target]
        name = names.get(m.target)
        if name is None:
            name = names[m.target] = link_name(graph, m.target, card.path)
        replacement = f"[[{name}]]" if m.text == name else f"[[{name}|{m.text}]]"
        i = bisect_right(starts, m.start) - 1
        out.append(
            MentionSuggestion(
                m.start,
                m.end,
                lines.position(m.start),
                lines.position(m.end),
                m.text,
                m.target,
                target.title,
                replacement,
                i >= 0 and headings[i][1] >= m.end,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class MentionTarget:
    """One mentioned card, once: its mentions in this card (in order) and how sure a link is."""

    target: str
    target_title: str
    mentions: tuple[MentionSuggestion, ...]
    confidence: float  # 0..1, see :func:`mention_confidence`
    linked_by: int  # cards that link to the target
    named_by: int  # cards that name it in prose without linking it
    already_linked: bool = False  # this card links the target elsewhere

    @property
    def count(self) -> int:
        return len(self.mentions)

    @property
    def confident(self) -> bool:
        """Linked by "Link N confident mentions": likely enough, and not linked here yet."""
        return self.confidence >= CONFIDENT and not self.already_linked


@dataclass(frozen=True, slots=True)
class MentionEvidence:
    """What :func:`mention_confidence` weighs for one mentioned card."""

    linked_by: int
    named_by: int
    words: int  # words in the longest phrase mentioned
    chars: int  # its length
    case: int  # +1: written as the name is (with a capital); -1: a capitalised name in lower case
    heading_alias: bool  # matched only through an alias taken from an opening H1, not a name


# Thresholds on the confidence (issue #14). See mention_confidence and docs/evaluation.md.
CONFIDENT = 0.5  # "Link N confident mentions" links these
SHOWN = 0.02  # below this a mention is not suggested at all (a common word in this vault)


def mention_confidence(e: MentionEvidence) -> float:
    """How likely a mention becomes a link, from evidence any vault has (issue #14):

    - the target's link rate: of the cards that name it, how many link it (``linked_by`` against
      ``named_by``, with one pseudo-count each): "Data", named by 907 cards and linked by 3, is a
      common word in that vault, "Scrum", linked by 5 of 7, is a name;
    - the phrase: several words or a long word are specific, a short single word is not;
    - case: "Agile" written as its title is stronger than "process" for the title "Process";
    - source: an alias that only comes from an opening H1 ("Tools" in "Digital Forensics.md")
      is weak.

    A logistic score of these; the weights are round numbers checked on four vaults."""
    odds = (e.linked_by + 1.0) / (e.named_by + 1.0)
    logit = math.log(odds)
    logit += 0.8 * min(e.words - 1, 2)
    if e.words == 1 and e.chars < 6:
        logit -= 0.5
    logit += 0.7 * e.case
    if e.heading_alias:
        logit -= 1.5
    return 1.0 / (1.0 + math.exp(-logit))


def mention_evidence(graph: LinkGraph, target: str, texts: Sequence[str]) -> MentionEvidence:
    """The evidence for linking ``target`` where it is mentioned as ``texts``."""
    card = graph.cards[target]
    fm_aliases = {normalise(a) for a in _frontmatter_aliases(card)}
    stem = strip_md(target.rsplit("/", 1)[-1])
    names = [card.title, stem, *card.aliases]
    strong = {normalise(card.title), normalise(stem)} | fm_aliases
    longest = max(texts, key=len)
    linked_by, named_by = graph.link_counts(target)
    return MentionEvidence(
        linked_by=linked_by,
        named_by=named_by,
        words=len(longest.split()),
        chars=len(longest),
        case=max(_case(text, names) for text in set(texts)),
        heading_alias=not any(normalise(t) in strong for t in texts),
    )


def _case(text: str, names: Sequence[str]) -> int:
    """+1: ``text`` is written exactly as a name that has a capital ("Agile", "RRF"); -1: a name
    with capitals written all in lower case ("process" for "Process"); else 0."""
    written = [n for n in names if normalise(n) == normalise(text)]
    if text in written and any(c.isupper() for c in text):
        return 1
    if text == text.lower() and written and all(any(c.isupper() for c in n) for n in written):
        return -1
    return 0


def _frontmatter_aliases(card: Card) -> list[str]:
    return string_list(card.frontmatter.get("aliases")) + string_list(card.frontmatter.get("alias"))


def rank_mentions(
    graph: LinkGraph,
    mentions: Sequence[MentionSuggestion],
    *,
    linked: Set[str] = frozenset(),
    shown: float = SHOWN,
) -> list[MentionTarget]:
    """Each mentioned card once, with all its mentions, most confident first (then in order of
    first appearance); cards the note already links (``linked``) come last, and cards below
    ``shown`` are left out."""
    by_target: dict[str, list[MentionSuggestion]] = {}
    for m in mentions:
        by_target.setdefault(m.target, []).append(m)
    out: list[MentionTarget] = []
    for target, ms in by_target.items():
        e = mention_evidence(graph, target, [m.text for m in ms])
        confidence = mention_confidence(e)
        if confidence < shown:
            continue
        out.append(
            MentionTarget(
                target,
                ms[0].target_title,
                tuple(ms),
                confidence,
                e.linked_by,
                e.named_by,
                target in linked,
            )
        )
    out.sort(key=lambda t: (t.already_linked, -t.confidence, t.mentions[0].start))
    return out


def mention_fields(t: MentionTarget, m: MentionSuggestion) -> dict[str, object]:
    """One suggested mention as JSON (without its place, which the server gives as an LSP range
    and the CLI as a line and characters)."""
    return {
        "text": m.text,
        "target": m.target,
        "target_title": m.target_title,
        "replacement": m.replacement,
        "confidence": round(t.confidence, 3),
        "confident": t.confident,
        "count": t.count,
        "in_heading": m.in_heading,
    }


def ranked_mentions(graph: LinkGraph, card: Card) -> list[MentionTarget]:
    """The mention suggestions of ``card`` (its current text), each card once, ranked."""
    return rank_mentions(
        graph, mention_suggestions(graph, card), linked=linked_targets(graph, card)
    )


def by_specificity(graph: LinkGraph, mentions: Sequence[MentionSuggestion]) -> list[str]:
    """Mentioned cards, most confident first (:func:`rank_mentions`); the order the server
    shows and the ``title_specific`` ranker of the link hold-outs (docs/evaluation.md)."""
    return [t.target for t in rank_mentions(graph, mentions)]


def linked_targets(graph: LinkGraph, card: Card) -> set[str]:
    """Cards the (possibly unsaved) card links to now."""
    out = set()
    for link in card.links:
        res = graph.resolve_link(link, card.path)
        if res.target is not None:
            out.add(res.target)
    return out


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
        drop = set(legs)
        return replace(self, weights={n: w for n, w in self.weights.items() if n not in drop})

    @property
    def legs(self) -> tuple[str, ...]:
        return tuple(n for n, w in self.weights.items() if w > 0)


# The legs (named rankings of candidate cards), each best first:
# - mentions: cards this card names without linking, most confident first (rank_mentions);
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

# Chosen on the link hold-outs of four vaults, both variants (benchmarks/suggest_tune.py: the
# setting that maximises the vaults' mean Recall@10; leave-one-vault-out estimates what it is
# worth on a vault it was not chosen on), with SURE_MENTION. A small k (5) lets a leg's first
# ranks count much more than its tail; the names in the text (mentions, confident) and what
# similar cards link (similar_links) weigh most. The confident mentions lead (chosen with the
# weights fixed, `suggest_tune.py --lead-only`: on all vaults and on three of the four folds);
# the editor lists them first too, as fixes in place. The inflections and labels legs (added
# 2026-11-29) were weighed with the others fixed, by leave-one-vault-out
# (`suggest_tune.py --leg-only inflections,labels`; every fold gave both a weight). The
# short_names leg (added later) finds something on zettelkasten-13k only, so leave-one-vault-out
# cannot weigh it (the folds without that vault are ties): it starts at the inflections leg's
# weight, the nearest kind of evidence, and each vault's own links re-weigh it (calibrate.py).
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
    scores: dict[str, float] = {}
    for name, ranking in legs.items():
        w = fusion.weights.get(name, 0.0)
        if w <= 0:
            continue
        for rank, key in enumerate(ranking[: fusion.depth], start=1):
            scores[key] = scores.get(key, 0.0) + w / (fusion.k + rank)
    return scores


@dataclass(slots=True)
class SuggestionLegs:
    """The legs of one card's related ranking, with what the reasons need."""

    rankings: dict[str, list[str]]
    payloads: dict[str, ChunkPayload]  # best chunk seen per candidate (dense, BM25)
    via: dict[str, dict[str, list[str]]]  # graph leg -> candidate -> the cards that join them
    confidence: dict[str, float] = field(default_factory=dict)  # mentioned card -> confidence
    mentioned: frozenset[str] | None = None  # every card named without a link (mention legs)


def related_suggestions(
    engine: SearchEngine,
    card: Card,
    limit: int = 10,
    *,
    fusion: SuggestFusion | None = None,
    unmentioned: bool = False,
    read: Reader = direct,
) -> list[RelatedSuggestion]:
    """Cards related in meaning or by the graph that this card neither is nor links to: the
    legs of :func:`suggestion_legs` fused by ``fusion`` (by default the one the vault chose on
    its own links, :attr:`SearchEngine.suggest_fusion`, else :data:`DEFAULT_SUGGEST_FUSION`).
    ``unmentioned``: leave out the cards
    the card names without linking (the editor offers those as "Link" fixes in place; the
    ranking of the others is the same).

    ``read`` (the server's vault lock) runs the index and graph steps; vectors for chunks the
    index does not hold (unsaved edits) are embedded outside it."""
    if fusion is None:
        fusion = engine.suggest_fusion() or DEFAULT_SUGGEST_FUSION
    legs = suggestion_legs(engine, card, fusion.legs, depth=fusion.depth, read=read)
    hide: frozenset[str] = frozenset()
    if unmentioned and legs.mentioned is not None:
        hide = legs.mentioned
    elif unmentioned:  # the fusion has no mention leg
        hide = read(lambda: frozenset(m.target for m in mention_suggestions(engine.graph, card)))
    return read(lambda: describe_related(engine, legs, fusion, limit, hide))


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
        targets = rank_mentions(graph, mentions)
        if "mentions" in wanted:
            out.rankings["mentions"] = [t.target for t in targets[:depth]]
        if "confident" in wanted:
            sure = [t.target for t in targets if t.confidence >= SURE_MENTION]
            out.rankings["confident"] = sure[:depth]
        out.confidence = {t.target: t.confidence for t in targets[:depth]}
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
            per_chunk.append(_distinct([h.path for h in hits]))
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
        bm25 = _distinct([h.path for h in hits])[:depth]
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


def graph_legs(
    graph: LinkGraph, path: str, exclude: Set[str], legs: Iterable[str] = GRAPH_LEGS
) -> dict[str, list[tuple[str, list[str]]]]:
    """The graph legs in ``legs``: candidates (none of ``exclude``, nor ``path``) with the cards
    that join them to ``path``, best first. Only links count, never titles."""
    funcs = {
        "adamic_adar": two_hop_neighbours,
        "cocitation": co_cited,
        "coupling": coupled,
        "hub_lines": hub_line_neighbours,
        "backlinks": linking_here,
    }
    wanted = set(legs)
    ex = set(exclude) | {path}
    return {name: f(graph, path, ex) for name, f in funcs.items() if name in wanted}


def describe_related(
    engine: SearchEngine,
    legs: SuggestionLegs,
    fusion: SuggestFusion,
    limit: int,
    hide: Set[str] = frozenset(),
) -> list[RelatedSuggestion]:
    """The first ``limit`` fused candidates (none of ``hide``) with their titles, excerpts and
    a one-line reason (the leg that gave each the most credit)."""
    graph = engine.graph
    scores = fused_scores(legs.rankings, fusion)
    ordered = [p for p in ordered_suggestions(legs.rankings, fusion, scores) if p not in hide]
    ordered = ordered[:limit]
    missing = [p for p in ordered if p not in legs.payloads]
    payloads = dict(legs.payloads)
    payloads.update(engine.first_chunks(missing))
    out = []
    for p in ordered:
        chunk = payloads.get(p)  # None: the card has no point (yet)
        text = str(chunk.get("text", "")) if chunk else ""
        if p in graph.cards:
            title = graph.cards[p].title
        else:
            title = str(chunk.get("title", p)) if chunk else p
        out.append(
            RelatedSuggestion(
                p,
                title,
                round(scores[p], 6),
                _reason(graph, p, legs, fusion, text),
                int(chunk.get("line_start", 0)) if chunk else 0,
                int(chunk.get("line_end", 0)) if chunk else 0,
                excerpt(text, []),
            )
        )
    return out


_REASONS = {
    "adamic_adar": "two hops away via {}",
    "cocitation": "linked together with this card from {}",
    "coupling": "links the same cards: {}",
    "hub_lines": "listed beside this card in {}",
    "backlinks": "links to this card",
    "similar_links": "linked from similar cards: {}",
}


_NAMED_AS = {  # legs whose "via" is the text that names the card
    "inflections": "named here in another number: {}",
    "short_names": "named here by its short name: {}",
    "labels": "named here as other cards' links name it: {}",
}


def _reason(
    graph: LinkGraph, path: str, legs: SuggestionLegs, fusion: SuggestFusion, text: str
) -> str:
    credit: dict[str, float] = {}
    for name, ranking in legs.rankings.items():
        w = fusion.weights.get(name, 0.0)
        if w > 0 and path in ranking[: fusion.depth]:
            credit[name] = w / (fusion.k + ranking.index(path) + 1)
    top = max(credit, key=lambda n: (credit[n], n), default="")
    if top in ("mentions", "confident"):
        return "named in this card"
    if top in _NAMED_AS:
        said = legs.via.get(top, {}).get(path, ["it"])
        return _NAMED_AS[top].format(said[0])
    if top in _REASONS:
        cards = legs.via.get(top, {}).get(path, [])
        names = ", ".join(graph.cards[s].title for s in cards[:2] if s in graph.cards)
        return _REASONS[top].format(names or "the graph")
    return "similar passage: " + excerpt(text, [], 80)


def chunk_vectors(
    engine: SearchEngine, path: str, chunks: Sequence[Chunk], *, read: Reader = direct
) -> list[list[float]]:
    """Vectors for a card's chunks: the index's where the text is unchanged (read through
    ``read``), else embedded now (unsaved edits; outside ``read``). Measured: re-embedding
    every chunk made "Add related links" take up to 1-2 s on long cards."""
    texts = [c.embed_text for c in chunks]
    stored = read(lambda: engine.stored_vectors(path, texts))
    missing = [i for i, v in enumerate(stored) if v is None]
    out: list[list[float] | None] = list(stored)
    if missing:
        fresh = engine.embedder.embed([texts[i] for i in missing])
        for i, vec in zip(missing, fresh, strict=True):
            out[i] = vec.tolist()
    return [v for v in out if v is not None]


def _distinct(paths: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def two_hop_neighbours(
    graph: LinkGraph, path: str, exclude: set[str]
) -> list[tuple[str, list[str]]]:
    """Cards two hops away, with the neighbours they share, ranked by Adamic-Adar."""
    if path not in graph.graph:
        return []
    first = graph.neighbours(path)
    score: dict[str, float] = {}
    shared: dict[str, list[str]] = {}
    for n in first:
        nbrs = graph.neighbours(n)
        weight = 1.0 / math.log(len(nbrs) + 1.5)
        for m in nbrs:
            if m in exclude or m in first:
                continue
            score[m] = score.get(m, 0.0) + weight
            shared.setdefault(m, []).append(n)
    ranked = sorted(score, key=lambda m: (-score[m], m))
    return [(m, shared[m]) for m in ranked]


def _ranked(
    score: Mapping[str, float], via: Mapping[str, list[str]]
) -> list[tuple[str, list[str]]]:
    return [(m, list(via[m])) for m in sorted(score, key=lambda m: (-score[m], m))]


def _spread(
    pivots: Iterable[str],
    step: Callable[[str], Sequence[str]],
    path: str,
    exclude: Set[str],
) -> list[tuple[str, list[str]]]:
    """The cards one ``step`` away from each pivot (none of ``exclude``, not ``path``), each
    pivot weighted by how few cards it reaches (1/log(n + 1.5)), with the pivots that reach
    them."""
    score: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for pivot in pivots:
        reached = step(pivot)
        weight = 1.0 / math.log(len(reached) + 1.5)
        for t in reached:
            if t in exclude or t == path:
                continue
            score[t] = score.get(t, 0.0) + weight
            via.setdefault(t, []).append(pivot)
    return _ranked(score, via)


def co_cited(graph: LinkGraph, path: str, exclude: Set[str]) -> list[tuple[str, list[str]]]:
    """Co-citation: cards that other cards link together with ``path``, each source weighted
    by how few cards it links (1/log(out-degree + 1.5)), with those sources."""
    return _spread(graph.backlinks(path), graph.outgoing, path, exclude)


def coupled(graph: LinkGraph, path: str, exclude: Set[str]) -> list[tuple[str, list[str]]]:
    """Bibliographic coupling: cards that link the cards ``path`` links (``exclude`` holds
    those: the card's current links), each shared target weighted by how few cards link it."""
    targets = sorted(t for t in exclude if t != path and t in graph.graph)
    return _spread(targets, graph.backlinks, path, exclude)


def hub_line_neighbours(
    graph: LinkGraph, path: str, exclude: Set[str]
) -> list[tuple[str, list[str]]]:
    """Cards linked on the same line as ``path`` in another card (weight 1), or on the list
    item or table row just above or below it (weight 0.5); summed over the cards that list them
    (each counts once per candidate, its best line)."""
    score: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for hub in graph.backlinks(path):
        card = graph.cards.get(hub)
        if card is None:
            continue
        by_line: dict[int, set[str]] = {}
        for rl in graph.links_of(hub):
            if rl.target is not None and rl.target != hub:
                by_line.setdefault(rl.link.span.start_pos.line, set()).add(rl.target)
        mine = [n for n, ts in by_line.items() if path in ts]
        if not mine:
            continue
        lines = card.text.split("\n")
        best: dict[str, float] = {}
        for n in mine:
            for step, w in ((0, 1.0), (-1, 0.5), (1, 0.5)):
                if step and not (_is_item(lines, n) and _is_item(lines, n + step)):
                    continue
                for t in by_line.get(n + step, ()):
                    if t != path and t not in exclude and w > best.get(t, 0.0):
                        best[t] = w
        for t, w in best.items():
            score[t] = score.get(t, 0.0) + w
            via.setdefault(t, []).append(hub)
    return _ranked(score, via)


def linking_here(graph: LinkGraph, path: str, exclude: Set[str]) -> list[tuple[str, list[str]]]:
    """Cards that link to ``path`` and that it does not link back, those linking fewest cards
    first (a short card's link is more specific)."""
    score = {
        s: 1.0 / math.log(len(graph.outgoing(s)) + 1.5)
        for s in graph.backlinks(path)
        if s not in exclude and s != path
    }
    return _ranked(score, {s: [] for s in score})


def _is_item(lines: Sequence[str], n: int) -> bool:
    """Line ``n`` is a list item or a table row (as the graph rerank's hub lines)."""
    return 0 <= n < len(lines) and is_list_line(lines[n])


def linked_by_similar(
    graph: LinkGraph, similar: Sequence[str], exclude: Set[str]
) -> list[tuple[str, list[str]]]:
    """Cards that ``similar`` (cards like this one, most similar first) link: each similar card
    at rank r gives 1/log2(r + 1), shared among its links (1/log(out-degree + 1.5) each)."""
    score: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for r, s in enumerate(similar, start=1):
        targets = graph.outgoing(s)
        weight = 1.0 / math.log2(r + 1) / math.log(len(targets) + 1.5)
        for t in targets:
            if t in exclude:
                continue
            score[t] = score.get(t, 0.0) + weight
            via.setdefault(t, []).append(s)
    return _ranked(score, via)


# ------------------------------------------------------------------ link labels

LABEL_MAX_CHARS = 60  # a longer link text is part of a sentence, not a name for the card
# a label counts once at least this many cards show it on their links to the card: a name
# one card gave it in passing ("in", "here") would match every such word in every card
LABEL_MIN_CARDS = 2


@dataclass(frozen=True, slots=True)
class LinkLabels:
    """The names a vault's writers gave cards in their links' visible text
    (``[[Direct Current|DC]]``, ``[text](Card.md)``) that are none of the card's own names
    (title, file name, aliases, id: :func:`~zettel_lsp.graph.resolver.card_keys`), shown so
    by at least :data:`LABEL_MIN_CARDS` cards: such
    names find no title mention, and a card that writes "neural nets" where other cards link
    [[Neural Network|neural nets]] likely means that card. A label the mention pass would not
    look for as a title (shorter than 3 characters: "OS", "DC") is left out; the short-names
    leg finds such titles and aliases, not labels."""

    matcher: MentionMatcher  # normalised label -> the cards links show it for
    uses: Mapping[tuple[str, str], int]  # (label, card): cards that link the card with it
    total: Mapping[str, int]  # label: cards that show it on a link, to any card


_Table = TypeVar("_Table")
_TABLES: weakref.WeakKeyDictionary[LinkGraph, dict[str, tuple[int, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _per_graph(graph: LinkGraph, make: Callable[[LinkGraph], _Table]) -> _Table:
    """``make(graph)``, of the graph's links and names alone: kept per graph and made again
    when a change since could move a link or a name (:attr:`LinkGraph.link_generation`; a save
    that changes prose only keeps it)."""
    kept = _TABLES.setdefault(graph, {})
    name = make.__name__
    got = kept.get(name)
    if got is not None and got[0] == graph.link_generation:
        return cast(_Table, got[1])
    generation = graph.link_generation
    table = make(graph)
    kept[name] = (generation, table)
    return table


def link_labels(graph: LinkGraph) -> LinkLabels:
    """The graph's :class:`LinkLabels` (:func:`_per_graph`): one pass over the links and an
    automaton over the labels (0.46 s at 100k cards)."""
    return _per_graph(graph, _make_labels)


def _make_labels(graph: LinkGraph) -> LinkLabels:
    own: dict[str, set[str]] = {}  # card -> the names it can be linked by, normalised

    def names(target: str) -> set[str]:
        got = own.get(target)
        if got is None:
            got = own[target] = {normalise(n) for n in card_keys(graph.cards[target])}
        return got

    uses: dict[tuple[str, str], int] = {}
    total: dict[str, int] = {}
    for source in graph.cards:
        pairs: set[tuple[str, str]] = set()
        for rl in graph.links_of(source):
            target, label = rl.target, rl.link.label
            if not label or target is None or rl.link.is_embed or target == source:
                continue
            if target not in graph.cards or len(label) > LABEL_MAX_CHARS:
                continue
            norm = normalise(label)
            if norm and norm not in names(target):
                pairs.add((norm, target))
        for pair in pairs:
            uses[pair] = uses.get(pair, 0) + 1
        for norm in {n for n, _ in pairs}:
            total[norm] = total.get(norm, 0) + 1
    uses = {pair: n for pair, n in uses.items() if n >= LABEL_MIN_CARDS}
    matcher = MentionMatcher(uses, graph.mention_min_length)
    return LinkLabels(matcher, uses, total)


def labelled(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> list[tuple[str, list[str]]]:
    """The labels leg: the cards ``card`` names (outside ``blocked``, by default what may not
    become a link, :func:`~zettel_lsp.notes.mentions.unlinkable`) by a label other cards'
    links show for them (:func:`link_labels`), with that label; ranked by the share of the
    label's cards that mean this card by it, then by how many do, then by where it is first
    named."""
    table = link_labels(graph)
    if not len(table.matcher):
        return []
    best: dict[str, tuple[float, int, int]] = {}
    said: dict[str, str] = {}
    spans = unlinkable(card) if blocked is None else blocked
    for m in table.matcher.find(card.text, spans):
        total = table.total.get(m.phrase, 0)
        for target in m.keys:
            n = table.uses.get((m.phrase, target), 0)
            if not n or not total or target in exclude or target == card.path:
                continue
            key = (-n / total, -n, m.start)
            if target not in best or key < best[target]:
                best[target] = key
                said[target] = card.text[m.start : m.end]
    return [(t, [said[t]]) for t in sorted(best, key=lambda t: (best[t], t))]


# ------------------------------------------------------------------ inflected names

_LAST_WORD = re.compile(r"(?<![^\W\d_])([a-z]{3,})$")  # a name's last word, ASCII letters
_KEEP_S = ("ss", "us", "is")  # "Process", "Corpus", "Analysis": no plural -s to take off


def inflected_form(name: str) -> str | None:
    """The other number of a normalised name's last word (English, ASCII letters, 3 or more):
    "digital certificate" -> "digital certificates", "logic gates" -> "logic gate", "query" ->
    "queries", "patches" -> "patch", "analysis" -> "analyses"; None for a name whose last
    word is not such a word, or ends in "us". A rule, not a dictionary: a form that is no word
    ("series" -> "sery") is harmless, it is never written."""
    m = _LAST_WORD.search(name)
    if m is None:
        return None
    head, w = name[: m.start(1)], m.group(1)
    if w.endswith("ies") and len(w) > 4:
        form = w[:-3] + "y"
    elif w.endswith(("ches", "shes", "xes", "sses", "zes")):
        form = w[:-2]
    elif w.endswith("s") and not w.endswith(_KEEP_S):
        form = w[:-1]
    elif w.endswith("is"):  # "analysis" -> "analyses"
        form = w[:-2] + "es"
    elif w.endswith("us"):  # "corpus", "virus": no one plural
        return None
    elif w.endswith("y") and w[-2] not in "aeiou":
        form = w[:-1] + "ies"
    elif w.endswith(("s", "x", "z", "ch", "sh")):
        form = w + "es"
    else:
        form = w + "s"
    return head + form


INFLECTION_CHARS = 20_000  # the inflections leg reads this much of a card (1 MB notes exist)
INFLECTION_WORDS = 6  # names of at most this many words are looked for in another number
_WORD = re.compile(r"\w+")


def inflected(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> list[tuple[str, list[str]]]:
    """The inflections leg: cards ``card`` names in another number, a title or alias whose last
    word is written in the other number (:func:`inflected_form`) and that is no name as
    written (a mention finds those), outside ``blocked`` (by default what may not become a
    link, :func:`~zettel_lsp.notes.mentions.unlinkable`); with the text as
    written, most often named first, then by where first named. Each word of the card's first
    :data:`INFLECTION_CHARS` characters that has another number is looked up, with up to
    :data:`INFLECTION_WORDS` - 1 words before it as written, in the graph's name table: no
    automaton of the forms (one over every name's other number took 16 MB at 13k cards)."""
    names = graph.name_phrases()
    if not names:
        return []
    low = lower_same_length(card.text[:INFLECTION_CHARS])
    words = [(m.start(), m.end()) for m in _WORD.finditer(low)]
    if blocked is None:
        blocked = unlinkable(card)
    starts = [a for a, _ in blocked]
    count: dict[str, int] = {}
    first: dict[str, int] = {}
    said: dict[str, str] = {}
    for j, (ws, we) in enumerate(words):
        form = inflected_form(low[ws:we])
        if form is None:
            continue
        hit: tuple[int, tuple[str, ...]] | None = None
        for i in range(max(0, j - INFLECTION_WORDS + 1), j + 1):  # the longest first
            start = words[i][0]
            if low[start:we] in names:
                break  # a name as written: a mention, not an inflection
            owners = names.get(low[start:ws] + form)
            if owners is not None:
                hit = (start, owners)
                break
        if hit is None:
            continue
        start, owners = hit
        if _overlaps(blocked, starts, start, we):
            continue
        for target in owners:
            if target in exclude or target == card.path:
                continue
            count[target] = count.get(target, 0) + 1
            if target not in first:
                first[target] = start
                said[target] = card.text[start:we]
    return _most_named(count, first, said)


def _overlaps(
    blocked: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int
) -> bool:
    """Whether ``[start, end)`` overlaps one of ``blocked`` (sorted spans, ``starts`` their
    starts)."""
    k = bisect_right(starts, start) - 1
    return (k >= 0 and blocked[k][1] > start) or (k + 1 < len(blocked) and blocked[k + 1][0] < end)


def _most_named(
    count: Mapping[str, int], first: Mapping[str, int], said: Mapping[str, str]
) -> list[tuple[str, list[str]]]:
    """Cards most often named first, then by where first named, each with its text."""
    ranked = sorted(count, key=lambda t: (-count[t], first[t], t))
    return [(t, [said[t]]) for t in ranked]


# ------------------------------------------------------------------ short names

SHORT_NAME_CHARS = INFLECTION_CHARS  # the short-names leg reads this much of a card


@dataclass(frozen=True, slots=True)
class ShortNames:
    """The titles and aliases too short for the mention pass ("OS", "DC", "IR", "C", "F*",
    "5G": shorter than :attr:`LinkGraph.mention_min_length`) that hold a capital letter, each
    as written (NFC), with its cards; and one case-sensitive pattern over them all."""

    pattern: re.Pattern[str] | None
    owners: Mapping[str, tuple[str, ...]]
    mixed: frozenset[str]  # the names with a small letter too ("Go"): not at a sentence's start


_SENTENCE_START = re.compile(r"(?:^|[\n.!?:>#*+-]|\d\.)[ \t]*$")


def short_names(graph: LinkGraph) -> ShortNames:
    """The graph's :class:`ShortNames` (:func:`_per_graph`): one pass over the cards' titles
    and aliases."""
    return _per_graph(graph, _make_short_names)


def _make_short_names(graph: LinkGraph) -> ShortNames:
    least = graph.mention_min_length
    owners: dict[str, set[str]] = {}
    for card in graph.cards.values():
        for name in (card.title, *card.aliases):
            name = unicodedata.normalize("NFC", name).strip()
            if not any(c.isupper() for c in name) or any(c.isspace() for c in name):
                continue  # "ls", "cd": everyday words
            if long_enough(normalise(name), least):
                continue  # the mention pass looks for it
            owners.setdefault(name, set()).add(card.path)
    pattern = None
    if owners:
        # longest first, so "F*" wins over "F"; a name is a whole token: no word character
        # or dot before it, none after it, nor "+" or "#" ("C++", "C#"), nor a dotted tail
        names = "|".join(re.escape(n) for n in sorted(owners, key=lambda n: (-len(n), n)))
        pattern = re.compile(rf"(?<![\w.])(?:{names})(?![\w+#]|\.\w)")
    return ShortNames(
        pattern,
        {n: tuple(sorted(p)) for n, p in owners.items()},
        frozenset(n for n in owners if any(c.islower() for c in n)),
    )


def short_named(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> list[tuple[str, list[str]]]:
    """The short-names leg: cards ``card`` names by a title or alias too short for the mention
    pass (:func:`short_names`), written exactly as the name is (case and all: "OS" is a name,
    "os" and "Os" are not), as a whole token, outside ``blocked`` (by default what may not
    become a link, :func:`~zettel_lsp.notes.mentions.unlinkable`), in the card's first
    :data:`SHORT_NAME_CHARS` characters. A name with a small letter ("Go") does not count at
    the start of a sentence, line or list item, where any word is capitalised. Most often named
    first, then by where first named; a name two cards share names both."""
    table = short_names(graph)
    if table.pattern is None:
        return []
    text = card.text[:SHORT_NAME_CHARS]
    if blocked is None:
        blocked = unlinkable(card)
    starts = [a for a, _ in blocked]
    count: dict[str, int] = {}
    first: dict[str, int] = {}
    said: dict[str, str] = {}
    for m in table.pattern.finditer(text):
        start, end = m.span()
        if _overlaps(blocked, starts, start, end):
            continue
        name = m.group()
        if name in table.mixed and _SENTENCE_START.search(text, max(0, start - 8), start):
            continue
        for target in table.owners[name]:
            if target in exclude or target == card.path:
                continue
            count[target] = count.get(target, 0) + 1
            if target not in first:
                first[target] = start
                said[target] = name
    return _most_named(count, first, said)
