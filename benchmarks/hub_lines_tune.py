"""Choose the hub-line parameters of the graph rerank by leave-one-vault-out, and print the table.

    python benchmarks/hub_lines_tune.py SETS_DIR INDEX_ROOT [--json OUT.json]
                                        [--vaults obsidian-help-en,dendron-site,...]

For each shared vault with an index in ``INDEX_ROOT/<vault>`` (built with ``zettel-lsp index
VAULT --index-dir INDEX_ROOT/<vault>``; missing ones are built) and a hub-vs-leaf set in
``SETS_DIR/<vault>.hub_leaf.json`` (``benchmarks/hub_leaf.py``), every configuration of the grid
(``line_cover`` x ``line_discount`` x ``line_credit`` x ``line_lift``, plus the rule off and the
whole rerank off) is scored the way ``zettel-lsp eval`` scores it (its search options, limit
10): the leaf's MRR, the share of queries with the hub in the top 5, and nDCG@10 of the guard
sets that exist
(obsidian-help's golden set for obsidian-help-en, ``SETS_DIR/<vault>.traps.json`` from
``benchmarks/mention_traps.py``).

Leave-one-vault-out: for each vault in turn, among the configurations that keep every guard set
of the *other* vaults within 0.005 nDCG@10 of the rule switched off and their hubs in the top 5
as often as without the graph (within 0.1), the one with the best mean leaf MRR over the other
vaults is scored on the held-out vault. The final defaults are chosen the same way over all
vaults. (The IR collections' ablation is ``benchmarks/tune.py --grid none``.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from zettel_lsp.cli import build_parser
from zettel_lsp.cli.common import _open_vault, _search_options
from zettel_lsp.eval.evaluate import evaluate, load_golden
from zettel_lsp.search.rerank import RerankParams

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
VAULTS = SHARED / "data" / "vaults"
GOLDEN = SHARED / "eval" / "obsidian-help.golden.json"
NAMES = "obsidian-help-en,dendron-site,vaultofknowledge,zettelkasten-13k"
GUARD_LOSS = 0.005
HUB_LOSS = 0.1

OFF = "rule off"
NO_GRAPH = "no graph"


def grid() -> dict[str, RerankParams | None]:
    out: dict[str, RerankParams | None] = {OFF: RerankParams(line_credit=0.0), NO_GRAPH: None}
    for cover, disc, credit, lift in itertools.product(
        (0.3, 0.4, 0.5), (0.1, 0.2), (2, 3), (0, 0.5, 1, 1.25, 1.5)
    ):
        out[f"cover={cover} discount={disc} credit={credit} lift={lift}"] = RerankParams(
            line_cover=cover, line_discount=disc, line_credit=float(credit), line_lift=lift
        )
    return out


def score_vault(
    vault: Path, index_dir: Path, hub_set: Path, guards: dict[str, Path]
) -> dict[str, dict[str, float]]:
    args = build_parser().parse_args(
        ["eval", str(vault), str(hub_set), "--index-dir", str(index_dir)]
    )
    base = _search_options(args, 10)
    hub = load_golden(hub_set)
    guard_sets = {name: load_golden(p) for name, p in guards.items()}
    table: dict[str, dict[str, float]] = {}
    with _open_vault(args) as v:
        for label, params in grid().items():
            opts = replace(base, graph=False) if params is None else replace(base, rerank=params)

            def search(q: str, opts: Any = opts) -> list[str]:
                return [r.path for r in v.engine.search(q, opts)][:10]

            rr, top5 = [], []
            for g in hub:
                ranked = search(g.query)
                (leaf,), (hub_card,) = g.relevant, g.partial
                rr.append(1.0 / (ranked.index(leaf) + 1) if leaf in ranked else 0.0)
                top5.append(hub_card in ranked[:5])
            row = {"leaf_mrr": statistics.fmean(rr), "hub_top5": statistics.fmean(top5)}
            for name, golden in guard_sets.items():
                row[name] = evaluate(search, golden, 10).overall["ndcg@10"]
            table[label] = row
            print(f"  {vault.name} {label}: leaf MRR {row['leaf_mrr']:.3f}", file=sys.stderr)
    return table


def admissible(tables: dict[str, dict[str, dict[str, float]]], names: Sequence[str]) -> list[str]:
    """Configurations that keep the guard sets and the hubs of ``names``."""
    out = []
    for label in grid():
        if label in (OFF, NO_GRAPH):
            continue
        ok = True
        for n in names:
            row, off = tables[n][label], tables[n][OFF]
            for k, v in off.items():
                if k not in ("leaf_mrr", "hub_top5") and row[k] < v - GUARD_LOSS:
                    ok = False
            if row["hub_top5"] < tables[n][NO_GRAPH]["hub_top5"] - HUB_LOSS:
                ok = False
        if ok:
            out.append(label)
    return out


def best(tables: dict[str, dict[str, dict[str, float]]], names: Sequence[str]) -> str:
    labels = admissible(tables, names) or [OFF]
    return max(
        labels,
        key=lambda label: (
            statistics.fmean(tables[n][label]["leaf_mrr"] for n in names),
            statistics.fmean(tables[n][label]["hub_top5"] for n in names),
        ),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sets", type=Path)
    ap.add_argument("index_root", type=Path)
    ap.add_argument("--vaults", default=NAMES)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tables: dict[str, dict[str, dict[str, float]]] = {}
    for name in args.vaults.split(","):
        vault, hub_set = VAULTS / name, args.sets / f"{name}.hub_leaf.json"
        if not vault.is_dir() or not hub_set.is_file():
            print(f"skipped {name}: {vault} or {hub_set} is missing", file=sys.stderr)
            continue
        guards = {}
        if name == "obsidian-help-en" and GOLDEN.is_file():
            guards["golden"] = GOLDEN
        if (args.sets / f"{name}.traps.json").is_file():
            guards["traps"] = args.sets / f"{name}.traps.json"
        tables[name] = score_vault(vault, args.index_root / name, hub_set, guards)
    names = list(tables)
    if not names:
        print("no vault found", file=sys.stderr)
        return 1
    final = best(tables, names)
    loco = {held: best(tables, [n for n in names if n != held]) for held in names if len(names) > 1}
    print(f"final defaults: {final}")
    print(
        "| vault | no graph | rule off | held-out (chosen without it) | final "
        "| hub top 5 (no graph / final) | guards (off / final) |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in names:
        t = tables[n]
        held = loco.get(n)
        guards = ", ".join(
            f"{k} {t[OFF][k]:.4f} / {t[final][k]:.4f}"
            for k in t[OFF]
            if k not in ("leaf_mrr", "hub_top5")
        )
        print(
            f"| {n} | {t[NO_GRAPH]['leaf_mrr']:.3f} | {t[OFF]['leaf_mrr']:.3f} | "
            + (f"{t[held]['leaf_mrr']:.3f} ({held}) | " if held else "- | ")
            + f"{t[final]['leaf_mrr']:.3f} | "
            + f"{t[NO_GRAPH]['hub_top5']:.2f} / {t[final]['hub_top5']:.2f} | {guards} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"final": final, "loco": loco, "tables": tables}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
