"""benchmarks/hub_leaf.py on a hand-built vault: which hub lines become queries, how they are
cleaned, and the per-hub and total caps. (The benchmark scripts are not a package; the folder
beside ``tests`` is importable as ``benchmarks`` from the project root, where pytest runs.)"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks import hub_leaf
from zettel_lsp.eval.evaluate import load_golden
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

SORTING = """\
# Sorting

- [[Merge sort]]: split the list in halves, sort each half, merge them.
- [[Quick sort]] — Quick sort picks a pivot and partitions the rest around it
- [[Bubble sort]]: swaps neighbours until sorted, like [[Insertion sort]] on its prefix
- [[Insertion sort]]: grows a sorted prefix
- **[[Heap sort]]** - builds a heap and pops the *largest* element each round
- [[Radix sort]] is a stable sort by digits, from the least significant one
- [x] [[Shell sort]] - read about gaps and insertion passes over the list
The [[Shell sort]] compares elements far apart, then closer and closer together.

| Card | What it does |
| --- | --- |
| [[Counting sort]] | counts each key, then rebuilds the output from the counts |
"""

INDEX = """\
* [Heap sort](Heap%20sort.md) — a comparison sort that uses a [binary heap](https://x.org/h)
- [[Bubble sort]]: also called the sinking sort, swaps neighbours out of order
- [[Index]]: this very page, with every sorting card listed
"""


def make_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sorting.md").write_text(SORTING)
    (vault / "Index.md").write_text(INDEX)
    (vault / "Bubble sort.md").write_text("---\naliases: [sinking sort]\n---\nSwaps.\n")
    for name in ("Merge", "Quick", "Insertion", "Heap", "Radix", "Shell", "Counting"):
        (vault / f"{name} sort.md").write_text(f"# {name} sort\n\nA sorting algorithm.\n")
    return vault


def found(vault: Path) -> tuple[list[hub_leaf.HubLine], Counter[str]]:
    cards, _ = load_vault(vault)
    counts: Counter[str] = Counter()
    return hub_leaf.hub_lines(LinkGraph.build(cards), counts), counts


def test_glosses_become_queries_with_the_leaf_relevant_and_the_hub_partial(
    tmp_path: Path,
) -> None:
    lines, counts = found(make_vault(tmp_path))
    got = {(h.hub, h.leaf): h.query for h in lines}
    assert got == {
        ("Sorting.md", "Merge sort.md"): "split the list in halves, sort each half, merge them",
        ("Sorting.md", "Heap sort.md"): "builds a heap and pops the largest element each round",
        ("Sorting.md", "Radix sort.md"): "a stable sort by digits, from the least significant one",
        ("Sorting.md", "Counting sort.md"): (
            "counts each key, then rebuilds the output from the counts"
        ),
        ("Index.md", "Heap sort.md"): "a comparison sort that uses a binary heap",
    }
    # the title (Quick sort) and an alias (sinking sort) repeated; two cards on one line; a
    # link to the hub itself. Not hub lines at all: 4 words of gloss (Insertion sort), a task
    # and prose (Shell sort).
    assert counts == Counter(
        {"hub lines": 9, "repeats the name": 2, "several cards": 1, "links itself": 1}
    )
    merge = next(h for h in lines if h.leaf == "Merge sort.md")
    assert (merge.line, merge.raw) == (2, "[[Merge sort]]")
    [entry] = hub_leaf.golden([merge])
    assert entry == {
        "id": "h001",
        "query": "split the list in halves, sort each half, merge them",
        "relevant_paths": ["Merge sort.md"],
        "partial_paths": ["Sorting.md"],
        "category": "hub_leaf",
        "notes": "hub line 3: [[Merge sort]]",
    }


def test_pick_caps_per_hub_and_in_all_and_is_seeded(tmp_path: Path) -> None:
    lines, _ = found(make_vault(tmp_path))
    three = hub_leaf.pick(lines, 100, 3, 0)
    assert Counter(h.hub for h in three) == {"Sorting.md": 3, "Index.md": 1}
    assert len(hub_leaf.pick(lines, 100, 10, 0)) == 5
    # one per hub first: the cap in all spreads the picks over the hubs
    assert {h.hub for h in hub_leaf.pick(lines, 2, 3, 0)} == {"Sorting.md", "Index.md"}
    assert hub_leaf.pick(lines, 100, 3, 0) == three
    first = hub_leaf.pick(lines, 100, 1, 0)
    assert any(hub_leaf.pick(lines, 100, 1, seed) != first for seed in range(1, 20))


def test_main_writes_a_golden_set_eval_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault, out = make_vault(tmp_path), tmp_path / "hub_leaf.json"
    monkeypatch.setattr(sys, "argv", ["hub_leaf.py", str(vault), str(out), "--per-hub", "2"])
    assert hub_leaf.main() == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [q["id"] for q in data] == ["h001", "h002", "h003"]
    assert {q["category"] for q in data} == {"hub_leaf"}
    golden = load_golden(out)
    assert all(len(g.relevant) == 1 and len(g.partial) == 1 for g in golden)
    assert "9 hub lines" in capsys.readouterr().err
