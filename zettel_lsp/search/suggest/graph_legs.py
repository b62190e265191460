"""The graph legs of the related ranking: candidates joined to a card by links alone (never
titles), each with the cards that join them, best first."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.search.rerank import is_list_line

# candidates best first, each with what joins it to the card (or the text that names it)
Ranked = list[tuple[str, list[str]]]


def two_hop_neighbours(graph: LinkGraph, path: str, exclude: Set[str]) -> Ranked:
    """Cards two hops away (none of ``exclude``, not ``path``), with the neighbours they share,
    ranked by Adamic-Adar."""
    first = graph.neighbours(path)
    return _spread(first, graph.neighbours, path, set(exclude) | first)


def _ranked(score: Mapping[str, float], via: Mapping[str, list[str]]) -> Ranked:
    return [(m, list(via[m])) for m in sorted(score, key=lambda m: (-score[m], m))]


def _spread(
    pivots: Iterable[str],
    step: Callable[[str], Collection[str]],
    path: str,
    exclude: Set[str],
    scale: Callable[[int], float] = lambda _: 1.0,
) -> Ranked:
    """The cards one ``step`` away from each pivot (none of ``exclude``, not ``path``), each
    pivot weighted by how few cards it reaches (``scale(its rank from 1) / log(n + 1.5)``),
    with the pivots that reach them."""
    score: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for rank, pivot in enumerate(pivots, start=1):
        reached = step(pivot)
        weight = scale(rank) / math.log(len(reached) + 1.5)
        for t in reached:
            if t in exclude or t == path:
                continue
            score[t] = score.get(t, 0.0) + weight
            via.setdefault(t, []).append(pivot)
    return _ranked(score, via)


def co_cited(graph: LinkGraph, path: str, exclude: Set[str]) -> Ranked:
    """Co-citation: cards that other cards link together with ``path``, each source weighted
    by how few cards it links (1/log(out-degree + 1.5)), with those sources."""
    return _spread(graph.backlinks(path), graph.outgoing, path, exclude)


def coupled(graph: LinkGraph, path: str, exclude: Set[str]) -> Ranked:
    """Bibliographic coupling: cards that link the cards ``path`` links (``exclude`` holds
    those: the card's current links), each shared target weighted by how few cards link it."""
    targets = sorted(t for t in exclude if t != path and t in graph.graph)
    return _spread(targets, graph.backlinks, path, exclude)


def hub_line_neighbours(graph: LinkGraph, path: str, exclude: Set[str]) -> Ranked:
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


def linking_here(graph: LinkGraph, path: str, exclude: Set[str]) -> Ranked:
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


def linked_by_similar(graph: LinkGraph, similar: Sequence[str], exclude: Set[str]) -> Ranked:
    """Cards that ``similar`` (cards like this one, most similar first) link: each similar card
    at rank r gives 1/log2(r + 1), shared among its links (1/log(out-degree + 1.5) each)."""
    return _spread(similar, graph.outgoing, "", exclude, lambda r: 1.0 / math.log2(r + 1))


_GRAPH_LEGS: dict[str, Callable[[LinkGraph, str, Set[str]], Ranked]] = {
    "adamic_adar": two_hop_neighbours,
    "cocitation": co_cited,
    "coupling": coupled,
    "hub_lines": hub_line_neighbours,
    "backlinks": linking_here,
}


def graph_legs(
    graph: LinkGraph, path: str, exclude: Set[str], legs: Iterable[str] = tuple(_GRAPH_LEGS)
) -> dict[str, Ranked]:
    """The graph legs in ``legs`` (by default all those of the graph alone): candidates (none
    of ``exclude``, nor ``path``) with the cards that join them to ``path``, best first. Only
    links count, never titles."""
    wanted = set(legs)
    ex = set(exclude) | {path}
    return {name: f(graph, path, ex) for name, f in _GRAPH_LEGS.items() if name in wanted}
