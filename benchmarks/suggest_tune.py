"""Tune the related-card fusion offline, by leave-one-vault-out (issue #15, item 3).

    python benchmarks/suggest_tune.py DUMP.legs.json ... [--json OUT.json]
    python benchmarks/suggest_tune.py --tables EVAL.json ...   # eval-links --json outputs
    python benchmarks/suggest_tune.py DUMP.legs.json ... --lead-only  # only the lead, by LOVO

Each dump is written by one ``zettel-lsp eval-links VAULT HOLDOUT --variant V --dump-legs FILE``
pass: per source card its held-out targets and every leg's ranking (50 deep). A dump's name
``<vault>.<set>.<variant>.legs.json`` says which vault it belongs to. The fusion
(:func:`zettel_lsp.search.suggest.fuse_suggestions`: weighted RRF, ``w / (k + rank)`` over the
first ``depth`` ranks of each leg, ties by path) is recomputed here with numpy for every
candidate setting, so a sweep takes seconds, not one index per setting.

Search: coordinate ascent from the defaults over a small grid (a weight per leg from
:data:`WEIGHTS`, ``k`` from :data:`KS`, ``depth`` from :data:`DEPTHS`, the lead from
:data:`LEADS`), a few passes, maximising
the mean over vaults of the vault's mean Recall@10 (over its variants and hold-out sets, each
equal). LOVO: for each vault, the setting chosen on the other vaults, and that vault's figures
with it; then the setting chosen on all vaults (the default candidate).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from zettel_lsp.search.suggest import (
    DEFAULT_SUGGEST_FUSION,
    SUGGEST_LEGS,
    SURE_MENTION,
    SuggestFusion,
)

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)
KS = (5.0, 15.0, 30.0, 60.0)
DEPTHS = (10, 20, 30, 50)
SURES = (0.2, 0.3, 0.5, 0.7)  # the confident leg's threshold (SURE_MENTION)
PASSES = 3
LEADS = (None, "confident")  # the leg whose cards come first (SuggestFusion.lead)
LEAD_BONUS = 1e6  # above any fused score: lead cards first, in their leg's order
# The legs as the arrays hold them: the confident leg once per threshold, rebuilt from the
# mentions leg and the dumped confidences (a prefix of it: mentions are ranked by confidence).
ARRAY_LEGS = tuple(leg for leg in SUGGEST_LEGS if leg != "confident") + tuple(
    f"confident@{t}" for t in SURES
)


@dataclass
class Dump:
    """One (vault, set, variant) dump as arrays: ``ranks[s, leg, c]`` is candidate c's 1-based
    rank in the leg for source s (0: not listed); candidates of a source are sorted by path, so
    a lower index wins a tie; ``pairs`` holds (source, candidate index or -1) per held-out link."""

    name: str
    vault: str
    variant: str
    ranks: np.ndarray
    pair_src: np.ndarray
    pair_cand: np.ndarray
    baselines: dict[str, float]  # Recall@10 of each baseline ranking in the dump


def load_dump(path: Path, legs: Sequence[str] = ARRAY_LEGS) -> Dump:
    data = json.loads(path.read_text(encoding="utf-8"))
    parts = path.name.split(".")
    vault, variant = parts[0], data["variant"]
    sources = data["sources"]
    for s in sources:
        conf = s.get("confidence", {})
        for t in SURES:
            s["legs"][f"confident@{t}"] = [p for p in s["legs"]["mentions"] if conf[p] >= t]
    cands = [sorted({p for leg in legs for p in s["legs"].get(leg, [])}) for s in sources]
    width = max((len(c) for c in cands), default=0) or 1
    ranks = np.zeros((len(sources), len(legs), width), dtype=np.int16)
    pair_src: list[int] = []
    pair_cand: list[int] = []
    hits: dict[str, list[float]] = {}
    for i, (s, cs) in enumerate(zip(sources, cands, strict=True)):
        index = {p: j for j, p in enumerate(cs)}
        for li, leg in enumerate(legs):
            for r, p in enumerate(s["legs"].get(leg, []), start=1):
                ranks[i, li, index[p]] = r
        for d in s["dsts"]:
            pair_src.append(i)
            pair_cand.append(index.get(d, -1))
            for name, ranking in s["baselines"].items():
                hits.setdefault(name, []).append(float(d in ranking[:10]))
    return Dump(
        path.name.removesuffix(".legs.json"),
        vault,
        variant,
        ranks,
        np.array(pair_src, dtype=np.int64),
        np.array(pair_cand, dtype=np.int64),
        {name: float(np.mean(v)) for name, v in hits.items()},
    )


def scores(d: Dump, fusion: SuggestFusion, legs: Sequence[str] = ARRAY_LEGS) -> np.ndarray:
    w = np.array([fusion.weights.get(leg, 0.0) for leg in legs], dtype=np.float64)
    r = d.ranks.astype(np.float64)
    listed = (d.ranks > 0) & (d.ranks <= fusion.depth)
    contrib = np.where(listed, w[None, :, None] / (fusion.k + r), 0.0)
    out = np.asarray(contrib.sum(axis=1))
    lead = lead_leg(fusion, legs)
    if lead is not None:  # the lead leg's cards first, in its order (fuse_suggestions)
        i = legs.index(lead)
        out = out + np.where(listed[:, i, :], LEAD_BONUS - r[:, i, :], 0.0)
    return out


def lead_leg(fusion: SuggestFusion, legs: Sequence[str]) -> str | None:
    """The array leg that leads: ``fusion.lead``, or for "confident" the confident leg at the
    threshold that has a weight; None when it has no weight (as in fuse_suggestions)."""
    if not fusion.lead:
        return None
    names = (
        [fusion.lead]
        if fusion.lead != "confident"
        else [n for n in legs if n.startswith("confident@")]
    )
    return next((n for n in names if n in legs and fusion.weights.get(n, 0.0) > 0), None)


def metrics(d: Dump, fusion: SuggestFusion) -> dict[str, float]:
    """Recall@5, Recall@10 and MRR of the fused ranking over the dump's held-out links."""
    s = scores(d, fusion)
    found = d.pair_cand >= 0
    src, cand = d.pair_src[found], d.pair_cand[found]
    mine = s[src, cand]
    rows = s[src]
    col = np.arange(s.shape[1])[None, :]
    above = (rows > mine[:, None]) | ((rows == mine[:, None]) & (col < cand[:, None]))
    rank = above.sum(axis=1)  # 0-based
    ok = mine > 0
    n = len(d.pair_cand)
    return {
        "recall@5": float(((rank < 5) & ok).sum() / n),
        "recall@10": float(((rank < 10) & ok).sum() / n),
        "mrr": float(np.where(ok, 1.0 / (rank + 1), 0.0).sum() / n),
    }


def objective(dumps: Sequence[Dump], fusion: SuggestFusion) -> float:
    """Mean over vaults of the vault's mean Recall@10 (its variants and hold-out sets)."""
    per_vault: dict[str, list[float]] = {}
    for d in dumps:
        per_vault.setdefault(d.vault, []).append(metrics(d, fusion)["recall@10"])
    return float(np.mean([np.mean(v) for v in per_vault.values()]))


def with_weight(f: SuggestFusion, leg: str, w: float) -> SuggestFusion:
    return replace(f, weights={**f.weights, leg: w})


def tune(dumps: Sequence[Dump], start: SuggestFusion = DEFAULT_SUGGEST_FUSION) -> SuggestFusion:
    """Coordinate ascent over the grid; a change is kept only when it raises the objective."""
    best = to_arrays(start)
    best_score = objective(dumps, best)
    for _ in range(PASSES):
        improved = False
        now = next((n for n, w in best.weights.items() if n.startswith("confident@") and w > 0), "")
        for t in SURES:  # move the confident leg's weight to another threshold
            if not now:
                break
            w = best.weights[now]
            cand = with_weight(with_weight(best, now, 0.0), f"confident@{t}", w)
            sc = objective(dumps, cand)
            if sc > best_score + 1e-9:
                best, best_score, improved = cand, sc, True
                now = f"confident@{t}"
        for leg in ARRAY_LEGS:
            if leg.startswith("confident@") and leg != (now or f"confident@{SURES[-2]}"):
                continue  # one threshold at a time
            for w in WEIGHTS:
                cand = with_weight(best, leg, w)
                if not cand.legs:
                    continue
                sc = objective(dumps, cand)
                if sc > best_score + 1e-9:
                    best, best_score, improved = cand, sc, True
        for k in KS:
            cand = replace(best, k=k)
            sc = objective(dumps, cand)
            if sc > best_score + 1e-9:
                best, best_score, improved = cand, sc, True
        for depth in DEPTHS:
            cand = replace(best, depth=depth)
            sc = objective(dumps, cand)
            if sc > best_score + 1e-9:
                best, best_score, improved = cand, sc, True
        for lead in LEADS:
            cand = replace(best, lead=lead)
            sc = objective(dumps, cand)
            if sc > best_score + 1e-9:
                best, best_score, improved = cand, sc, True
        if not improved:
            break
    return best


def to_arrays(f: SuggestFusion) -> SuggestFusion:
    """The fusion with its confident leg at SURE_MENTION named as the arrays name it."""
    weights = {n: w for n, w in f.weights.items() if n != "confident"}
    weights[f"confident@{SURE_MENTION}"] = f.weights.get("confident", 0.0)
    return replace(f, weights=weights)


def describe(f: SuggestFusion) -> dict[str, object]:
    """The setting as the code takes it: weights by leg, k, depth, and the confident leg's
    threshold (``sure``: SURE_MENTION), and the leading leg."""
    weights: dict[str, float] = {}
    sure = None
    for n, w in f.weights.items():
        if w <= 0:
            continue
        if n.startswith("confident@"):
            weights["confident"], sure = w, float(n.split("@")[1])
        else:
            weights[n] = w
    return {"weights": weights, "k": f.k, "depth": f.depth, "sure": sure, "lead": f.lead}


def table(dumps: Sequence[Dump], fusion: SuggestFusion) -> dict[str, dict[str, float]]:
    return {d.name: metrics(d, fusion) for d in dumps}


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
        "--lead-only",
        action="store_true",
        help="keep the default weights; choose only the lead (on/off) by leave-one-vault-out",
    )
    args = parser.parse_args(argv)
    if args.tables:
        print(tables(args.dumps))
        return 0
    if args.lead_only:
        return lead_only([load_dump(p) for p in args.dumps])
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


def lead_only(dumps: Sequence[Dump]) -> int:
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


def fusion_from(data: Mapping[str, object]) -> SuggestFusion:
    """A fusion from :func:`describe`'s JSON (its ``sure`` is SURE_MENTION's to set)."""
    weights = data["weights"]
    assert isinstance(weights, dict)
    k, depth = data["k"], data["depth"]
    assert isinstance(k, int | float) and isinstance(depth, int)
    lead = data.get("lead")
    return SuggestFusion(
        {str(n): float(w) for n, w in weights.items()},
        float(k),
        depth,
        lead=str(lead) if lead else None,
    )


if __name__ == "__main__":
    raise SystemExit(main())
