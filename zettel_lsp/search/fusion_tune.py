"""Choosing the fusion of the suggestion legs on link hold-outs (issue #15).

A hold-out's legs (per source card: its held-out targets and every leg's ranking, as
``eval-links --dump-legs`` writes them, or :func:`zettel_lsp.search.calibrate.self_legs` on the
vault's own links) become arrays (:func:`leg_arrays`); the fusion
(:func:`zettel_lsp.search.suggest.fuse_suggestions`: weighted RRF, ``w / (k + rank)`` over the
first ``depth`` ranks of each leg, ties by path) is recomputed with numpy for every candidate
setting, so choosing one takes seconds, not an index per setting.

:func:`tune`: coordinate ascent from a start over a small grid (a weight per leg from
:data:`WEIGHTS`; unless ``weights_only``, also ``k`` from :data:`KS`, ``depth`` from
:data:`DEPTHS`, the lead from :data:`LEADS` and the confident leg's threshold from
:data:`SURES`), a few passes, maximising :func:`objective`, the mean over vaults of the vault's
mean Recall@10 (over its variants and hold-out sets, each equal); a step is kept only when it
gains more than ``margin``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from zettel_lsp.search.suggest.legs import (
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
class LegArrays:
    """One (vault, set, variant) hold-out's legs as arrays: ``ranks[s, leg, c]`` is candidate
    c's 1-based rank in the leg for source s (0: not listed); candidates of a source are sorted
    by path, so a lower index wins a tie; ``pairs`` holds (source, candidate index or -1) per
    held-out link."""

    name: str
    vault: str
    variant: str
    ranks: np.ndarray
    pair_src: np.ndarray
    pair_cand: np.ndarray
    baselines: dict[str, float]  # Recall@10 of each baseline ranking in the dump


def leg_arrays(
    entries: Sequence[Mapping[str, Any]],
    *,
    name: str,
    vault: str,
    variant: str,
    legs: Sequence[str] = ARRAY_LEGS,
) -> LegArrays:
    """Per-source legs (as ``eval-links --dump-legs`` writes them: ``dsts``, ``legs``,
    ``confidence`` and ``baselines``) as arrays. The entries' leg dicts gain the confident leg
    at each threshold of :data:`SURES`."""
    for s in entries:
        conf = s.get("confidence", {})
        for t in SURES:
            s["legs"][f"confident@{t}"] = [p for p in s["legs"]["mentions"] if conf[p] >= t]
    cands = [sorted({p for leg in legs for p in s["legs"].get(leg, [])}) for s in entries]
    width = max((len(c) for c in cands), default=0) or 1
    ranks = np.zeros((len(entries), len(legs), width), dtype=np.int16)
    pair_src: list[int] = []
    pair_cand: list[int] = []
    hits: dict[str, list[float]] = {}
    for i, (s, cs) in enumerate(zip(entries, cands, strict=True)):
        index = {p: j for j, p in enumerate(cs)}
        for li, leg in enumerate(legs):
            for r, p in enumerate(s["legs"].get(leg, []), start=1):
                ranks[i, li, index[p]] = r
        for d in s["dsts"]:
            pair_src.append(i)
            pair_cand.append(index.get(d, -1))
            for base, ranking in s.get("baselines", {}).items():
                hits.setdefault(base, []).append(float(d in ranking[:10]))
    return LegArrays(
        name,
        vault,
        variant,
        ranks,
        np.array(pair_src, dtype=np.int64),
        np.array(pair_cand, dtype=np.int64),
        {base: float(np.mean(v)) for base, v in hits.items()},
    )


def scores(d: LegArrays, fusion: SuggestFusion, legs: Sequence[str] = ARRAY_LEGS) -> np.ndarray:
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


def metrics(d: LegArrays, fusion: SuggestFusion) -> dict[str, float]:
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


def objective(
    dumps: Sequence[LegArrays], fusion: SuggestFusion, floors: Sequence[float] | None = None
) -> float:
    """Mean over vaults of the vault's mean Recall@10 (its variants and hold-out sets);
    ``-inf`` when a dump's Recall@10 is below its entry in ``floors``."""
    per_vault: dict[str, list[float]] = {}
    for i, d in enumerate(dumps):
        r = metrics(d, fusion)["recall@10"]
        if floors is not None and r < floors[i]:
            return -np.inf
        per_vault.setdefault(d.vault, []).append(r)
    return float(np.mean([np.mean(v) for v in per_vault.values()]))


def with_weight(f: SuggestFusion, leg: str, w: float) -> SuggestFusion:
    return replace(f, weights={**f.weights, leg: w})


def tune(
    dumps: Sequence[LegArrays],
    start: SuggestFusion = DEFAULT_SUGGEST_FUSION,
    *,
    margin: float = 1e-9,
    weights_only: bool = False,
    keep: float | None = None,
) -> SuggestFusion:
    """Coordinate ascent over the grid; a change is kept only when it raises the objective by
    more than ``margin``; ``weights_only``: the legs' weights, not k, depth, lead or threshold;
    ``keep``: no dump may fall more than this below its Recall@10 at ``start``. With
    ``weights_only``, only the legs ``start`` weighs are re-weighed (one may drop to 0)."""
    best = to_arrays(start)
    floors = None
    if keep is not None:
        floors = [metrics(d, best)["recall@10"] - keep for d in dumps]
    best_score = objective(dumps, best, floors)

    def better(cand: SuggestFusion) -> bool:
        nonlocal best, best_score
        if not cand.legs:
            return False
        sc = objective(dumps, cand, floors)
        if sc > best_score + margin:
            best, best_score = cand, sc
            return True
        return False

    start_legs = [leg for leg in ARRAY_LEGS if best.weights.get(leg, 0.0) > 0]
    for _ in range(PASSES):
        improved = False
        if weights_only:  # the start's legs only (one may drop to 0)
            for leg in start_legs:
                for w in WEIGHTS:
                    improved |= better(with_weight(best, leg, w))
            if not improved:
                break
            continue
        now = next((n for n, w in best.weights.items() if n.startswith("confident@") and w > 0), "")
        for t in SURES:  # move the confident leg's weight to another threshold
            if not now:
                break
            w = best.weights[now]
            if better(with_weight(with_weight(best, now, 0.0), f"confident@{t}", w)):
                improved, now = True, f"confident@{t}"
        for leg in ARRAY_LEGS:
            if leg.startswith("confident@") and leg != (now or f"confident@{SURES[-2]}"):
                continue  # one threshold at a time
            for w in WEIGHTS:
                improved |= better(with_weight(best, leg, w))
        for k in KS:
            improved |= better(replace(best, k=k))
        for depth in DEPTHS:
            improved |= better(replace(best, depth=depth))
        for lead in LEADS:
            improved |= better(replace(best, lead=lead))
        if not improved:
            break
    return best


def to_arrays(f: SuggestFusion) -> SuggestFusion:
    """The fusion with its confident leg at SURE_MENTION named as the arrays name it."""
    weights = {n: w for n, w in f.weights.items() if n != "confident"}
    weights[f"confident@{SURE_MENTION}"] = f.weights.get("confident", 0.0)
    return replace(f, weights=weights)


def from_arrays(f: SuggestFusion) -> SuggestFusion:
    """The fusion as :func:`~zettel_lsp.search.suggest.fuse_suggestions` takes it: the
    confident leg at SURE_MENTION named ``confident`` (legs without weight left out). Raises
    ValueError for another threshold, which the live legs do not have."""
    weights: dict[str, float] = {}
    for n, w in f.weights.items():
        if w <= 0:
            continue
        if n.startswith("confident@"):
            if float(n.split("@")[1]) != SURE_MENTION:
                raise ValueError(f"{n}: the confident leg's threshold is {SURE_MENTION}")
            n = "confident"
        weights[n] = w
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


def table(dumps: Sequence[LegArrays], fusion: SuggestFusion) -> dict[str, dict[str, float]]:
    return {d.name: metrics(d, fusion) for d in dumps}


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
