"""Make a link hold-out for ``zettel-lsp eval-links``, the way the shared ones were made.

    python benchmarks/make_holdout.py VAULT OUT.tsv [--seed 1] [--share 0.2] [--min-links 3]

The shared hold-outs (``../shared/eval/links/<vault>.holdout20.tsv``) hold out 20% of the distinct
links of every note with >= 3 links, with seed 0 (their README); the count per note is
ceil(links / 5) (checked against those files: 3-5 links hold out 1, 6-10 hold out 2, 15 hold
out 3). This script does the same on *our* link graph (resolved note-to-note links and embeds,
:meth:`~zettel_lsp.graph.link_graph.LinkGraph.linked_pairs`) with another seed, so the fusion
can be tuned on more than one hold-out per vault. The output is a TSV with header ``src\\tdst``,
sorted; it is written outside the project (e.g. /work/idx/m15/links/), never into the vault.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.workdir import check_apart


def hold_out(
    pairs: Iterable[tuple[str, str]], *, seed: int, share: float = 0.2, min_links: int = 3
) -> list[tuple[str, str]]:
    """``ceil(share * n)`` of the ``n`` distinct targets of every source with ``n >= min_links``,
    drawn with ``random.Random(seed)`` over sources and targets in sorted order."""
    by_src: dict[str, set[str]] = {}
    for src, dst in pairs:
        if src != dst:
            by_src.setdefault(src, set()).add(dst)
    rng = random.Random(seed)
    per = round(1 / share)  # 5 for 20%: integer arithmetic, as the shared files count
    out: list[tuple[str, str]] = []
    for src in sorted(by_src):
        dsts = sorted(by_src[src])
        if len(dsts) < min_links:
            continue
        n = -(-len(dsts) // per)
        out.extend((src, dst) for dst in rng.sample(dsts, n))
    return sorted(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/make_holdout.py", description=__doc__)
    parser.add_argument("vault", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1, help="the shared files used seed 0")
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--min-links", type=int, default=3)
    args = parser.parse_args(argv)
    check_apart(args.out.parent, args.vault, what="output folder")
    if args.out.exists():
        print(f"{args.out} exists; not replaced", file=sys.stderr)
        return 2
    cards, _ = load_vault(args.vault)
    graph = LinkGraph.build(cards)
    held = hold_out(
        graph.linked_pairs(), seed=args.seed, share=args.share, min_links=args.min_links
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        fh.write("src\tdst\n")
        fh.writelines(f"{s}\t{d}\n" for s, d in held)
    print(f"{len(held):,} held-out links from {len({s for s, _ in held}):,} notes -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
