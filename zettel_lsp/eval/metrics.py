"""Ranking metrics over judged queries: nDCG@k, MRR, Hit@k, Recall@k. Pure functions.

Gains follow the golden-set format: ``relevant`` paths gain 1.0, ``partial`` paths 0.5 (nDCG
only); MRR, Hit and Recall count ``relevant`` paths only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: sum of gain_i / log2(i + 1), ranks from 1."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k; 0.0 when nothing is judged relevant."""
    ideal = dcg(sorted(gains.values(), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg([gains.get(p, 0.0) for p in ranked[:k]]) / ideal


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    for i, p in enumerate(ranked):
        if p in relevant:
            return 1.0 / (i + 1)
    return 0.0


def hit_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if any(p in relevant for p in ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def query_metrics(
    ranked: Sequence[str],
    relevant: set[str],
    partial: Set[str] = frozenset(),
    k: int = 10,
    recall_k: int | None = None,
) -> dict[str, float]:
    """nDCG@5, nDCG@k, MRR (over the whole ranking), Hit@1/3/5, Recall@k, and also
    Recall@``recall_k`` when given (e.g. 100 for judged IR collections)."""
    gains = dict.fromkeys(partial, 0.5) | dict.fromkeys(relevant, 1.0)
    out = {
        "ndcg@5": ndcg_at_k(ranked, gains, 5),
        f"ndcg@{k}": ndcg_at_k(ranked, gains, k),
        "mrr": reciprocal_rank(ranked, relevant),
        "hit@1": hit_at_k(ranked, relevant, 1),
        "hit@3": hit_at_k(ranked, relevant, 3),
        "hit@5": hit_at_k(ranked, relevant, 5),
        f"recall@{k}": recall_at_k(ranked, relevant, k),
    }
    if recall_k is not None:
        out[f"recall@{recall_k}"] = recall_at_k(ranked, relevant, recall_k)
    return out


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    keys = list(rows[0])
    return {key: sum(r[key] for r in rows) / len(rows) for key in keys}
