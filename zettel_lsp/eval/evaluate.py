"""Evaluate search on judged queries (the golden-set format of obsidian-help.golden.json)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zettel_lsp.eval.metrics import mean_metrics, query_metrics


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    id: str
    query: str
    relevant: frozenset[str]
    partial: frozenset[str] = frozenset()
    category: str = "all"


def load_golden(path: Path) -> list[GoldenQuery]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data["queries"] if isinstance(data, dict) else data
    return [
        GoldenQuery(
            id=str(q.get("id", f"q{i + 1:03d}")),
            query=str(q["query"]),
            relevant=frozenset(q.get("relevant_paths", [])),
            partial=frozenset(q.get("partial_paths", [])),
            category=str(q.get("category", "all")),
        )
        for i, q in enumerate(items)
    ]


@dataclass(slots=True)
class EvalReport:
    k: int
    overall: dict[str, float]
    by_category: dict[str, dict[str, float]]
    queries: list[dict[str, Any]] = field(default_factory=list)

    def misses(self) -> list[dict[str, Any]]:
        """Queries whose first relevant card is not at rank 1."""
        return [q for q in self.queries if q["metrics"]["hit@1"] < 1.0]


def evaluate(
    search: Callable[[str], Sequence[str]],
    golden: Sequence[GoldenQuery],
    k: int = 10,
    recall_k: int | None = None,
) -> EvalReport:
    """``search(query)`` returns card paths, best first. ``recall_k`` adds Recall at that depth
    (the search must return that many)."""
    rows: list[dict[str, Any]] = []
    for g in golden:
        ranked = list(search(g.query))
        m = query_metrics(ranked, set(g.relevant), set(g.partial), k, recall_k)
        rows.append(
            {
                "id": g.id,
                "query": g.query,
                "category": g.category,
                "metrics": m,
                "relevant": sorted(g.relevant),
                "top": ranked[:5],
            }
        )
    cats: dict[str, list[dict[str, float]]] = {}
    for r in rows:
        cats.setdefault(r["category"], []).append(r["metrics"])
    return EvalReport(
        k=k,
        overall=mean_metrics([r["metrics"] for r in rows]),
        by_category={
            c: mean_metrics(ms) | {"queries": float(len(ms))} for c, ms in sorted(cats.items())
        },
        queries=rows,
    )
