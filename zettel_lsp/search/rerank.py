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

**Hub lines** (issue #15). A query that *describes* a card rather than naming it matches the hub
that lists the card with a gloss ("- [[Merge sort]]: split the list in halves, sort each, merge")
as well as, or better than, the card itself. The words of such a line are the hub's evidence
for the card it links, not for the hub. A hub line is a list item or table row that links other
cards; its gloss is its words outside the links (words inside links are the title rule's). For
a candidate ``c`` whose best-matching hub line ``l`` holds the most distinct query terms,

    cover(c) = distinct query terms in l's gloss / distinct query terms

and when ``cover(c) >= line_cover`` (and the gloss holds at least ``line_min_terms`` terms):

    score(c) *= 1 - line_discount * cover(c)
    score(L) += line_credit * cover(c) * score_before(c) / (lines tied with l * cards l links)

for each card ``L`` that ``l`` (or a line tied with it) links. A card credited this way rises
at most to

    ceiling(L) = score_before(c) + line_lift * cover(c) * (score_before(top) - score_before(c))

(the highest over the cards crediting it; ``top`` is the best candidate). A hub's card score
understates its line: a long list matches a query through one line, so the hub sits far below
the top while that line holds all of the query. With ``line_lift`` 0 the card rises at most to
its hub's score; with ``line_lift`` > 1 a line holding the whole query may lift it above the
top candidate, one holding a third of it a third of the way. The credit still bounds the rise,
and the hub, discounted a little, stays below its leaf. Only the *best* line counts: a gloss
is one line, and a card whose query words are scattered over many list items is a page about
the topic, not a hub answering for one card.

Credit flows only from the matching lines of a candidate to the cards those lines link, never
from a candidate to any neighbour: a hub that every card links to collects nothing unless lines
linking it match the query, and a hub whose match is spread over many lines splits its credit
among them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.masking import LIST_ITEM
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
    # Which title matches make a card a target (see search/titles.py): not any candidate, nor
    # titles found *inside* a longer query (that credits hubs every card links to).
    target_kinds: frozenset[str] = frozenset({"exact", "covers"})
    # Hub lines (see the module); line_credit 0 switches them off.
    line_cover: float = 0.3  # share of the query's distinct terms the best hub line must hold
    line_discount: float = 0.1
    line_credit: float = 2.0
    line_min_terms: int = 2  # distinct query terms a gloss must hold at least
    # how far above its hub a credited card may rise: its ceiling is the hub's score before the
    # rerank plus line_lift * cover of the gap to the best candidate's (0: the hub's score).
    # Chosen with the others by leave-one-vault-out (benchmarks/hub_lines_tune.py).
    line_lift: float = 1.5


@dataclass(frozen=True, slots=True)
class HubLine:
    """A hub line of a candidate that holds query terms outside its links."""

    links: tuple[str, ...]  # the cards it links
    terms: frozenset[str]  # the query terms its gloss holds
    words: int  # the words of its gloss

    def key(self) -> tuple[int, float]:
        """Better lines first: more query terms, then a larger share of the gloss in them."""
        return len(self.terms), len(self.terms) / max(1, self.words)


@dataclass(frozen=True, slots=True)
class Evidence:
    own: float
    in_mentions: float
    targets: Mapping[str, float]  # mentioned card -> query-word occurrences inside its spans
    lines: Mapping[int, HubLine] = field(default_factory=dict)  # by line (0-based)

    @property
    def share(self) -> float:
        total = self.own + self.in_mentions
        return self.in_mentions / total if total else 0.0


def is_list_line(line: str) -> bool:
    """A list item or a table row (``|``), in a blockquote or not."""
    s = line.lstrip(" \t>")
    return s.startswith("|") or LIST_ITEM.match(s) is not None


def evidence(
    graph: LinkGraph, result: CardResult, terms: set[str], *, hub_lines_only: bool = False
) -> Evidence | None:
    """How much of the candidate's best chunk matches ``terms`` in its own prose vs in mentions.
    ``hub_lines_only``: None when the chunk has no hub line, and only the hub lines are read
    (only the hub-line rule can use it: the query names no card; ``own``, ``in_mentions`` and
    ``targets`` then count those lines only)."""
    card = graph.cards.get(result.path)
    if card is None or not terms:
        return None
    if hub_lines_only and not _may_have_hub_lines(graph, card.path):
        return None
    lines = LineIndex(card.text)
    first = int(result.chunk.get("line_start", 0))
    last = int(result.chunk.get("line_end", lines.line_count - 1))
    first = min(max(first, 0), lines.line_count - 1)
    last = min(max(last, first), lines.line_count - 1)
    start = lines.line_start(first)
    end = lines.line_start(last + 1) if last + 1 < lines.line_count else len(card.text)
    hub_lines = _hub_lines(graph, card.path, lines, start, end)
    if hub_lines_only and not hub_lines:
        return None
    spans: list[tuple[int, int, str, bool]] = []  # (start, end, target, is a link)
    for rl in graph.links_of(card.path):
        s = rl.link.span
        if s.start < end and s.end > start and rl.target != card.path:
            spans.append((s.start, s.end, rl.target or f"unresolved:{rl.link.target}", True))
    for mention in graph.mentions_of(card.path):
        if mention.start < end and mention.end > start:
            spans.append((mention.start, mention.end, mention.target, False))
    spans.sort()
    title_terms = {light_stem(w) for w in _WORD.findall(card.title)} & terms
    own = 3.0 * sum(1 for w in _WORD.findall(card.title) if light_stem(w) in terms)
    in_mentions = 0.0
    targets: dict[str, float] = {}
    line_terms: dict[int, set[str]] = {}
    gloss_words: dict[int, int] = {}  # hub line -> its words outside links and mentions
    j = 0
    if hub_lines_only:  # the words of the hub lines (a long query's paragraph reads the rest)
        ranges = [(max(start, lines.line_start(n)), _line_end(lines, n, end)) for n in hub_lines]
    else:
        ranges = [(start, end)]
    words = (w for a, b in sorted(ranges) for w in _WORD.finditer(card.text, a, b))
    for word in words:
        stem = light_stem(word.group(0))
        line = lines.line_of(word.start()) if hub_lines else -1
        if stem not in terms and line not in hub_lines:
            continue
        at = word.start()
        while j < len(spans) and spans[j][1] <= at:
            j += 1
        k = j
        inside = None
        in_link = False
        while k < len(spans) and spans[k][0] <= at:
            if spans[k][1] > at:
                inside, in_link = spans[k][2], spans[k][3]
                break
            k += 1
        # the gloss of a hub line: its words outside links (a title it names in passing is
        # part of the gloss: "- [[Event|Events]] are expressed as a collection of dots")
        in_gloss = line in hub_lines and not in_link
        if in_gloss:
            gloss_words[line] = gloss_words.get(line, 0) + 1
        if stem not in terms:
            continue
        if inside is None:
            own += 1
        else:
            in_mentions += 1
            targets[inside] = targets.get(inside, 0.0) + 1
        # evidence for the cards the line links; the card's own title words are its topic
        if in_gloss and stem not in title_terms:
            line_terms.setdefault(line, set()).add(stem)
    glosses = {
        line: HubLine(hub_lines[line], frozenset(ts), gloss_words[line])
        for line, ts in line_terms.items()
    }
    return Evidence(own, in_mentions, targets, glosses)


def _hub_line_rule(
    r: CardResult,
    ev: Evidence,
    score: float,
    n_terms: int,
    params: RerankParams,
    credits: dict[str, tuple[float, float]],
    factors: dict[str, float],
    top_score: float,
) -> None:
    """The hub-line part of :func:`graph_rerank` for candidate ``r`` (see the module).
    ``credits`` maps a card to (credit, the highest score it may reach); ``top_score`` is the
    best candidate's score before the rerank."""
    if not ev.lines:
        return
    best = max(line.key() for line in ev.lines.values())
    cover = best[0] / n_terms if n_terms else 0.0
    if best[0] < params.line_min_terms or cover < params.line_cover:
        return
    top = [line.links for line in ev.lines.values() if line.key() == best]
    share: dict[str, float] = {}
    for links in top:  # lines that tie split the credit, as do the cards one line links
        for t in links:
            if t != r.path:
                share[t] = share.get(t, 0.0) + 1.0 / (len(top) * len(links))
    if not share:
        return
    factors[r.path] = max(params.floor, 1.0 - params.line_discount * cover)
    r.notes["line_cover"] = round(cover, 3)
    for t, w in share.items():
        credit, highest = credits.get(t, (0.0, 0.0))
        bonus = params.line_credit * cover * score * w
        ceiling = score + params.line_lift * cover * max(0.0, top_score - score)
        credits[t] = (credit + bonus, max(highest, ceiling))


def _line_end(lines: LineIndex, line: int, end: int) -> int:
    """The offset where ``line`` ends (its newline excluded), at most ``end``."""
    nxt = lines.line_start(line + 1) if line + 1 < lines.line_count else end
    return min(nxt, end)


def _may_have_hub_lines(graph: LinkGraph, path: str) -> bool:
    """Whether the card links another card at all (a cheap test before reading its lines)."""
    return any(rl.target is not None and rl.target != path for rl in graph.links_of(path))


def _hub_lines(
    graph: LinkGraph, path: str, lines: LineIndex, start: int, end: int
) -> dict[int, tuple[str, ...]]:
    """The hub lines between offsets ``start`` and ``end`` of the card at ``path``: list items
    and table rows that link other cards, each with the cards it links."""
    by_line: dict[int, list[str]] = {}
    for rl in graph.links_of(path):
        s = rl.link.span
        t = rl.target
        if s.start < start or s.start >= end or t is None or t == path or t not in graph.cards:
            continue
        if rl.link.is_embed:
            continue
        targets = by_line.setdefault(s.start_pos.line, [])
        if t not in targets:
            targets.append(t)
    return {line: tuple(ts) for line, ts in by_line.items() if is_list_line(lines.line_text(line))}


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
    # words as the cards' text is read (\w+): "non-null" is "non" and "null"
    terms = {light_stem(p) for w in query_words for p in _WORD.findall(w)}
    targets = {p for p, kind in (title_matches or {}).items() if kind in params.target_kinds}
    if not targets and params.line_credit <= 0:
        return list(results)
    ranked = [CardResult(r.path, r.score, r.chunk, dict(r.legs), dict(r.notes)) for r in results]
    by_path = {r.path: r for r in ranked}
    before = {r.path: r.score for r in ranked}
    top_score = max(before.values())
    credits: dict[str, float] = {}
    line_factors: dict[str, float] = {}
    line_credits: dict[str, tuple[float, float]] = {}
    for r in ranked[: params.depth]:
        ev = evidence(graph, r, terms, hub_lines_only=not targets)
        if ev is None:
            continue
        if params.line_credit > 0 and ev.lines and r.path not in targets:
            _hub_line_rule(
                r, ev, before[r.path], len(terms), params, line_credits, line_factors, top_score
            )
        if ev.share < params.min_share or not ev.targets:
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
        r.score = before[r.path] * min(factor, line_factors.get(r.path, 1.0))
        r.notes["mention_share"] = round(ev.share, 3)
        r.notes["discount"] = round(factor, 3)
        for t, w in eligible.items():
            credits[t] = credits.get(t, 0.0) + (
                params.strength * params.credit * ev.share * before[r.path] * w / weight_sum
            )
    for path, factor in line_factors.items():
        if "discount" not in by_path[path].notes:
            by_path[path].score = before[path] * factor
    # a card credited by hub lines rises at most to its ceiling (its best hub's score before,
    # plus the lift)
    for t, (bonus, top) in line_credits.items():
        if bonus <= 0:
            continue
        current = by_path[t].score if t in by_path else 0.0
        capped = min(bonus, max(0.0, top - current))
        if capped > 0:
            credits[t] = credits.get(t, 0.0) + capped
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
