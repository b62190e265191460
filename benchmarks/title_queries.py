"""Exact-title queries: does searching a card's file name (lower-cased) put that card first?

    python benchmarks/title_queries.py VAULT [--index-dir DIR] [--sample 200] [--seed 0] [--json]

Samples ``--sample`` cards (seeded, reproducible), queries each card's file name in lower case
with the default pipeline, and counts the card at rank 1. Another card with the same name (case
and plural-insensitive, e.g. ``a/Index.md`` and ``b/index.md``) at rank 1 is a tie, not a miss.
Prints the hit rate and every miss with what came first.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.vault import Vault


def same_name(a: str, b: str) -> bool:
    def norm(path: str) -> str:
        stem = path.rsplit("/", 1)[-1].removesuffix(".md").casefold()
        return stem.removesuffix("s")

    return norm(a) == norm(b)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--index-dir", type=Path)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with Vault(args.vault, args.index_dir) as vault:
        vault.open()
        cards = sorted(vault.graph.cards)
        picked = random.Random(args.seed).sample(cards, min(args.sample, len(cards)))
        opts = SearchOptions(limit=10)
        hits = ties = 0
        misses: list[dict[str, object]] = []
        for path in picked:
            query = vault.graph.cards[path].stem.lower()
            top = [r.path for r in vault.engine.search(query, opts)]
            if top and top[0] == path:
                hits += 1
            elif top and same_name(top[0], path):
                ties += 1
            else:
                rank = top.index(path) + 1 if path in top else None
                misses.append({"card": path, "query": query, "rank": rank, "first": top[:3]})
    n = len(picked)
    out = {
        "vault": str(args.vault),
        "sampled": n,
        "first": hits,
        "tie": ties,
        "rate": (hits + ties) / n if n else 0.0,
        "misses": misses,
    }
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(f"{args.vault.name}: {hits + ties}/{n} first ({out['rate']:.1%}; {ties} ties)")
    for m in misses:
        print(f"  miss {m['query']!r}: {m['card']} at rank {m['rank']}; first {m['first']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
