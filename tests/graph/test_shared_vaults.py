"""Acceptance on real vaults from ../shared: resolved link pairs against an independent parser.

The reference (``../shared/eval/links/<vault>.edges.tsv``) resolves by path or file name only;
we also resolve titles and aliases and break ties towards the same folder, so small differences
in both directions are expected. The floors are the issue's acceptance figures.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from tests.conftest import EVAL, shared_vault
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault


def reference_pairs(name: str) -> set[tuple[str, str]]:
    path = EVAL / "links" / f"{name}.edges.tsv"
    if not path.is_file():
        pytest.skip(f"reference edges {path} not found")
    with path.open(encoding="utf-8") as fh:
        return {
            (r["src"], r["dst"]) for r in csv.DictReader(fh, delimiter="\t") if r["src"] != r["dst"]
        }


@pytest.mark.parametrize(
    ("name", "floor", "min_overlap"),
    [("obsidian-help-en", 930, 0.99), ("dendron-site", 2250, 0.98)],
)
def test_resolved_pairs_match_the_reference(name: str, floor: int, min_overlap: float) -> None:
    cards, _ = load_vault(shared_vault(name))
    ours = LinkGraph.build(cards).linked_pairs()
    ref = reference_pairs(name)
    assert len(ours) >= floor
    assert len(ours & ref) >= min_overlap * len(ref), sorted(ref - ours)[:20]


@pytest.mark.slow
def test_zettelkasten_13k_graph_command() -> None:
    """Counts only; its speed is measured by benchmarks/graph_bench.py."""
    vault = shared_vault("zettelkasten-13k")
    ref = reference_pairs("zettelkasten-13k")
    out = subprocess.run(
        [sys.executable, "-m", "zettel_lsp", "graph", str(vault), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    stats = json.loads(out.stdout)
    assert stats["cards"] >= 13_400
    assert stats["distinct_linked_pairs"] >= 28_000
    assert stats["distinct_linked_pairs"] >= 0.99 * len(ref)
    assert stats["skipped_files"] == 0
