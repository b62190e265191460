"""benchmarks/anchor_text.py on a hand-built vault: which sentences become a card's anchor text
(other cards' prose around their links to it, never a bare list of links such as a
materialised collection's ``## Cites``), and the BM25 over them."""

from __future__ import annotations

from pathlib import Path

from benchmarks import anchor_text as at
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

CARDS = {
    "Merge sort.md": "# Merge sort\n\nA divide and conquer sort.\n",
    "Quick sort.md": "# Quick sort\n\nPicks a pivot.\n",
    "Sorting.md": (
        "# Sorting\n\nSome intro. [[Merge sort]] splits the list in halves and merges them "
        "back. Another sentence here.\n\n## Cites\n\n- [[Quick sort]]\n- [[Merge sort|Merge]]\n"
    ),
    "Notes.md": "# Notes\n\nSee also [[Quick sort]].\n",
}


def graph(tmp_path: Path) -> LinkGraph:
    for name, text in CARDS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    cards, _ = load_vault(tmp_path)
    return LinkGraph.build(cards)


def test_anchor_text_is_the_linking_sentence_without_bare_link_lists(tmp_path: Path) -> None:
    texts = at.anchor_texts(graph(tmp_path), "links")
    # the sentence around the link, links as their visible text; not the next sentence
    assert texts == {"Merge sort.md": "Merge sort splits the list in halves and merges them back"}
    # a Cites entry or a bare "See also" says nothing of its own: no anchor text for Quick sort


def test_cited_by_variant_keeps_bare_entries_as_the_citing_title(tmp_path: Path) -> None:
    texts = at.anchor_texts(graph(tmp_path), "links+cited-by")
    assert texts["Quick sort.md"] == "Notes Sorting"
    assert texts["Merge sort.md"].startswith("Merge sort splits")


def test_bm25_ranks_the_card_whose_anchor_text_matches(tmp_path: Path) -> None:
    index = at.BM25.of({"a.md": "splits the list in halves", "b.md": "picks a pivot element"})
    assert [p for p, _ in index.search("halves of a list", 5)] == ["a.md"]
    assert index.search("nothing matches", 5) == []
