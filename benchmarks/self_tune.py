"""Legs of a link hold-out and of the vault's own links, in one pass (issue #15).

    python benchmarks/self_tune.py VAULT HOLDOUT --variant mention|removed --seed-index SEED \\
        --out DIR [--sources 400] [--seed 0]

Makes the un-linked copy of ``eval-links`` (``VAULT`` with ``HOLDOUT``'s links un-linked),
indexes it from ``SEED``, and writes, named for ``suggest_tune.py``:

- ``DIR/<vault>.held.<variant>.legs.json``: the legs of the held-out sources (as
  ``eval-links --dump-legs``);
- ``DIR/<vault>.self.<variant>.{mention,removed}.legs.json``: the legs of a self hold-out drawn
  from the links the copy still has (:func:`zettel_lsp.search.calibrate.self_holdout`), which
  is all a server on that vault could see.

``benchmarks/suggest_tune.py --self`` then compares a fusion chosen on a vault's own links with
the fixed default on the held-out links.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zettel_lsp.cli import build_parser
from zettel_lsp.cli.common import _open_vault
from zettel_lsp.cli.evals import seed_index_of
from zettel_lsp.eval.links import evaluate_links, holdout_copy, load_holdout
from zettel_lsp.search.calibrate import dump_document, self_holdout, self_legs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/self_tune.py", description=__doc__)
    parser.add_argument("vault", type=Path)
    parser.add_argument("holdout", type=Path)
    parser.add_argument("--variant", required=True, choices=("mention", "removed"))
    parser.add_argument("--seed-index", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sources", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="self hold-outs (seeds seed, ...)")
    parser.add_argument("--tag", default="self", help="the self dumps' set name")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    name = args.vault.resolve().name
    cli = build_parser().parse_args(
        ["eval-links", str(args.vault), str(args.holdout), "--seed-index", str(args.seed_index)]
    )
    held = load_holdout(args.holdout)
    seed = seed_index_of(cli)
    t0 = time.perf_counter()
    with holdout_copy(args.vault, held, args.variant, seed=seed) as hc:
        cli.vault, cli.index_dir = hc.vault, hc.index_dir
        vault = _open_vault(cli)
        print(f"indexed the copy in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        with vault:
            dump: list[dict[str, Any]] = []
            report = evaluate_links(vault, held, dump=dump)
            _write(args.out / f"{name}.held.{args.variant}.legs.json", dump, args.variant)
            ours = report.rankers["ours"]["recall@10"]
            best = max(report.rankers[b]["recall@10"] for b in ("title_specific", "bm25"))
            print(f"held-out: ours R@10 {ours:.3f}, title_specific/bm25 best {best:.3f}")
            t1 = time.perf_counter()
            found: dict[str, list[dict[str, Any]]] = {}
            for r in range(args.rounds):
                sample = self_holdout(vault.graph, sources=args.sources, seed=args.seed + r)
                legs = self_legs(vault.engine, sample, title_source=vault.settings.title_source)
                for variant, entries in legs.items():
                    found.setdefault(variant, []).extend(entries)
            for variant, entries in found.items():
                _write(
                    args.out / f"{name}.{args.tag}.{args.variant}.{variant}.legs.json",
                    entries,
                    variant,
                )
            n = {v: len(e) for v, e in found.items()}
            print(f"self hold-out: {n} sources in {time.perf_counter() - t1:.0f} s")
    return 0


def _write(path: Path, entries: list[dict[str, Any]], variant: str) -> None:
    path.write_text(json.dumps(dump_document(entries, variant)), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
