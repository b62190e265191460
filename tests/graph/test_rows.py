"""The graph's rows in the index database: what a start reads back is what was saved."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.rows import load_mentions, save_mentions
from zettel_lsp.index.db import IndexDB
from zettel_lsp.notes.parser import parse_card


def test_mentions_come_back_as_saved_with_one_string_per_card(tmp_path: Path) -> None:
    cards = [
        parse_card("Linux.md", "text\n"),
        parse_card("a.md", "Linux here, and Linux there.\n"),
        parse_card("b.md", "Linux again.\n"),
    ]
    graph = LinkGraph.build(cards)
    saved = graph.mention_cache()
    db = IndexDB(tmp_path)
    try:
        save_mentions(db, saved)
        loaded = load_mentions(db)
    finally:
        db.close()
    assert loaded is not None
    assert loaded.phrases == saved.phrases and loaded.min_length == saved.min_length
    assert {p: (d, list(s), t) for p, (d, s, t) in loaded.cards.items()} == {
        p: (d, list(s), t) for p, (d, s, t) in saved.cards.items()
    }
    named = [t for _, _, targets in loaded.cards.values() for t in targets]
    assert named.count("Linux.md") == 3
    assert len({id(t) for t in named}) == 1  # every mention of the card shares its path
    # a graph built from them finds what the mention pass finds
    again = LinkGraph.build(cards, mentions=loaded)
    assert again.mentions_found == 0
    assert [(m.source, m.target, m.start) for m in again.mentions_of("a.md")] == [
        (m.source, m.target, m.start) for m in graph.mentions_of("a.md")
    ]
