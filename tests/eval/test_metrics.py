"""Metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from zettel_lsp.eval.metrics import (
    dcg,
    hit_at_k,
    mean_metrics,
    ndcg_at_k,
    query_metrics,
    recall_at_k,
    reciprocal_rank,
)


def test_dcg_by_hand() -> None:
    # 1/log2(2) + 0/log2(3) + 0.5/log2(4) = 1 + 0 + 0.25
    assert dcg([1.0, 0.0, 0.5]) == pytest.approx(1.25)


def test_ndcg_with_partial_gains() -> None:
    gains = {"a": 1.0, "b": 0.5}
    # ideal: [1, 0.5] -> 1 + 0.5/log2(3) = 1.315465...
    ideal = 1 + 0.5 / math.log2(3)
    assert ndcg_at_k(["a", "b", "x"], gains, 5) == pytest.approx(1.0)
    # got: [0, 1, 0.5] -> 1/log2(3) + 0.5/log2(4) = 0.630930 + 0.25
    assert ndcg_at_k(["x", "a", "b"], gains, 5) == pytest.approx((1 / math.log2(3) + 0.25) / ideal)
    # cut at k=1: only "x" counts; the ideal is cut too (gain 1)
    assert ndcg_at_k(["x", "a"], gains, 1) == 0.0
    assert ndcg_at_k(["a"], {}, 5) == 0.0


def test_rr_hit_recall() -> None:
    rel = {"a", "b"}
    assert reciprocal_rank(["x", "y", "b", "a"], rel) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], rel) == 0.0
    assert hit_at_k(["x", "a"], rel, 1) == 0.0 and hit_at_k(["x", "a"], rel, 2) == 1.0
    assert recall_at_k(["a", "x", "b"], rel, 2) == 0.5
    assert recall_at_k(["a", "x", "b"], rel, 3) == 1.0


def test_query_metrics_and_mean() -> None:
    m = query_metrics(["p", "a"], {"a"}, {"p"}, k=10)
    ideal = 1 + 0.5 / math.log2(3)
    assert m["ndcg@5"] == pytest.approx((0.5 + 1 / math.log2(3)) / ideal)
    assert (m["mrr"], m["hit@1"], m["hit@3"], m["recall@10"]) == (0.5, 0.0, 1.0, 1.0)
    avg = mean_metrics([{"mrr": 1.0}, {"mrr": 0.0}, {"mrr": 0.5}])
    assert avg == {"mrr": 0.5}


def test_query_metrics_with_a_recall_cutoff() -> None:
    ranked = [f"x{i}" for i in range(50)] + ["a"] + [f"y{i}" for i in range(60)] + ["b"]
    m = query_metrics(ranked, {"a", "b"}, k=10, recall_k=100)
    assert (m["recall@10"], m["recall@100"]) == (0.0, 0.5)
    assert m["mrr"] == pytest.approx(1 / 51)
    assert "recall@100" not in query_metrics(ranked, {"a"}, k=10)  # existing keys unchanged
