"""Link suggestions for one card (its current text, unsaved edits included):

- **unlinked mentions**: spans that name another card (title or alias) without linking it, each
  with its exact range and the ``[[...]]`` text to put there (the alias form ``[[Target|text]]``
  when the visible text differs from the name the link would use);
- **related but unmentioned**: cards close in meaning to this card's chunks, helped by graph
  proximity (cards two hops away are likely links), excluding the card itself and cards it
  already links to, each with a one-line reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import strip_md
from zettel_lsp.index.chunker import Chunk, chunk_card
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.search.engine import Reader, SearchEngine, direct
from zettel_lsp.search.fusion import rrf_scores
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
    out = []
    for m in graph.find_mentions_in(card):
        target = graph.cards[m.target]
        name = link_name(graph, m.target, card.path)
        replacement = f"[[{name}]]" if m.text == name else f"[[{name}|{m.text}]]"
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
            )
        )
    return out


def by_specificity(graph: LinkGraph, mentions: Sequence[MentionSuggestion]) -> list[str]:
    """Mentioned cards, most specific first: fewest cards linking to or mentioning them (a
    card that 900 others name, like "Data", is a weak suggestion), then the longest phrase.
    Measured on zettelkasten-13k's link hold-out: Recall@10 0.658 in order of appearance,
    0.800 in this order (docs/evaluation.md)."""
    longest: dict[str, int] = {}
    for m in mentions:
        longest[m.target] = max(longest.get(m.target, 0), len(m.text))
    refs = {t: len(graph.backlinks(t)) + len(graph.mentioned_by(t)) for t in longest}
    return sorted(longest, key=lambda t: (refs[t], -longest[t], t))


def linked_targets(graph: LinkGraph, card: Card) -> set[str]:
    """Cards the (possibly unsaved) card links to now."""
    out = set()
    for link in card.links:
        res = graph.resolve_link(link, card.path)
        if res.target is not None:
            out.add(res.target)
    return out


def related_suggestions(
    engine: SearchEngine,
    card: Card,
    limit: int = 10,
    *,
    per_chunk: int = 20,
    read: Reader = direct,
) -> list[RelatedSuggestion]:
    """Cards related in meaning or by the graph that this card neither is nor links to.

    ``read`` (the server's vault lock) runs the index and graph steps; vectors for chunks the
    index does not hold (unsaved edits) are embedded outside it."""
    chunks = chunk_card(card, engine.embedder.count_tokens)
    vectors = (
        chunk_vectors(engine, card.path, chunks, read=read)
        if chunks and engine.dense_available
        else None
    )
    return read(lambda: _rank_related(engine, card, chunks, vectors, limit, per_chunk))


def _rank_related(
    engine: SearchEngine,
    card: Card,
    chunks: Sequence[Chunk],
    vectors: Sequence[list[float]] | None,
    limit: int,
    per_chunk: int,
) -> list[RelatedSuggestion]:
    graph = engine.graph
    exclude = linked_targets(graph, card) | {card.path}
    chunks = chunk_card(card, engine.embedder.count_tokens)
    rankings: dict[str, list[str]] = {}
    best_chunk: dict[str, ChunkPayload] = {}
    if chunks and vectors is not None:
        for c, vec in zip(chunks, vectors, strict=True):
            hits = engine.store.dense_search(vec, per_chunk + len(exclude))
            ranked = [h for h in hits if h.path not in exclude]
            rankings[f"dense{c.index}"] = _distinct([h.path for h in ranked])
            for h in ranked:
                best_chunk.setdefault(h.path, h.payload)
    if chunks:
        text = " ".join(c.embed_text for c in chunks)[:2000]
        hits = engine.store.bm25_search(text, per_chunk + len(exclude))
        ranked = [h for h in hits if h.path not in exclude]
        rankings["bm25"] = _distinct([h.path for h in ranked])
        for h in ranked:
            best_chunk.setdefault(h.path, h.payload)
    two_hops = two_hop_neighbours(graph, card.path, exclude)
    if two_hops:
        rankings["graph"] = [p for p, _ in two_hops]
    scores = rrf_scores(rankings)
    via = dict(two_hops)
    ordered = sorted(scores, key=lambda p: (-scores[p], p))[:limit]
    missing = [p for p in ordered if p not in best_chunk]
    best_chunk.update(engine.first_chunks(missing))
    out = []
    for p in ordered:
        chunk = best_chunk.get(p)  # None: the card has no point (yet)
        text = str(chunk.get("text", "")) if chunk else ""
        if p in graph.cards:
            title = graph.cards[p].title
        else:
            title = str(chunk.get("title", p)) if chunk else p
        shared = via.get(p)
        if shared:
            names = ", ".join(graph.cards[s].title for s in shared[:2] if s in graph.cards)
            reason = f"two hops away via {names}"
        else:
            reason = "similar passage: " + excerpt(text, [], 80)
        out.append(
            RelatedSuggestion(
                p,
                title,
                round(scores[p], 6),
                reason,
                int(chunk.get("line_start", 0)) if chunk else 0,
                int(chunk.get("line_end", 0)) if chunk else 0,
                excerpt(text, []),
            )
        )
    return out


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
