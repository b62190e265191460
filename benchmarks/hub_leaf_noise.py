"""The hub-vs-leaf sets with noisier queries: how much of the hub-line rule's gain survives
when a query is not the gloss verbatim.

    python benchmarks/hub_leaf_noise.py SETS_DIR INDEX_ROOT [--every 3] [--seed 0]

Each query of ``SETS_DIR/<vault>.hub_leaf.json`` (``benchmarks/hub_leaf.py``) has every
``--every``-th word replaced by a word (longer than 3 letters) drawn, seeded, from the other
queries of the same set, so the hub line no longer holds all of it. Prints the leaf's MRR
without the graph, with the hub-line lift off (``line_lift`` 0) and with the defaults, per vault.
Indexes as for ``benchmarks/hub_lines_tune.py`` (``INDEX_ROOT/<vault>``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from zettel_lsp.cli import build_parser
from zettel_lsp.cli.common import _open_vault, _search_options
from zettel_lsp.eval.evaluate import load_golden
from zettel_lsp.search.rerank import RerankParams

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
VAULTS = SHARED / "data" / "vaults"
NAMES = "obsidian-help-en,dendron-site,vaultofknowledge,zettelkasten-13k"


def noisy(query: str, pool: list[str], every: int, rng: random.Random) -> str:
    words = query.split()
    return " ".join(rng.choice(pool) if i % every == every - 1 else w for i, w in enumerate(words))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sets", type=Path)
    ap.add_argument("index_root", type=Path)
    ap.add_argument("--vaults", default=NAMES)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("| vault | queries | no graph | lift 0 | defaults |\n|---|---|---|---|---|")
    for name in args.vaults.split(","):
        vault, hub_set = VAULTS / name, args.sets / f"{name}.hub_leaf.json"
        if not vault.is_dir() or not hub_set.is_file():
            print(f"skipped {name}: {vault} or {hub_set} is missing", file=sys.stderr)
            continue
        cli = ["eval", str(vault), str(hub_set), "--index-dir", str(args.index_root / name)]
        base = _search_options(build_parser().parse_args(cli), 10)
        golden = load_golden(hub_set)
        pool = [w for g in golden for w in g.query.split() if len(w) > 3]
        rng = random.Random(args.seed)
        queries = [(noisy(g.query, pool, args.every, rng), g) for g in golden]
        configs = {
            "no graph": replace(base, graph=False),
            "lift 0": replace(base, rerank=RerankParams(line_lift=0.0)),
            "defaults": base,
        }
        row = []
        with _open_vault(build_parser().parse_args(cli)) as v:
            for opts in configs.values():
                rr = []
                for q, g in queries:
                    ranked = [r.path for r in v.engine.search(q, opts)][:10]
                    (leaf,) = g.relevant
                    rr.append(1.0 / (ranked.index(leaf) + 1) if leaf in ranked else 0.0)
                row.append(f"{statistics.fmean(rr):.3f}")
        print(f"| {name} | {len(queries)} | " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
