"""Search latency over judged queries, in-process on a warm index (what a server request costs).

    python benchmarks/search_latency.py VAULT GOLDEN.json [--index-dir DIR] [--repeat 5] [--json]
        [--english-only]

Opens (and if needed builds) the index, warms the model with one query (for queries not in
English: the multilingual phase is finished first and its model warmed too), then times
``SearchEngine.search`` for every query ``--repeat`` times: median and p95 in milliseconds, for
the full pipeline and for each leg alone, with and without the graph rerank.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from zettel_lsp.eval.evaluate import load_golden
from zettel_lsp.notes.language import is_english
from zettel_lsp.search.engine import ALL_LEGS, SearchOptions
from zettel_lsp.vault import Vault


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("golden", type=Path)
    ap.add_argument("--index-dir", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--english-only",
        action="store_true",
        help="leave out the queries not in English (they need the multilingual phase finished "
        "for every card first: hours at 100k cards)",
    )
    args = ap.parse_args()
    queries = [g.query for g in load_golden(args.golden)]
    if args.english_only:
        queries = [q for q in queries if is_english(q)]
    configs = {
        "all legs + graph": SearchOptions(),
        "all legs, no graph": SearchOptions(graph=False),
    }
    configs |= {f"{leg} only": SearchOptions(legs=(leg,), graph=False) for leg in ALL_LEGS}
    out: dict[str, object] = {
        "vault": str(args.vault),
        "queries": len(queries),
        "cores": os.cpu_count(),
    }
    with Vault(args.vault, args.index_dir) as vault:
        vault.open()
        foreign = [q for q in queries if not is_english(q)]
        if foreign:
            vault.ensure_multilingual()
            vault.engine.search("прогрев модели")  # warm the multilingual model
        out["not_english"] = len(foreign)
        vault.engine.search("warm up the model")
        for name, opts in configs.items():
            times = []
            for _ in range(args.repeat):
                for q in queries:
                    t0 = time.perf_counter()
                    vault.engine.search(q, opts)
                    times.append((time.perf_counter() - t0) * 1000)
            out[name] = {
                "median_ms": round(statistics.median(times), 2),
                "p95_ms": round(pct(times, 0.95), 2),
            }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for name in configs:
            m = out[name]
            print(f"{name:<22} median {m['median_ms']:7.2f} ms   p95 {m['p95_ms']:7.2f} ms")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
