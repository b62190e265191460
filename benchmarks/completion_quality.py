"""Completion quality: can ``[[`` with nothing typed bring back a link that was removed?

    python benchmarks/completion_quality.py VAULT HOLDOUT.tsv [--n 500] [--seed 0]
        [--index-dir DIR] [--json]

For up to ``--n`` held-out links (src, dst) of the hold-out file (a seeded sample; rows whose
cards are missing, or where src holds no link resolving to dst, are skipped), src's text has the
first link to dst replaced by ``[[`` (the cursor right after it, nothing else typed; any other
link to dst in src becomes its visible text), and the completion logic the server uses ranks
the cards (:func:`zettel_lsp.search.complete.meaning_query`, the meaning search with
:func:`~zettel_lsp.search.complete.meaning_options`, then
:func:`~zettel_lsp.search.complete.rank_cards`). Reported: Recall@1, Recall@10 and MRR of dst
for

- ``ours``: the completion list (cut where the server cuts it, ``DEFAULT_LIMIT`` items);
- ``meaning``/``graph``: ours with one leg only (the other weights 0);
- ``alphabetical``: every card by title (cards src still links to, and src, last);
- ``most_linked``: every card, most backlinks first (the same tail).

The index is the vault's existing one (``--index-dir``; default
``/work/idx/cur/<vault name>`` when it exists), **copied to a temporary folder first** and
opened there, so the original is never written; without one, the vault is indexed into a
temporary folder. The held-out link is still in the copy's index and graph: the src card itself
never counts as an answer (it is "this card"), and the graph leg starts from the links of the
edited text (src's other links and its backlinks), not from src's stored edges.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zettel_lsp.eval.links import HeldOut, load_holdout
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search import complete as cx
from zettel_lsp.search.engine import SearchEngine, SearchOptions
from zettel_lsp.search.suggest import linked_targets
from zettel_lsp.vault import Vault

DEFAULT_INDEX_ROOT = Path("/work/idx/cur")
K = 10


@dataclass(frozen=True, slots=True)
class Case:
    """One held-out link, removed: src's edited card and where ``[[`` was typed."""

    src: str
    dst: str
    card: Card
    line: int
    col: int
    offset: int  # of the cursor


def make_case(graph: LinkGraph, held: HeldOut) -> Case | None:
    card = graph.cards.get(held.src)
    if card is None or held.dst not in graph.cards or held.src == held.dst:
        return None
    spans = sorted(
        (rl.link.span.start, rl.link.span.end, rl.link.label or rl.link.target)
        for rl in graph.links_of(held.src)
        if rl.target == held.dst
    )
    if not spans:
        return None
    text = card.text
    first = spans[0]
    for s, e, visible in reversed(spans[1:]):
        text = text[:s] + visible + text[e:]
    s, e, _ = first
    if s > 0 and text[s - 1] == "!":
        s -= 1  # an embed goes whole
    text = text[:s] + "[[" + text[e:]
    cursor = s + 2
    edited = parse_card(held.src, text)
    line = text.count("\n", 0, cursor)
    col = cursor - (text.rfind("\n", 0, cursor) + 1)
    return Case(held.src, held.dst, edited, line, col, cursor)


def meaning_of(engine: SearchEngine, case: Case, options: SearchOptions | None = None) -> list[str]:
    """The meaning leg as the server computes it (the engine directly: no lock here)."""
    line_text = case.card.text.split("\n")[case.line]
    ctx = cx.context_at(line_text, case.col)
    if ctx is None:
        return []
    q = cx.meaning_query(case.card, case.line, ctx)
    if q is None:
        return []
    opts = options or cx.meaning_options()
    return [r.path for r in engine.search(q, opts) if r.path != case.src]


def ours(
    graph: LinkGraph,
    case: Case,
    meaning: Sequence[str],
    recency: dict[str, float],
    weights: dict[str, float] | None = None,
) -> list[str]:
    linked = linked_targets(graph, case.card, case.offset)
    got = cx.rank_cards(graph, case.src, linked, "", meaning, recency, weights=weights)
    return [a.path for a in got.items]


def baseline(graph: LinkGraph, case: Case, key: Callable[[str], Any]) -> list[str]:
    linked = linked_targets(graph, case.card, case.offset)
    fresh = sorted((p for p in graph.cards if p not in linked and p != case.src), key=key)
    return fresh + sorted(linked) + [case.src]


class Scores:
    def __init__(self) -> None:
        self.ranks: dict[str, list[int | None]] = {}

    def add(self, name: str, ranked: Sequence[str], dst: str) -> None:
        try:
            rank: int | None = list(ranked).index(dst) + 1
        except ValueError:
            rank = None
        self.ranks.setdefault(name, []).append(rank)

    def table(self) -> dict[str, dict[str, float]]:
        out = {}
        for name, ranks in self.ranks.items():
            n = len(ranks) or 1
            out[name] = {
                "recall@1": sum(1 for r in ranks if r == 1) / n,
                f"recall@{K}": sum(1 for r in ranks if r is not None and r <= K) / n,
                "mrr": sum(1.0 / r for r in ranks if r is not None) / n,
            }
        return out


def open_vault(vault: Path, index_dir: Path | None, work: Path) -> Vault:
    """The vault on a copy of ``index_dir`` in ``work`` (or a new index there)."""
    target = work / "index"
    if index_dir is not None and index_dir.is_dir():
        copy_tree(index_dir, target, ignore=shutil.ignore_patterns("lock"))
    v = Vault(vault, target)
    v.open()
    return v


def run(
    vault_dir: Path,
    holdout: Path,
    n: int,
    seed: int,
    index_dir: Path | None,
    log: Callable[[str], None] = lambda s: None,
    options: SearchOptions | None = None,
    grid: Sequence[float] = (),
) -> dict[str, Any]:
    held = load_holdout(holdout)
    with tempfile.TemporaryDirectory(prefix="completion-quality-") as tmp:
        t0 = time.monotonic()
        vault = open_vault(vault_dir, index_dir, Path(tmp))
        try:
            graph, engine = vault.graph, vault.engine
            log(
                f"opened {vault_dir.name}: {len(graph.cards)} cards in {time.monotonic() - t0:.1f}s"
            )
            recency = {rel: float(f.mtime_ns) for rel, f in vault.indexer.state.files.items()}
            rng = random.Random(seed)
            order = list(held)
            rng.shuffle(order)
            cases: list[Case] = []
            for h in order:
                c = make_case(graph, h)
                if c is not None:
                    cases.append(c)
                if len(cases) >= n:
                    break
            scores = Scores()
            by_title = {p: (c.title.lower(), p) for p, c in graph.cards.items()}
            backlinks = {p: len(graph.backlinks(p)) for p in graph.cards}
            alpha_key: Callable[[str], Any] = lambda p: by_title[p]  # noqa: E731
            linked_key: Callable[[str], Any] = lambda p: (-backlinks[p], by_title[p])  # noqa: E731
            t1 = time.monotonic()
            for i, c in enumerate(cases):
                meaning = meaning_of(engine, c, options)
                scores.add("ours", ours(graph, c, meaning, recency), c.dst)
                for g in grid:
                    w = {**cx.DEFAULT_WEIGHTS, "graph": g}
                    scores.add(f"graph={g:g}", ours(graph, c, meaning, recency, w), c.dst)
                only_meaning = {"meaning": 1.0}
                scores.add("meaning", ours(graph, c, meaning, {}, only_meaning), c.dst)
                scores.add("graph", ours(graph, c, [], {}, {"graph": 1.0}), c.dst)
                scores.add("alphabetical", baseline(graph, c, alpha_key), c.dst)
                scores.add("most_linked", baseline(graph, c, linked_key), c.dst)
                if (i + 1) % 100 == 0:
                    log(f"{i + 1}/{len(cases)}")
            per_case_ms = 1000 * (time.monotonic() - t1) / max(1, len(cases))
        finally:
            vault.close()
    return {
        "vault": vault_dir.name,
        "cards": len(graph.cards),
        "links": len(cases),
        "seed": seed,
        "list_length": cx.DEFAULT_LIMIT,
        "ms_per_link": round(per_case_ms, 1),
        "scores": scores.table(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("holdout", type=Path)
    ap.add_argument("--n", type=int, default=500, help="held-out links to ask about (500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index-dir", type=Path, default=None, help="an index of VAULT (copied)")
    ap.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    ap.add_argument(
        "--meaning-legs",
        help="the meaning search's legs, comma-separated (default: meaning_options())",
    )
    ap.add_argument(
        "--graph-grid",
        help="also score these graph-leg weights, comma-separated (the others as default)",
    )
    ap.add_argument(
        "--meaning-no-graph", action="store_true", help="the meaning search without graph rerank"
    )
    args = ap.parse_args(argv)
    options = cx.meaning_options()
    if args.meaning_legs:
        options = replace(options, legs=tuple(args.meaning_legs.split(",")))
    if args.meaning_no_graph:
        options = replace(options, graph=False)
    index_dir = args.index_dir
    if index_dir is None and (DEFAULT_INDEX_ROOT / args.vault.name).is_dir():
        index_dir = DEFAULT_INDEX_ROOT / args.vault.name
    out = run(
        args.vault,
        args.holdout,
        args.n,
        args.seed,
        index_dir,
        log=lambda s: print(s, file=sys.stderr),
        options=options,
        grid=[float(x) for x in args.graph_grid.split(",")] if args.graph_grid else (),
    )
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"{out['vault']}: {out['links']} held-out links, {out['cards']} cards, "
        f"list of {out['list_length']}, {out['ms_per_link']} ms per link"
    )
    print(f"{'ranker':<14}{'R@1':>8}{'R@10':>8}{'MRR':>8}")
    for name, s in out["scores"].items():
        print(f"{name:<14}{s['recall@1']:>8.3f}{s[f'recall@{K}']:>8.3f}{s['mrr']:>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
