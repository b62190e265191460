"""Tune the related-card fusion offline, by leave-one-vault-out (issue #15, item 3).

    python benchmarks/suggest_tune.py DUMP.legs.json ... [--json OUT.json]
    python benchmarks/suggest_tune.py --tables EVAL.json ...   # eval-links --json outputs
    python benchmarks/suggest_tune.py DUMP.legs.json ... --lead-only  # only the lead, by LOVO
    python benchmarks/suggest_tune.py DUMP.legs.json ... --leg-only LEG,...  # only their weights
    python benchmarks/suggest_tune.py --self DIR/*.legs.json  # benchmarks/self_tune.py outputs

Each dump is written by one ``zettel-lsp eval-links VAULT HOLDOUT --variant V --dump-legs FILE``
pass: per source card its held-out targets and every leg's ranking (50 deep). A dump's name
``<vault>.<set>.<variant>.legs.json`` says which vault it belongs to. The fusion
(:func:`zettel_lsp.search.suggest.fuse_suggestions`: weighted RRF, ``w / (k + rank)`` over the
first ``depth`` ranks of each leg, ties by path) is recomputed here with numpy for every
candidate setting, so a sweep takes seconds, not one index per setting.

Search (:func:`zettel_lsp.search.fusion_tune.tune`): coordinate ascent from the defaults over a
small grid (a weight per leg, ``k``, ``depth``, the lead), a few passes, maximising the mean
over vaults of the vault's mean Recall@10 (over its variants and hold-out sets, each equal).
LOVO: for each vault, the setting chosen on the other vaults, and that vault's figures with it;
then the setting chosen on all vaults (the default candidate). ``--self``: per vault and
variant, the held-out Recall@10 of the default and of each tuner in :data:`TUNERS` run on the
vault's own links (how the self-tuning of docs/evaluation.md#self-tuned-suggestions was chosen).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from zettel_lsp.search.fusion_tune import (
    ARRAY_LEGS,
    LEADS,
    WEIGHTS,
    LegArrays,
    describe,
    leg_arrays,
    metrics,
    objective,
    table,
    to_arrays,
    tune,
    with_weight,
)
from zettel_lsp.search.suggest import DEFAULT_SUGGEST_FUSION, SuggestFusion


def load_dump(path: Path, legs: Sequence[str] = ARRAY_LEGS) -> LegArrays:
    """A dump file (named ``<vault>.<set>.<variant>.legs.json``) as arrays."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return leg_arrays(
        data["sources"],
        name=path.name.removesuffix(".legs.json"),
        vault=path.name.split(".")[0],
        variant=data["variant"],
        legs=legs,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/suggest_tune.py", description=__doc__)
    parser.add_argument("dumps", type=Path, nargs="+")
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument(
        "--tables",
        action="store_true",
        help="the arguments are eval-links --json outputs: print them as Markdown tables",
    )
    parser.add_argument(
        "--self",
        action="store_true",
        help="the arguments are benchmarks/self_tune.py outputs: per vault and variant, the "
        "fusion chosen on the vault's own links against the default, on the held-out links",
    )
    parser.add_argument(
        "--lead-only",
        action="store_true",
        help="keep the default weights; choose only the lead (on/off) by leave-one-vault-out",
    )
    parser.add_argument(
        "--leg-only",
        metavar="LEG[,LEG...]",
        help="keep the default weights; choose only these legs' weights (from the grid, in "
        "this order) by leave-one-vault-out",
    )
    args = parser.parse_args(argv)
    if args.tables:
        print(tables(args.dumps))
        return 0
    if args.lead_only:
        return lead_only([load_dump(p) for p in args.dumps])
    if args.leg_only:
        return leg_only([load_dump(p) for p in args.dumps], args.leg_only)
    if args.self:
        return self_tuned(args.dumps)
    t0 = time.perf_counter()
    dumps = [load_dump(p) for p in args.dumps]
    vaults = sorted({d.vault for d in dumps})
    out: dict[str, object] = {"dumps": [d.name for d in dumps]}
    print(f"loaded {len(dumps)} dumps of {len(vaults)} vaults in {time.perf_counter() - t0:.0f} s")
    base = table(dumps, to_arrays(DEFAULT_SUGGEST_FUSION))
    out["start"] = {"fusion": describe(DEFAULT_SUGGEST_FUSION), "figures": base}
    lovo: dict[str, object] = {}
    for v in vaults:
        train = [d for d in dumps if d.vault != v]
        chosen = tune(train)
        figures = table([d for d in dumps if d.vault == v], chosen)
        lovo[v] = {"fusion": describe(chosen), "figures": figures}
        print(f"\nheld out {v}: chosen on {', '.join(x for x in vaults if x != v)}")
        print(f"  {describe(chosen)}")
        for name, m in figures.items():
            b = {
                k: round(x, 3)
                for k, x in next(d for d in dumps if d.name == name).baselines.items()
            }
            print(
                f"  {name:<40} R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} "
                f"MRR {m['mrr']:.3f}  (start R@10 {base[name]['recall@10']:.3f}; baselines {b})"
            )
    out["lovo"] = lovo
    final = tune(dumps)
    out["all"] = {"fusion": describe(final), "figures": table(dumps, final)}
    print(f"\nchosen on all vaults: {describe(final)}")
    for name, m in table(dumps, final).items():
        print(f"  {name:<40} R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} MRR {m['mrr']:.3f}")
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


def lead_only(dumps: Sequence[LegArrays]) -> int:
    """Leave-one-vault-out over :data:`LEADS` alone, the default weights fixed."""
    start = to_arrays(DEFAULT_SUGGEST_FUSION)
    vaults = sorted({d.vault for d in dumps})
    options = {str(lead): replace(start, lead=lead) for lead in LEADS}
    for v in vaults:
        train = [d for d in dumps if d.vault != v]
        chosen = max(options, key=lambda k: objective(train, options[k]))
        print(f"held out {v}: lead {chosen} (chosen on the other vaults)")
        for d in dumps:
            if d.vault == v:
                m, off = metrics(d, options[chosen]), metrics(d, options["None"])
                best = max(d.baselines.values())
                print(
                    f"  {d.name:<40} R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} "
                    f"MRR {m['mrr']:.3f}  (lead off R@10 {off['recall@10']:.3f}; "
                    f"best baseline {best:.3f})"
                )
    final = max(options, key=lambda k: objective(dumps, options[k]))
    print(f"chosen on all vaults: lead {final}")
    return 0


def leg_only(dumps: Sequence[LegArrays], legs_arg: str) -> int:
    """Leave-one-vault-out over the weights of the legs named in ``legs_arg`` (comma-separated,
    chosen in that order, each from :data:`WEIGHTS` with the ones before it set), the default's
    other weights, k, depth and lead fixed: how a new leg's default weight is chosen."""
    legs = legs_arg.split(",")
    unknown = [leg for leg in legs if leg not in ARRAY_LEGS]
    if unknown:
        print(f"--leg-only: {unknown} not in {', '.join(ARRAY_LEGS)}", file=sys.stderr)
        return 2
    off = to_arrays(DEFAULT_SUGGEST_FUSION)
    for leg in legs:
        off = with_weight(off, leg, 0.0)

    def choose(train: Sequence[LegArrays]) -> SuggestFusion:
        f = off
        for leg in legs:
            options = {w: with_weight(f, leg, w) for w in WEIGHTS}
            f = options[max(options, key=lambda w: (objective(train, options[w]), -w))]
        return f

    def weights(f: SuggestFusion) -> str:
        return ", ".join(f"{leg} {f.weights.get(leg, 0.0):g}" for leg in legs)

    vaults = sorted({d.vault for d in dumps})
    for v in vaults:
        chosen = choose([d for d in dumps if d.vault != v])
        print(f"held out {v}: {weights(chosen)} (chosen on the other vaults)")
        for d in dumps:
            if d.vault == v:
                m, m0 = metrics(d, chosen), metrics(d, off)
                best = max(d.baselines.values())
                print(
                    f"  {d.name:<40} R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} "
                    f"MRR {m['mrr']:.3f}  (without: R@10 {m0['recall@10']:.3f}; "
                    f"best baseline {best:.3f})"
                )
    final = choose(dumps)
    print(
        f"chosen on all vaults: {weights(final)}; objective {objective(dumps, final):.4f}, without "
        f"{objective(dumps, off):.4f}"
    )
    return 0


TUNERS = {
    "full": {},
    "full+m.005": {"margin": 0.005},
    "full+m.01": {"margin": 0.01},
    "weights": {"weights_only": True},
    "weights+m.005": {"weights_only": True, "margin": 0.005},
    "weights+m.01": {"weights_only": True, "margin": 0.01},
}


def self_tuned(paths: Sequence[Path]) -> int:
    """For each ``<vault>.held.<variant>`` dump: the fusion chosen (from the default, by
    :func:`tune`) on the self hold-outs of the same copy (``<vault>.self.<variant>.*``),
    and Recall@10 of the default and of that fusion on the held-out links."""
    held = [p for p in paths if ".held." in p.name]
    for h in held:
        d = load_dump(h)
        prefix = h.name.replace(".held.", ".self.").removesuffix(".legs.json") + "."
        own = [load_dump(p) for p in paths if p.name.startswith(prefix)]
        start = to_arrays(DEFAULT_SUGGEST_FUSION)
        m0 = metrics(d, start)
        best = max(d.baselines.values())
        row = [f"{d.name:<36} default {m0['recall@10']:.3f} (best baseline {best:.3f})"]
        for name, kw in TUNERS.items():
            chosen = tune(own, **kw)  # type: ignore[arg-type]
            row.append(f"{name} {metrics(d, chosen)['recall@10']:.3f}")
        print(" | ".join(row))
    return 0


BASELINES = ("title", "title_specific", "bm25", "adamic_adar")


def tables(paths: Sequence[Path]) -> str:
    """Markdown tables from ``eval-links --ablate --json`` outputs named ``<vault>.<variant>
    [.<what>].json``: ours against each baseline, and the ablation rows (Recall@10)."""
    runs = {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in paths}
    lines = [
        "| vault | variant | ranker | Recall@5 | Recall@10 | MRR |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in runs.items():
        vault, variant = name.split(".")[0], r["variant"]
        rk = r["rankers"]
        best = max(rk[b]["recall@10"] for b in BASELINES)
        for ranker in ("ours", *BASELINES):
            m = rk[ranker]
            mark = f" ({m['recall@10'] - best:+.3f} vs best baseline)" if ranker == "ours" else ""
            lines.append(
                f"| {vault} | {variant} | {ranker} | {m['recall@5']:.3f} | "
                f"{m['recall@10']:.3f}{mark} | {m['mrr']:.3f} |"
            )
    rows = [n for n in next(iter(runs.values()))["rankers"] if n.startswith(("ours-", "="))]
    lines += [
        "",
        "Recall@10: ours, ours without a leg (-leg, -graph), and each leg alone (=leg)",
        "",
    ]
    lines.append("| row | " + " | ".join(runs) + " |")
    lines.append("|---|" + "---|" * len(runs))
    for row in ["ours", *rows]:
        cells = [
            f"{r['rankers'][row]['recall@10']:.3f}" if row in r["rankers"] else "-"
            for r in runs.values()
        ]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines += ["", "| run | seconds | index seconds | legs ms p50 / p95 |", "|---|---|---|---|"]
    for name, r in runs.items():
        ms = r.get("legs_ms") or {}
        lines.append(
            f"| {name} | {r['seconds']} | {r.get('index_seconds', '-')} | "
            f"{ms.get('p50', 0):.0f} / {ms.get('p95', 0):.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
