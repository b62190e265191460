"""Check the server's diagnostics against ``zettel-lsp graph`` on a vault.

    python benchmarks/diagnostics_check.py VAULT [--json] [--title-source auto]

Builds the graph the way ``zettel-lsp graph`` does (same loader, same settings), computes every
card's diagnostics in-process with the function the server uses
(:func:`zettel_lsp.graph.diagnostics.card_problems`, over the graph's name table),
and checks:

- the number of unresolved-link diagnostics equals the graph's ``unresolved_links``;
- no unresolved-link diagnostic sits on a link that resolves (each is matched against the
  graph's own resolution of the same link occurrence);
- ambiguous-link diagnostics equal the graph's ``ambiguous_links`` (a link with a missing
  heading or block is reported as that instead, so those are added back);
- the time per card (p50 / p95 / max) and for the cards with at least 50 links, and for
  a whole-vault pass as ``workspace/diagnostic`` makes it (batches of 500 cards).

Exit status 0 when every check holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from zettel_lsp.graph.diagnostics import Kind, card_problems, expect_near_misses
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.stats import graph_stats
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.scan import ScanReport, load_vault
from zettel_lsp.notes.title_rule import TITLE_SOURCES, TitleSource


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def workspace_pass(graph: LinkGraph, batch: int = 500) -> float:
    """Seconds for every card's diagnostics the way the server's ``workspace/diagnostic``
    makes them: batches of cards, the near misses of each batch found at once."""
    t0 = time.perf_counter()
    paths = sorted(graph.cards)
    for i in range(0, len(paths), batch):
        expect_near_misses(graph, paths[i : i + batch])
        for path in paths[i : i + batch]:
            card_problems(graph, graph.cards[path])
    return time.perf_counter() - t0


def check(vault: Path, title_source: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    scan = ScanReport()
    cards, _problems = load_vault(
        vault, (), DEFAULT_MAX_BYTES, report=scan, title_source=TitleSource(title_source)
    )
    graph = LinkGraph.build(cards)
    stats = graph_stats(graph, skipped_files=scan.skipped)
    t1 = time.perf_counter()
    kinds: Counter[str] = Counter()
    wrong: list[dict[str, str]] = []  # unresolved diagnostics on links that resolve
    missing_on_ambiguous = 0
    per_card: list[float] = []
    suggested = 0  # unresolved links with a "did you mean"
    big_cards: list[float] = []
    for path, card in graph.cards.items():
        # the graph's resolution of each link occurrence, by its position in the card
        resolved = {
            rl.link.span.start: rl.resolution.target is not None or rl.resolution.attachment
            for rl in graph.links_of(path)
        }
        ambiguous = {rl.link.span.start for rl in graph.links_of(path) if rl.resolution.ambiguous}
        s = time.perf_counter()
        problems = card_problems(graph, card)
        elapsed = time.perf_counter() - s
        per_card.append(elapsed)
        if len(card.links) >= 50:
            big_cards.append(elapsed)
        for p in problems:
            kinds[p.kind.value] += 1
            suggested += bool(p.suggestions)
            start = p.link.span.start if p.link is not None else -1
            if p.kind == Kind.UNRESOLVED and resolved.get(start, True):
                wrong.append({"card": path, "link": p.link.raw if p.link else ""})
            if p.kind in (Kind.MISSING_HEADING, Kind.MISSING_BLOCK) and start in ambiguous:
                missing_on_ambiguous += 1
    workspace = workspace_pass(LinkGraph.build(cards))
    unresolved = kinds[Kind.UNRESOLVED.value]
    ambiguous_seen = kinds[Kind.AMBIGUOUS.value] + missing_on_ambiguous
    return {
        "vault": str(vault.resolve()),
        "cards": stats.cards,
        "links": stats.links,
        "graph_unresolved_links": stats.unresolved_links,
        "diagnostics_unresolved": unresolved,
        "unresolved_with_suggestions": suggested,
        "unresolved_equal": unresolved == stats.unresolved_links,
        "unresolved_on_resolving_links": len(wrong),
        "wrong_sample": wrong[:10],
        "graph_ambiguous_links": stats.ambiguous_links,
        "diagnostics_ambiguous": kinds[Kind.AMBIGUOUS.value],
        "ambiguous_equal": ambiguous_seen == stats.ambiguous_links,
        "diagnostics_by_kind": dict(sorted(kinds.items())),
        "seconds": {
            "load_and_graph": round(t1 - t0, 3),
            "all_cards": round(sum(per_card), 3),
            "workspace_pass": round(workspace, 3),
        },
        "ms_per_card": {
            "p50": round(1000 * percentile(per_card, 0.5), 3),
            "p95": round(1000 * percentile(per_card, 0.95), 3),
            "max": round(1000 * max(per_card, default=0.0), 3),
        },
        "ms_per_card_with_50_links": {
            "cards": len(big_cards),
            "p50": round(1000 * percentile(big_cards, 0.5), 3),
            "p95": round(1000 * percentile(big_cards, 0.95), 3),
            "mean": round(1000 * statistics.fmean(big_cards), 3) if big_cards else 0.0,
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--title-source", default="auto", choices=list(TITLE_SOURCES))
    args = ap.parse_args(argv)
    if not args.vault.is_dir():
        print(f"not a folder: {args.vault}", file=sys.stderr)
        return 2
    out = check(args.vault, args.title_source)
    ok = out["unresolved_equal"] and not out["unresolved_on_resolving_links"]
    ok = ok and out["ambiguous_equal"]
    out["ok"] = ok
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(f"{out['vault']}: {out['cards']:,} cards, {out['links']:,} links")
        same = "equal" if out["unresolved_equal"] else "DIFFER"
        print(
            f"  unresolved: graph {out['graph_unresolved_links']:,}, diagnostics "
            f"{out['diagnostics_unresolved']:,} ({same})"
        )
        wrong = out["unresolved_on_resolving_links"]
        print(f"  unresolved diagnostics on links that resolve: {wrong}")
        print(
            f"  ambiguous: graph {out['graph_ambiguous_links']:,}, diagnostics "
            f"{out['diagnostics_ambiguous']:,} ({'equal' if out['ambiguous_equal'] else 'DIFFER'})"
        )
        print(f"  by kind: {out['diagnostics_by_kind']}")
        print(f"  seconds: {out['seconds']}")
        print(f"  ms per card: {out['ms_per_card']}")
        print(f"  seconds: {out['seconds']}")
        print(f"  ms per card with >= 50 links: {out['ms_per_card_with_50_links']}")
        print("  OK" if ok else "  FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
