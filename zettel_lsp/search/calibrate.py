"""The vault's own links as a judged set for its link suggestions (issue #15).

Vaults link differently: Dendron notes link along their hierarchy (what similar cards link is the
best evidence there), a Zettelkasten of atomic cards links the names it writes (the mentions
are), an Obsidian help vault links the pages that are explained elsewhere. One fusion of the
suggestion legs chosen on other vaults leaves some of that on the table. Every vault carries its
own answer key, though: the links it already has.

:func:`self_holdout` draws a hold-out from the vault's links the way the shared link hold-outs
were made (20% of the distinct targets of every card with at least 3 links, seeded), on a
sample of cards, half of them as ``mention`` (the link becomes its visible text) and half as
``removed`` (the sentence goes). :func:`self_legs` un-links them in memory (no file is written),
builds the graph of the un-linked cards, and computes every suggestion leg of each sampled card
against that graph and the vault's own index, exactly as ``eval-links`` does on a copy.
:mod:`zettel_lsp.search.fusion_tune` then chooses the fusion on those legs.

What this cannot see: the index still holds the sampled cards' original text. Their own chunks
are never suggested (a card is not suggested to itself), and their passages as queries are the
un-linked text (embedded when changed), so what leaks is their text as *other* cards' BM25
statistics and as neighbours in the dense leg of the links of similar cards: small, and the same
for every fusion compared.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import partial
from typing import Any

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.mention_index import MentionCache
from zettel_lsp.index.db import IndexDB
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.search.engine import Reader, SearchEngine, direct
from zettel_lsp.search.fusion_tune import (
    describe,
    from_arrays,
    fusion_from,
    leg_arrays,
    objective,
    to_arrays,
    tune,
)
from zettel_lsp.search.suggest import (
    DEFAULT_SUGGEST_FUSION,
    LEG_DEPTH,
    SUGGEST_LEGS,
    SuggestFusion,
    linked_targets,
    suggestion_legs,
)

VARIANTS = ("mention", "removed")
SHARE = 5  # one target in five held out (ceil), as the shared hold-outs
MIN_LINKS = 3  # cards with fewer distinct link targets are not sampled
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]?")


@dataclass(frozen=True, slots=True)
class SelfHeldOut:
    src: str
    dsts: frozenset[str]
    variant: str  # "mention" or "removed"


def self_holdout(graph: LinkGraph, *, sources: int, seed: int = 0) -> list[SelfHeldOut]:
    """At most ``sources`` cards with at least :data:`MIN_LINKS` distinct link targets, drawn
    with ``random.Random(seed)``; of each, ``ceil(n / 5)`` targets; the variants alternate over
    the drawn cards (sorted), so each gets half."""
    by_src: dict[str, set[str]] = {}
    for src, dst in graph.linked_pairs():
        if src in graph.cards and dst in graph.cards:
            by_src.setdefault(src, set()).add(dst)
    eligible = sorted(s for s, d in by_src.items() if len(d) >= MIN_LINKS)
    rng = random.Random(seed)
    picked = sorted(rng.sample(eligible, min(sources, len(eligible))))
    out = []
    for i, src in enumerate(picked):
        dsts = sorted(by_src[src])
        n = -(-len(dsts) // SHARE)
        out.append(SelfHeldOut(src, frozenset(rng.sample(dsts, n)), VARIANTS[i % 2]))
    return out


def unlinked_text(graph: LinkGraph, src: str, dsts: Set[str], variant: str) -> tuple[str, int]:
    """The text of card ``src`` with its links to ``dsts`` un-linked (variant ``mention``: each
    link becomes its visible text; ``removed``: the sentence that holds it goes), and how many
    links were changed."""
    card = graph.cards[src]
    edits: list[tuple[int, int, str]] = []
    for rl in graph.links_of(src):
        if rl.target in dsts:
            s, e = rl.link.span.start, rl.link.span.end
            if variant == "mention":
                edits.append((s, e, _visible(rl.link.label, rl.link.target)))
            else:
                edits.append(_sentence_around(card.text, s, e))
    text = card.text
    last = len(text) + 1
    changed = 0
    for s, e, new in sorted(set(edits), reverse=True):
        if e > last:  # overlapping sentence edits: the later one already removed it
            continue
        text = text[:s] + new + text[e:]
        last = s
        changed += 1
    return text, changed


def _visible(label: str | None, target: str) -> str:
    return label or target.rsplit("/", 1)[-1].removesuffix(".md")


def _sentence_around(text: str, start: int, end: int) -> tuple[int, int, str]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    for m in _SENTENCE.finditer(text, line_start, line_end):
        if m.start() <= start and m.end() >= end:
            return m.start(), m.end(), ""
    return line_start, line_end, ""


def self_legs(
    engine: SearchEngine,
    held: Sequence[SelfHeldOut],
    *,
    title_source: TitleSource | str = TitleSource.AUTO,
    legs: Sequence[str] = SUGGEST_LEGS,
    depth: int = LEG_DEPTH,
    read: Reader = direct,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> dict[str, list[dict[str, Any]]]:
    """Per variant, one entry per sampled card whose links could be un-linked: its held-out
    targets (``dsts``) and every leg's ranking (``legs``), as ``eval-links --dump-legs`` writes
    them, computed on the graph of the vault with every sampled link un-linked (built apart:
    the vault's graph is only read, through ``read``, as are the index's points)."""
    graph = engine.graph

    def unlink() -> tuple[dict[str, str], list[Card], MentionCache, int]:
        changed: dict[str, str] = {}
        for h in held:
            if h.src not in graph.cards:  # deleted since the draw (the vault changes meanwhile)
                continue
            text, n = unlinked_text(graph, h.src, h.dsts, h.variant)
            if n:
                changed[h.src] = text
        return changed, list(graph.cards.values()), graph.mention_cache(), graph.mention_min_length

    out: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    if should_stop():  # (a server's waits for a quiet moment: the build takes a while)
        return out
    changed, cards, mentions, min_length = read(unlink)
    cards = [
        parse_card(c.path, changed[c.path], title_source=title_source) if c.path in changed else c
        for c in cards
    ]
    unlinked = LinkGraph.build(cards, mention_min_length=min_length, mentions=mentions)
    other = SearchEngine(
        engine.store,
        engine.embedder,
        unlinked,
        dense_ready=lambda: engine.dense_available,
        titles=engine.titles,  # unused by the legs; not built again
    )
    todo = [h for h in held if h.src in changed]
    for i, h in enumerate(todo):
        if should_stop():
            break
        card = unlinked.cards[h.src]
        still = linked_targets(unlinked, card)
        dsts = sorted(d for d in h.dsts if d not in still)  # linked twice, once un-linked
        if dsts:
            found = suggestion_legs(other, card, legs, depth=depth, read=read)
            out[h.variant].append(
                {
                    "src": h.src,
                    "dsts": dsts,
                    "legs": found.rankings,
                    "confidence": {p: round(c, 4) for p, c in found.confidence.items()},
                    "baselines": {},
                }
            )
        if progress is not None:
            progress(i + 1, len(todo))
    return out


def dump_document(
    entries: Sequence[Mapping[str, Any]], variant: str, holdout: str = "self"
) -> dict[str, Any]:
    """Legs in the layout of ``eval-links --dump-legs`` (``holdout``: which hold-out)."""
    return {"holdout": holdout, "variant": variant, "depth": LEG_DEPTH, "sources": list(entries)}


MIN_SOURCES = 30  # fewer cards with 3+ links: too little to learn from, the default stays
SOURCES = 1200  # cards drawn (their links un-linked together, as in a link hold-out)
ROUNDS = 3  # where fewer cards have 3+ links: draws with other seeds, each on its own graph
CALIBRATION_FORMAT = 3  # 2: the inflections and labels legs; 3: short_names (older are redone)
CALIBRATION_KEY = "suggest-fusion"  # in the index database's meta table
STALE = 0.1  # made again when the vault's cards or links changed by this share since


@dataclass(frozen=True, slots=True)
class Calibration:
    """A fusion chosen on the vault's own links, with what it was chosen on."""

    fusion: SuggestFusion
    default_recall: float  # Recall@10 of the default on the self hold-outs (mean of variants)
    recall: float  # and of the chosen fusion
    sources: int  # sampled cards (over all rounds)
    pairs: int  # held-out links
    cards: int  # the vault's cards and distinct links when it was made
    links: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CALIBRATION_FORMAT,
            "fusion": describe(self.fusion),
            "default_recall@10": round(self.default_recall, 4),
            "recall@10": round(self.recall, 4),
            "sources": self.sources,
            "pairs": self.pairs,
            "cards": self.cards,
            "links": self.links,
            "seconds": round(self.seconds, 1),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration | None:
        """None for another format or a fusion naming legs this version lacks."""
        if data.get("format") != CALIBRATION_FORMAT:
            return None
        try:
            fusion = fusion_from(data["fusion"])
            made = cls(
                fusion,
                float(data["default_recall@10"]),
                float(data["recall@10"]),
                int(data["sources"]),
                int(data["pairs"]),
                int(data["cards"]),
                int(data["links"]),
                float(data["seconds"]),
            )
        except (KeyError, TypeError, ValueError, AssertionError):
            return None
        ok = set(fusion.weights) <= set(SUGGEST_LEGS) and fusion.legs and fusion.depth > 0
        return made if ok and fusion.k >= 0 else None


def _step(progress: Callable[[int, int], None], before: int, draws: int, i: int, n: int) -> None:
    progress(before + i, draws * n)


def calibrate(
    engine: SearchEngine,
    *,
    title_source: TitleSource | str = TitleSource.AUTO,
    start: SuggestFusion = DEFAULT_SUGGEST_FUSION,
    sources: int = SOURCES,
    rounds: int = ROUNDS,
    seed: int = 0,
    read: Reader = direct,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Calibration | None:
    """The suggestion fusion chosen on the vault's own links.

    A self hold-out (:func:`self_holdout`) of ``sources`` cards, or, where fewer cards have 3+
    links, ``rounds`` of them with other seeds; their legs (:func:`self_legs`); then the legs'
    weights chosen from ``start`` by coordinate ascent
    (:func:`~zettel_lsp.search.fusion_tune.tune`, ``weights_only``) on the mean Recall@10 of the
    two variants, with neither variant allowed below its Recall@10 under ``start`` (``keep``
    0): a vault's suggestions never get worse on its own links, of either kind. Chosen so by
    the held-out links of four vaults (docs/evaluation.md, "Self-tuned suggestions"). None when
    fewer than :data:`MIN_SOURCES` cards have 3 or more links, or when ``should_stop`` said so
    (the caller keeps ``start``). ``should_stop`` is asked before each card and may wait (a
    server's waits for a moment without requests)."""
    t0 = time.perf_counter()
    graph = engine.graph
    found: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    drawn = 0
    first = read(lambda: self_holdout(graph, sources=sources, seed=seed))
    if len(first) < MIN_SOURCES:
        return None
    draws = 1 if len(first) >= sources else rounds
    for r in range(draws):
        held = (
            first if r == 0 else read(partial(self_holdout, graph, sources=sources, seed=seed + r))
        )
        step = None if progress is None else partial(_step, progress, r * len(first), draws)
        legs = self_legs(
            engine,
            held,
            title_source=title_source,
            read=read,
            progress=step,
            should_stop=should_stop,
        )
        if should_stop():
            return None
        for variant, entries in legs.items():
            found[variant].extend(entries)
        drawn += len(held)
    arrays = [leg_arrays(e, name=v, vault="self", variant=v) for v, e in found.items() if e]
    if not arrays:
        return None
    chosen = from_arrays(tune(arrays, start, weights_only=True, keep=0.0))
    cards, links = read(lambda: (len(graph.cards), len(graph.linked_pairs())))
    return Calibration(
        chosen,
        objective(arrays, to_arrays(start)),
        objective(arrays, to_arrays(chosen)),
        drawn,
        sum(len(e["dsts"]) for v in found.values() for e in v),
        cards,
        links,
        time.perf_counter() - t0,
    )


def load_calibration(db: IndexDB) -> Calibration | None:
    """The calibration kept in an index's database; None when there is none, or it is of
    another format (it is then made again; the default serves meanwhile)."""
    data = db.get(CALIBRATION_KEY)
    return Calibration.from_json(data) if isinstance(data, dict) else None


def save_calibration(db: IndexDB, calibration: Calibration) -> None:
    db.put(CALIBRATION_KEY, calibration.to_json())


def is_stale(calibration: Calibration | None, cards: int, links: int) -> bool:
    """Whether a calibration should be made (again) for a vault of ``cards`` and ``links``:
    there is none, or either count moved by :data:`STALE` or more since."""
    if calibration is None:
        return True
    return abs(cards - calibration.cards) >= STALE * max(calibration.cards, 1) or abs(
        links - calibration.links
    ) >= STALE * max(calibration.links, 1)
