"""The related suggestions as the editor shows them: the fused legs, each card with its title,
an excerpt and a one-line reason."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card
from zettel_lsp.search.engine import Reader, SearchEngine, direct
from zettel_lsp.search.results import excerpt
from zettel_lsp.search.suggest.legs import (
    DEFAULT_SUGGEST_FUSION,
    SuggestFusion,
    SuggestionLegs,
    fused_scores,
    ordered_suggestions,
    suggestion_legs,
)
from zettel_lsp.search.suggest.mentions import mention_suggestions
from zettel_lsp.search.suggest.names import named_as_common_words


@dataclass(frozen=True, slots=True)
class RelatedSuggestion:
    path: str
    title: str
    score: float
    reason: str
    line_start: int
    line_end: int
    excerpt: str


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
    ``unmentioned``: leave out the cards the card names without linking (the editor offers
    those as "Link" fixes in place, or not at all when named only by a common word), and those
    it names only by a common word in another number or by a link label ("points" for "Point",
    :func:`~zettel_lsp.search.suggest.names.named_as_common_words`); the ranking of the others
    is the same.

    ``read`` (the server's vault lock) runs the index and graph steps; vectors for chunks the
    index does not hold (unsaved edits) are embedded outside it."""
    if fusion is None:
        fusion = engine.suggest_fusion() or DEFAULT_SUGGEST_FUSION
    legs = suggestion_legs(engine, card, fusion.legs, depth=fusion.depth, read=read)

    def hidden() -> Set[str]:  # under ``read``
        if not unmentioned:
            return frozenset()
        graph = engine.graph
        named = legs.mentioned
        if named is None:  # the fusion has no mention leg
            named = frozenset(m.target for m in mention_suggestions(graph, card))
        return named | named_as_common_words(graph, legs.via)

    return read(lambda: describe_related(engine, legs, fusion, limit, hidden()))


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
        chunk: Mapping[str, Any] = payloads.get(p) or {}  # {}: the card has no point (yet)
        text = str(chunk.get("text", ""))
        card = graph.cards.get(p)
        out.append(
            RelatedSuggestion(
                p,
                card.title if card is not None else str(chunk.get("title", p)),
                round(scores[p], 6),
                reason(graph, p, legs, fusion, text),
                int(chunk.get("line_start", 0)),
                int(chunk.get("line_end", 0)),
                excerpt(text, []),
            )
        )
    return out


# One line per leg, in plain words for the writer: what this note and the suggested one share.
_REASONS = {
    "adamic_adar": "connected through {}",
    "cocitation": "linked together with this note in {}",
    "coupling": "also links to {}",
    "hub_lines": "listed next to this note in {}",
    "similar_links": "linked from similar notes: {}",
}

_NAMED = {  # legs whose "via" is the text in this note that names the suggested one
    "mentions": "mentions «{}»",
    "confident": "mentions «{}»",
    "inflections": "mentions «{}»",
    "short_names": "mentions «{}»",
    "labels": "mentions «{}», as other notes' links call it",
}


def reason(
    graph: LinkGraph, path: str, legs: SuggestionLegs, fusion: SuggestFusion, text: str
) -> str:
    """Why ``path`` is suggested, from the leg that gave it the most credit."""
    credit: dict[str, float] = {}
    for name, ranking in legs.rankings.items():
        w = fusion.weights.get(name, 0.0)
        if w > 0 and path in ranking[: fusion.depth]:
            credit[name] = w / (fusion.k + ranking.index(path) + 1)
    top = max(credit, key=lambda n: (credit[n], n), default="")
    if top in _NAMED:
        said = legs.via.get(top, {}).get(path)
        return _NAMED[top].format(said[0]) if said else "named in this note"
    if top == "backlinks":
        return "links to this note"
    if top in _REASONS:
        cards = legs.via.get(top, {}).get(path, [])
        names = ", ".join(graph.cards[s].title for s in cards[:2] if s in graph.cards)
        return _REASONS[top].format(names) if names else "near in the link graph"
    passage = excerpt(text, [], 80)
    return f"similar passage: «{passage}»" if passage else "similar in meaning"
