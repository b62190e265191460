"""Link resolution: each stage, case-insensitivity, tie-breaking, Dendron order, attachments."""

from __future__ import annotations

import pytest

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import Stage
from zettel_lsp.notes.parser import parse_card

CARDS = {
    "retrieval/BM25.md": "---\naliases: [Okapi BM25]\n---\n",
    "retrieval/Overview.md": "",
    "baking/Overview.md": "",
    "baking/deep/Overview.md": "",
    "method/202311211530 Atomic notes.md": "---\ntitle: Atomic notes\n---\n",
    "Levain.md": "---\nid: lev-1\naliases: [leaven, starter build]\n---\n",
    "dendron.topic.markdown.md": "",
    "dendron.topic.md": "",
    "Docs Home.md": "---\ntitle: Docs\n---\n# Docs\n",  # an H1 alone would not be the title
    "Café.md": "",
}


@pytest.fixture
def resolver() -> LinkGraph:
    return LinkGraph.build(parse_card(path, text) for path, text in CARDS.items())


def link(text: str):
    card = parse_card("x.md", text)
    assert len(card.links) == 1
    return card.links[0]


@pytest.mark.parametrize(
    ("target", "source", "expected", "stage"),
    [
        ("retrieval/BM25", "any.md", "retrieval/BM25.md", Stage.PATH),
        ("Retrieval/bm25.md", "any.md", "retrieval/BM25.md", Stage.PATH),
        ("bm25", "any.md", "retrieval/BM25.md", Stage.STEM),
        ("okapi bm25", "any.md", "retrieval/BM25.md", Stage.ALIAS),
        ("atomic NOTES", "any.md", "method/202311211530 Atomic notes.md", Stage.TITLE),
        ("202311211530", "any.md", "method/202311211530 Atomic notes.md", Stage.ID),
        ("lev-1", "any.md", "Levain.md", Stage.ID),
        ("starter build", "any.md", "Levain.md", Stage.ALIAS),
        ("deep/Overview", "any.md", "baking/deep/Overview.md", Stage.SUFFIX),
        ("dendron.topic.markdown", "any.md", "dendron.topic.markdown.md", Stage.PATH),
        ("dendron://site-vault/dendron.topic", "any.md", "dendron.topic.md", Stage.PATH),
        ("Docs", "any.md", "Docs Home.md", Stage.TITLE),
        ("Cafe\u0301", "any.md", "Café.md", Stage.PATH),  # NFD spelling of an NFC file name
    ],
)
def test_stages(resolver: LinkGraph, target: str, source: str, expected: str, stage: Stage) -> None:
    res = resolver.resolve(target, source)
    assert (res.target, res.stage) == (expected, stage)


def test_path_beats_stem_beats_title_beats_alias() -> None:
    r = LinkGraph.build(
        [
            parse_card("a/Thing.md", "---\ntitle: Other\n---\n"),
            parse_card("b/Other.md", "---\naliases: [Thing]\n---\n"),
        ]
    )
    assert r.resolve("Thing", "z.md").target == "a/Thing.md"  # stem beats alias
    assert r.resolve("Other", "z.md").target == "b/Other.md"  # stem beats title


def test_ties_prefer_same_folder_then_shortest_path(resolver: LinkGraph) -> None:
    assert resolver.resolve("Overview", "baking/Bread.md").target == "baking/Overview.md"
    assert resolver.resolve("Overview", "baking/deep/x.md").target == "baking/deep/Overview.md"
    assert resolver.resolve("Overview", "retrieval/x.md").target == "retrieval/Overview.md"
    # no card in the source's folder: the shortest path wins, then alphabetical order
    res = resolver.resolve("Overview", "method/x.md")
    assert res.target == "baking/Overview.md" and res.ambiguous


def test_markdown_links_are_relative_to_the_source_folder(resolver: LinkGraph) -> None:
    md = link("[x](../baking/Overview.md)")
    assert resolver.resolve_link(md, "retrieval/Notes.md").target == "baking/Overview.md"
    md = link("[x](Overview.md)")
    assert resolver.resolve_link(md, "retrieval/Notes.md").target == "retrieval/Overview.md"
    md = link("[x](../method/202311211530%20Atomic%20notes.md)")
    assert resolver.resolve_link(md, "baking/x.md").target == "method/202311211530 Atomic notes.md"


def test_dendron_label_first_order(resolver: LinkGraph) -> None:
    # the left side names no file but the right side does
    res = resolver.resolve_link(link("[[Docs|dendron.topic.markdown#sec]]"), "any.md")
    assert (res.target, res.swapped) == ("dendron.topic.markdown.md", True)
    # Obsidian order still wins when the left side is a file
    res = resolver.resolve_link(link("[[bm25|Docs]]"), "any.md")
    assert (res.target, res.swapped) == ("retrieval/BM25.md", False)
    # left side resolves by title only, right side resolves by nothing: keep the left
    res = resolver.resolve_link(link("[[Docs|no such thing]]"), "any.md")
    assert (res.target, res.swapped) == ("Docs Home.md", False)


def test_unresolved_and_attachments(resolver: LinkGraph) -> None:
    assert resolver.resolve("Nowhere", "x.md").target is None
    res = resolver.resolve_link(link("![[diagram.png]]"), "x.md")
    assert res.target is None and res.attachment
    res = resolver.resolve_link(link("[[Missing note]]"), "x.md")
    assert res.target is None and not res.attachment


def test_same_card_heading_links(resolver: LinkGraph) -> None:
    assert resolver.resolve_link(link("[[#Section]]"), "Levain.md").target == "Levain.md"


def test_remove_updates_tables(resolver: LinkGraph) -> None:
    resolver.remove("baking/Overview.md")
    # no same-folder card any more: the shortest path wins
    assert resolver.resolve("Overview", "baking/Bread.md").target == "retrieval/Overview.md"
