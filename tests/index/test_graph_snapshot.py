"""The graph snapshot (issue #18): a start loads the last run's graph and applies the cards that
changed since, instead of building it; the result is the graph a full build gives. Real files,
the real index (lexical: the graph does not need vectors)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.graph.test_link_graph import snapshot as graph_view
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.engine import title_index
from zettel_lsp.search.query import parse_query
from zettel_lsp.snapshot import MAX_CHANGES, SNAPSHOT_FILE
from zettel_lsp.vault import Vault

FROM_SNAPSHOT = "graph from its snapshot"
IN_FULL = "building the graph in full"


def start(vault: Path, index_dir: Path, cache_dir: Path) -> tuple[LinkGraph, list[str], list[str]]:
    """A start as the server makes it (sync, then the graph): the graph, the problems, and
    the titles a query finds."""
    with Vault(vault, index_dir, IndexSettings(), cache_dir=cache_dir) as v:
        v.sync()
        graph, engine, problems = v.load_graph()
        titles = [m.path for m in engine.titles.search(parse_query("scoring"), 10)]
        return graph, problems, titles


def fresh(vault: Path) -> tuple[LinkGraph, list[str]]:
    cards, _ = load_vault(vault)
    graph = LinkGraph.build(cards)
    return graph, [m.path for m in title_index(graph).search(parse_query("scoring"), 10)]


def test_a_restart_loads_the_snapshot_and_applies_what_changed(
    example: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault, index_dir = example
    caplog.set_level(logging.INFO)
    (index_dir / SNAPSHOT_FILE).unlink(missing_ok=True)  # the template's start wrote one
    first, _, _ = start(vault, index_dir, cache_dir)
    assert (index_dir / SNAPSHOT_FILE).is_file()
    assert FROM_SNAPSHOT not in caplog.text
    written = (index_dir / SNAPSHOT_FILE).stat().st_mtime_ns

    # the full build's cards let their texts go to the snapshot it wrote (text_store.py)
    assert all(c.text_ref() is not None for c in first.cards.values())

    caplog.clear()
    again, _, _ = start(vault, index_dir, cache_dir)
    assert FROM_SNAPSHOT in caplog.text
    assert graph_view(again) == graph_view(first)
    assert all(c.text_ref() is not None for c in again.cards.values())

    # between runs: prose edited, a title changed, a card deleted, one added that others name
    (vault / "baking" / "Scoring.md").write_text("# Scoring\n\nNow about [[BM25]] only.\n")
    scoring_twin = vault / "method" / "Atomic notes.md"
    scoring_twin.write_text("---\ntitle: Atomicity\naliases: [Tiny notes]\n---\nOne idea.\n")
    (vault / "retrieval" / "Stopwords.md").unlink()
    (vault / "Scoring rules.md").write_text("# Scoring rules\n\nSee [[Scoring]]; atomicity.\n")
    caplog.clear()
    changed, _, titles = start(vault, index_dir, cache_dir)
    assert FROM_SNAPSHOT in caplog.text and "3 changed and 1 gone" in caplog.text
    full, full_titles = fresh(vault)
    assert graph_view(changed) == graph_view(full)
    assert sorted(p for p, c in changed.cards.items() if c.text_ref() is None) == [
        "Scoring rules.md",
        "baking/Scoring.md",
        "method/Atomic notes.md",
    ]  # what a start applies to the snapshot stays in memory
    assert [c.text for c in changed.cards.values()] == [full.cards[p].text for p in changed.cards]
    assert titles == full_titles and "Scoring rules.md" in titles
    assert (index_dir / SNAPSHOT_FILE).stat().st_mtime_ns == written  # not rewritten


def test_many_changes_or_a_damaged_snapshot_build_in_full(
    example: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault, index_dir = example
    caplog.set_level(logging.INFO)
    start(vault, index_dir, cache_dir)
    for i in range(MAX_CHANGES + 1):
        (vault / "many" / f"Card {i}.md").parent.mkdir(exist_ok=True)
        (vault / "many" / f"Card {i}.md").write_text(f"# Card {i}\n\nAbout [[Scoring]].\n")
    caplog.clear()
    graph, _, _ = start(vault, index_dir, cache_dir)
    assert IN_FULL in caplog.text and FROM_SNAPSHOT not in caplog.text
    assert graph_view(graph) == graph_view(fresh(vault)[0])
    caplog.clear()
    start(vault, index_dir, cache_dir)
    assert FROM_SNAPSHOT in caplog.text  # written again by the full build

    (index_dir / SNAPSHOT_FILE).write_bytes(b"not a pickle")
    caplog.clear()
    graph, _, _ = start(vault, index_dir, cache_dir)
    assert FROM_SNAPSHOT not in caplog.text and "unreadable" in caplog.text
    assert graph_view(graph) == graph_view(fresh(vault)[0])
