"""Card texts kept in a graph snapshot's file (issue #18): every card reads the same text from
the file as it held in memory, in one read or many, and a file replaced or cut short under a
running graph never gives a card another card's text."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from tests.graph.test_link_graph import snapshot as graph_view
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes import text_store
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.text_store import TextStoreError, texts_of
from zettel_lsp.search.engine import title_index
from zettel_lsp.snapshot import SNAPSHOT_FILE, load_snapshot, save_snapshot

TEXTS = {
    "Hub.md": "# Hub\n\nLinks [[BM25]] and [[Inverted index]]; mentions lonely things.\n",
    "BM25.md": "---\naliases: [Okapi]\n---\n# BM25\n\nRanks with an inverted index.\n",
    "Inverted index.md": "Postings per term. Ёлка, naïve, 中文文本, emoji 🙂.\n",
    "Lonely.md": "",
    "Odd.md": "a lone surrogate \udcff kept as read\n",
    "Big.md": "word " * 50_000,
}


def build() -> LinkGraph:
    return LinkGraph.build([parse_card(p, t) for p, t in TEXTS.items()])


def saved(tmp_path: Path) -> LinkGraph:
    graph = build()
    save_snapshot(tmp_path, graph, title_index(graph), {}, "auto")
    return graph


def test_a_saved_graph_reads_every_text_from_its_snapshot(tmp_path: Path) -> None:
    graph = saved(tmp_path)
    assert all(c.text_ref() is not None for c in graph.cards.values())
    assert {p: c.text for p, c in graph.cards.items()} == TEXTS
    loaded = load_snapshot(tmp_path, "auto", graph.mention_min_length)
    assert loaded is not None
    assert {p: c.text for p, c in loaded.graph.cards.items()} == TEXTS
    assert graph_view(loaded.graph) == graph_view(build())
    assert loaded.graph.cards["Hub.md"] == build().cards["Hub.md"]


def test_mention_spans_are_read_from_the_snapshot_too(tmp_path: Path) -> None:
    graph = saved(tmp_path)
    loaded = load_snapshot(tmp_path, "auto", graph.mention_min_length)
    assert loaded is not None
    for g in (graph, loaded.graph):
        assert g._mentions and all(isinstance(w, int) for w, _ in g._mentions.values())
        assert graph_view(g) == graph_view(build())
    # what the next full build reuses: the same as from a graph held in memory
    assert loaded.graph.mention_cache() == build().mention_cache()
    # pickled outside a snapshot (no file to refer to): the spans themselves
    copy = pickle.loads(pickle.dumps(loaded.graph))
    assert graph_view(copy) == graph_view(build())
    assert not any(isinstance(w, int) for w, _ in copy._mentions.values())
    # a change searches its card again: spans in memory, the rest still in the file
    loaded.graph.upsert(parse_card("Hub.md", "Okapi and lonely, again.\n"))
    assert not isinstance(loaded.graph._mentions["Hub.md"][0], int)
    fresh = LinkGraph.build(
        [
            *(parse_card(p, t) for p, t in TEXTS.items() if p != "Hub.md"),
            parse_card("Hub.md", "Okapi and lonely, again.\n"),
        ]
    )
    assert graph_view(loaded.graph) == graph_view(fresh)


def test_texts_of_reads_in_blocks_and_keeps_every_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = saved(tmp_path)
    monkeypatch.setattr(text_store, "BLOCK_BYTES", 64)  # texts span blocks; Big.md exceeds one
    extra = parse_card("New.md", "held in memory")
    cards = [*graph.cards.values(), extra, graph.cards["Hub.md"]]
    got = [(c.path, t) for c, t in texts_of(cards)]
    twice = ("Hub.md", TEXTS["Hub.md"])
    assert sorted(got) == sorted([*TEXTS.items(), ("New.md", "held in memory"), twice])
    assert got[0] == ("New.md", "held in memory")  # in memory first, then in file order


def test_a_card_pickled_outside_a_snapshot_carries_its_text(tmp_path: Path) -> None:
    card = saved(tmp_path).cards["Inverted index.md"]
    copy = pickle.loads(pickle.dumps(card))  # the card cache, a process pool
    assert copy.text_ref() is None and copy == card


def test_a_replaced_snapshot_leaves_a_running_graph_its_texts(tmp_path: Path) -> None:
    graph = saved(tmp_path)
    other = LinkGraph.build([parse_card(p, t.upper()) for p, t in TEXTS.items()])
    save_snapshot(tmp_path, other, title_index(other), {}, "auto")  # a new file, renamed in
    assert {p: c.text for p, c in graph.cards.items()} == TEXTS
    assert graph.cards["Hub.md"].text_ref() != other.cards["Hub.md"].text_ref()


def test_a_snapshot_cut_short_is_not_loaded_and_never_misreads(tmp_path: Path) -> None:
    graph = saved(tmp_path)
    path = tmp_path / SNAPSHOT_FILE
    os.truncate(path, path.stat().st_size - 10)
    assert load_snapshot(tmp_path, "auto", graph.mention_min_length) is None
    # the running graph's file was cut under it: a clear error, not another card's text
    with pytest.raises(TextStoreError, match="expected"):
        _ = graph.cards["Big.md"].text


def test_setting_a_text_keeps_it_in_memory(tmp_path: Path) -> None:
    card: Card = saved(tmp_path).cards["Lonely.md"]
    card.text = "now written"
    assert card.text_ref() is None and card.text == "now written"
