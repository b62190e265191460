"""Graph rerank: the card that is *about* X ranks above the cards that merely *mention* X.

Lexical and embedding similarity rate hubs, index cards and "see [[X]]" cards as highly as the
card about X, because the query's words sit in their links and in X's title that they quote. For
each fused candidate ``c`` this module measures which share of ``c``'s match to the query comes
from **mention spans** (its links' text and targets, and other cards' titles or aliases quoted in
its prose) rather than from its own prose:

    share(c) = query-word occurrences inside mention spans / all query-word occurrences
               (the card's own title counts as its own evidence, three times)

When ``share(c) >= min_share`` and the mentioned card ``T`` is one the query names (its title or
alias matches the query), ``c`` is **discounted** and ``T`` is **credited** (a citation is
evidence for the cited card, like one step of personalised PageRank):

    score(c) *= 1 - strength * share(c) * proximity(c, T)
    score(T) += strength * credit * share(c) * score_before(c)

``proximity`` is 1 when ``c`` links to ``T`` (graph distance 1) and ``unlinked`` (0.6) when it
only names it in prose. Cards whose own prose matches (share below ``min_share``) keep their
score. The parameters are set by the evaluation in docs/evaluation.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import light_stem

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class RerankParams:
    strength: float = 1.0  # 0 disables the rerank
    min_share: float = 0.5
    credit: float = 0.5
    unlinked: float = 0.6  # proximity when c names T without linking it
    floor: float = 0.15  # a discounted score keeps at least this fraction
    depth: int = 30  # candidates examined
    # Which title matches make a card a target (see search/titles.py). Measured: letting any
    # candidate, or titles found *inside* a longer query, be a target sent credit to hubs that
    # every card links to (obsidian-help golden nDCG@5 0.725 -> 0.650 / 0.704).
    target_kinds: frozenset[str] = frozenset({"exact", "covers"})


_stem = light_stem


@dataclass(frozen=True, slots=True)
class Evidence:
    own: float
    in_mentions: float
    targets: Mapping[str, float]  # mentioned card -> query-word occurrences inside its spans

    @property
    def share(self) -> float:
        total = self.own + self.in_mentions
        return self.in_mentions / total if total else 0.0


def evidence(graph: LinkGraph, result: CardResult, terms: set[str]) -> Evidence | None:
    """How much of the candidate's best chunk matches ``terms`` in its own prose vs in mentions."""
    card = graph.cards.get(result.path)
    if card is None or not terms:
        return None
    lines = LineIndex(card.text)
    first = int(result.chunk.get("line_start", 0))
    last = int(result.chunk.get("line_end", lines.line_count - 1))
    first = min(max(first, 0), lines.line_count - 1)
    last = min(max(last, first), lines.line_count - 1)
    start = lines.line_start(first)
    end = lines.line_start(last + 1) if last + 1 < lines.line_count else len(card.text)
    spans: list[tuple[int, int, str]] = []
    for rl in graph.links_of(card.path):
        s = rl.link.span
        if s.start < end and s.end > start and rl.target != card.path:
            spans.append((s.start, s.end, rl.target or f"unresolved:{rl.link.target}"))
    for mention in graph.mentions_of(card.path):
        if mention.start < end and mention.end > start:
            spans.append((mention.start, mention.end, mention.target))
    spans.sort()
    own = 3.0 * sum(1 for w in _WORD.findall(card.title) if _stem(w) in terms)
    in_mentions = 0.0
    targets: dict[str, float] = {}
    j = 0
    for word in _WORD.finditer(card.text, start, end):
        if _stem(word.group(0)) not in terms:
            continue
        at = word.start()
        while j < len(spans) and spans[j][1] <= at:
            j += 1
        k = j
        inside = None
        while k < len(spans) and spans[k][0] <= at:
            if spans[k][1] > at:
                inside = spans[k][2]
                break
            k += 1
        if inside is None:
            own += 1
        else:
            in_mentions += 1
            targets[inside] = targets.get(inside, 0.0) + 1
    return Evidence(own, in_mentions, targets)


def graph_rerank(
    results: Sequence[CardResult],
    graph: LinkGraph,
    query_words: Sequence[str],
    *,
    title_matches: Mapping[str, str] | None = None,
    first_chunk: Callable[[str], ChunkPayload | None] | None = None,
    params: RerankParams = RerankParams(),  # frozen: safe to share
) -> list[CardResult]:
    """Return a new ranking. ``first_chunk(path)`` supplies a chunk payload for a credited card
    that was not a candidate (None: such cards are not added)."""
    if params.strength <= 0 or not results:
        return list(results)
    terms = {_stem(w) for w in query_words}
    targets = {p for p, kind in (title_matches or {}).items() if kind in params.target_kinds}
    if not targets:
        return list(results)
    ranked = [CardResult(r.path, r.score, r.chunk, dict(r.legs), dict(r.notes)) for r in results]
    by_path = {r.path: r for r in ranked}
    before = {r.path: r.score for r in ranked}
    credits: dict[str, float] = {}
    for r in ranked[: params.depth]:
        ev = evidence(graph, r, terms)
        if ev is None or ev.share < params.min_share or not ev.targets:
            continue
        eligible = {t: w for t, w in ev.targets.items() if t in targets and t != r.path}
        if not eligible:
            continue
        linked = set(graph.outgoing(r.path))
        weight_sum = sum(eligible.values())
        proximity = (
            sum((1.0 if t in linked else params.unlinked) * w for t, w in eligible.items())
            / weight_sum
        )
        factor = max(params.floor, 1.0 - params.strength * ev.share * proximity)
        r.score = before[r.path] * factor
        r.notes["mention_share"] = round(ev.share, 3)
        r.notes["discount"] = round(factor, 3)
        for t, w in eligible.items():
            credits[t] = credits.get(t, 0.0) + (
                params.strength * params.credit * ev.share * before[r.path] * w / weight_sum
            )
    for t, bonus in credits.items():
        if t in by_path:
            by_path[t].score += bonus
            by_path[t].notes["credit"] = round(bonus, 5)
        elif first_chunk is not None and t in graph.cards:
            chunk = first_chunk(t)
            if chunk is not None:
                added = CardResult(t, bonus, chunk.copy(), {}, {"credit": round(bonus, 5)})
                ranked.append(added)
                by_path[t] = added
    ranked.sort(key=lambda r: (-r.score, r.path))
    return ranked
