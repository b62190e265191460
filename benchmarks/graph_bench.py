"""Time ``zettel-lsp graph`` on a vault: whole command (process start to exit) and its phases.

    python benchmarks/graph_bench.py ../shared/data/vaults/zettelkasten-13k [--runs 5] [--json]

Prints median and p95 over the runs, plus the machine (cores). Each run is a fresh process, as a
user would run it, so the figures include interpreter start-up and imports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    walls: list[float] = []
    phases: dict[str, list[float]] = {}
    stats: dict[str, object] = {}
    for _ in range(args.runs):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "zettel_lsp", "graph", str(args.vault), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        walls.append(time.perf_counter() - t0)
        stats = json.loads(out.stdout)
        for phase, secs in stats["seconds"].items():  # type: ignore[union-attr]
            phases.setdefault(phase, []).append(secs)
    result = {
        "vault": str(args.vault),
        "runs": args.runs,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "cards": stats["cards"],
        "distinct_linked_pairs": stats["distinct_linked_pairs"],
        "wall_seconds": {"median": statistics.median(walls), "p95": percentile(walls, 0.95)},
        "phase_seconds_median": {k: statistics.median(v) for k, v in phases.items()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        w = result["wall_seconds"]
        print(
            f"{args.vault}: {result['cards']} cards, {result['distinct_linked_pairs']} pairs; "
            f"wall median {w['median']:.2f} s, p95 {w['p95']:.2f} s over {args.runs} runs "
            f"on {result['cores']} cores; phases (median) {result['phase_seconds_median']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
