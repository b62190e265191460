"""The completion logic on hand-built cards: what the cursor completes, how cards are ranked
with and without typed text, what is inserted, headings, blocks and tags."""

from __future__ import annotations

import pytest

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search import complete as cx
from zettel_lsp.search import completion_names as cn
from zettel_lsp.search.suggest import linked_targets


def vault(files: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(path, text) for path, text in files.items())


CARDS = {
    "Home.md": "# Home\n\nStart at [[Alpha]] and [[Beta]].\n",
    "notes/Alpha.md": "# Alpha\n\nAbout [[Gamma]]. #topic/one\n\n## Details\n\nA line. ^blk-1\n",
    "notes/Beta.md": (
        "---\naliases: [Second]\n---\n# Beta\n\nLinks [[Gamma]] and [[Delta]]. #topic\n"
    ),
    "notes/Gamma.md": "# Gamma\n\nThe third card, about *gamma rays*.\n",
    "notes/Delta.md": "# Delta\n\nFourth. #topic\n",
    "other/Alpha.md": "# Alpha\n\nA second card named Alpha.\n",
    "Lonely.md": "# Lonely\n\nNo links here.\n",
}


@pytest.mark.parametrize(
    ("line", "col", "kind", "typed", "start", "end"),
    [
        ("see [[", 6, cx.CARD, "", 6, 6),
        ("see [[al", 8, cx.CARD, "al", 6, 8),
        ("see [[al]] more", 8, cx.CARD, "al", 6, 10),  # the editor closed the brackets
        ("see ![[al", 9, cx.CARD, "al", 7, 9),
        ("[[Alpha#De", 10, cx.HEADING, "De", 8, 10),
        ("[[Alpha#^bl]]", 11, cx.BLOCK, "bl", 9, 13),
        ("a #to", 5, cx.TAG, "to", 3, 5),
        ("#to", 3, cx.TAG, "to", 1, 3),
        ("[text](no", 9, cx.PATH, "no", 7, 9),
    ],
)
def test_context_at(line: str, col: int, kind: str, typed: str, start: int, end: int) -> None:
    ctx = cx.context_at(line, col)
    assert ctx is not None
    assert (ctx.kind, ctx.typed, ctx.start, ctx.end) == (kind, typed, start, end)


@pytest.mark.parametrize(
    ("line", "col"),
    [
        ("#", 1),  # a heading marker being typed
        ("## ", 3),
        ("  #", 3),
        ("a [x]", 3),  # one bracket is no link
        ("[[a|al", 6),  # the alias part is free text
        ("[[a]] b", 7),  # after a closed link
        ("use `#x", 7),  # inline code
        ("a#b", 3),  # not a tag: inside a word
        ("plain words", 5),
    ],
)
def test_no_completion_here(line: str, col: int) -> None:
    assert cx.context_at(line, col) is None


def test_nothing_typed_ranks_meaning_then_graph_and_puts_linked_and_self_last() -> None:
    g = vault(CARDS)
    here = g.cards["Home.md"]
    linked = linked_targets(g, here)
    assert linked == {"notes/Alpha.md", "notes/Beta.md"}
    got = cx.rank_cards(g, "Home.md", linked, "", ["Lonely.md", "notes/Alpha.md"], {})
    paths = [a.path for a in got.items]
    assert paths[0] == "Lonely.md"  # meaning first
    # 2 hops through Alpha and Beta (Gamma through both, so before Delta)
    assert paths.index("notes/Gamma.md") < paths.index("notes/Delta.md")
    assert paths[-3:] == ["notes/Alpha.md", "notes/Beta.md", "Home.md"]
    assert got.incomplete is False or len(paths) < len(g.cards)


def test_the_meaning_leg_changes_the_order() -> None:
    g = vault(CARDS)
    linked = linked_targets(g, g.cards["Home.md"])
    a = cx.rank_cards(g, "Home.md", linked, "", ["notes/Delta.md"], {})
    b = cx.rank_cards(g, "Home.md", linked, "", ["other/Alpha.md"], {})
    assert a.items[0].path == "notes/Delta.md"
    assert b.items[0].path == "other/Alpha.md"


def test_the_link_being_typed_does_not_count_as_linked() -> None:
    card = parse_card("Home.md", "# Home\n\nSee [[Gamma]]\n")
    g = vault(CARDS)
    at = card.text.index("Gamma")
    assert linked_targets(g, card) == {"notes/Gamma.md"}
    assert linked_targets(g, card, at) == set()


def test_recency_ranks_when_nothing_else_does() -> None:
    g = vault(CARDS)
    recency = {p: float(i) for i, p in enumerate(sorted(g.cards))}
    got = cx.rank_cards(g, "Lonely.md", set(), "", [], recency)
    assert got.items[0].path == max(recency, key=lambda p: recency[p])


def test_typed_text_matches_titles_aliases_and_file_names() -> None:
    g = vault(CARDS)
    got = cx.rank_cards(g, "Home.md", set(), "gam", [], {})
    assert got.items[0].path == "notes/Gamma.md"
    got = cx.rank_cards(g, "Home.md", set(), "secon", [], {})
    assert got.items[0].path == "notes/Beta.md"
    assert got.items[0].name.kind == "alias"
    got = cx.rank_cards(g, "Home.md", set(), "dlt", [], {})  # a subsequence
    assert [a.path for a in got.items] == ["notes/Delta.md"]
    got = cx.rank_cards(g, "Home.md", set(), "other/al", [], {})  # a path
    assert [a.path for a in got.items] == ["other/Alpha.md"]


def test_typed_text_puts_linked_cards_last_among_equal_matches() -> None:
    g = vault(CARDS)
    got = cx.rank_cards(g, "Home.md", {"notes/Alpha.md"}, "alpha", [], {})
    assert [a.path for a in got.items] == ["other/Alpha.md", "notes/Alpha.md"]


def test_a_linked_card_that_matches_better_comes_first() -> None:
    # "gam": a prefix of the linked Gamma, only a loose subsequence of the others' names
    files = {**CARDS, "Home.md": "# Home\n\nStart at [[Gamma]].\n"}
    files |= {f"n/Great American Music {i}.md": f"# Great American Music {i}\n" for i in range(60)}
    g = vault(files)
    linked = linked_targets(g, g.cards["Home.md"])
    got = cx.rank_cards(g, "Home.md", linked, "gam", [], {})
    assert got.items[0].path == "notes/Gamma.md"


def test_the_list_is_cut_and_marked_incomplete() -> None:
    files = {f"n/Card {i:03d}.md": f"# Card {i:03d}\n\ntext\n" for i in range(80)}
    g = vault(files)
    got = cx.rank_cards(g, "n/Card 000.md", set(), "card", [], {})
    assert len(got.items) == cx.TYPED_LIMIT and got.incomplete
    got = cx.rank_cards(g, "n/Card 000.md", set(), "card 07", [], {})
    assert not got.incomplete
    # the ten prefix matches first, then subsequences ("card 067")
    assert [a.name.text for a in got.items[:10]] == [f"Card {i:03d}" for i in range(70, 80)]
    assert got.items[10].name.text.startswith("Card 0")


def test_a_list_without_the_subsequence_matches_is_incomplete() -> None:
    # 60 names holding "alpha" on 30 cards: the loose matches ("A La Pharmacie") are not
    # looked at, so the client must ask again rather than filter this list itself
    files = {
        f"n/Alpha {i:02d}.md": f"---\naliases: [Alpha {i:02d} bis]\n---\n# Alpha {i:02d}\n"
        for i in range(30)
    }
    g = vault(files | {"A La Pharmacie.md": "# A La Pharmacie\n"})
    got = cx.rank_cards(g, "n/Alpha 00.md", set(), "alpha", [], {})
    assert len(got.items) == 30 and got.incomplete


def test_inserted_text_follows_the_link_style() -> None:
    g = vault(CARDS)
    here = g.cards["Home.md"]
    gamma = cx.rank_cards(g, "Home.md", set(), "gamma", [], {}).items[0]
    assert cx.link_insert(g, here, gamma, cn.WIKI) == ("Gamma]]", False)
    alias = cx.rank_cards(g, "Home.md", set(), "second", [], {}).items[0]
    assert cx.link_insert(g, here, alias, cn.WIKI) == ("Beta|Second]]", False)
    # two cards named Alpha: the path names the one meant
    alphas = cx.rank_cards(g, "Home.md", set(), "alpha", [], {}).items
    texts = {cx.link_insert(g, here, a, cn.WIKI)[0] for a in alphas}
    assert "other/Alpha]]" in texts
    md = cx.link_insert(g, g.cards["other/Alpha.md"], gamma, cn.MARKDOWN)
    assert md == ("[Gamma](../notes/Gamma.md)", True)


def test_dendron_names_are_file_names() -> None:
    g = vault({"a.b.md": "# B\n", "a.b.c.md": "---\ntitle: C\n---\ntext\n", "root.md": "x\n"})
    got = cx.rank_cards(g, "root.md", set(), "C", [], {})
    assert cx.link_insert(g, g.cards["root.md"], got.items[0], cn.WIKI) == ("a.b.c]]", False)


def test_vault_style_is_what_most_links_use() -> None:
    wiki = vault(CARDS)
    assert cn.vault_names(wiki).style == cn.WIKI
    md = vault(
        {
            "a.md": "# A\n\n[B](b.md) and [C](sub/c.md)\n",
            "b.md": "# B\n\n[A](a.md)\n",
            "sub/c.md": "# C\n",
        }
    )
    assert cn.vault_names(md).style == cn.MARKDOWN
    assert cx.md_path("sub/c.md", "My note.md") == "../My%20note.md"


def test_names_follow_graph_changes() -> None:
    g = vault(CARDS)
    assert not cx.rank_cards(g, "Home.md", set(), "zeta", [], {}).items
    g.upsert(parse_card("notes/Zeta.md", "# Zeta\n\n#newtag\n"))
    assert cx.rank_cards(g, "Home.md", set(), "zeta", [], {}).items[0].path == "notes/Zeta.md"
    assert ("newtag", 1) in cx.tags_for(g, "new")[0]
    g.remove("notes/Zeta.md")
    assert not cx.rank_cards(g, "Home.md", set(), "zeta", [], {}).items


def test_relations() -> None:
    g = vault(CARDS)
    linked = linked_targets(g, g.cards["Home.md"])
    got = cx.relations(
        g, "Home.md", linked, ["Home.md", "notes/Alpha.md", "notes/Gamma.md", "Lonely.md"]
    )
    assert got == {
        "Home.md": "this card",
        "notes/Alpha.md": "linked",
        "notes/Gamma.md": "2 hops",
        "Lonely.md": "not linked",
    }


def test_headings_blocks_and_tags() -> None:
    g = vault(CARDS)
    home = g.cards["Home.md"]
    alpha = cx.target_card(g, home, "notes/Alpha")
    assert alpha is not None and alpha.path == "notes/Alpha.md"
    assert cx.headings_of(alpha, "") == [("Alpha", 1), ("Details", 2)]
    assert cx.headings_of(alpha, "det") == [("Details", 2)]
    assert cx.blocks_of(alpha, "") == [("blk-1", "A line.")]
    assert cx.target_card(g, home, "") is home  # [[# is this card
    assert cx.target_card(g, home, "Nowhere") is None
    tags, cut = cx.tags_for(g, "")
    assert tags[0] == ("topic", 2) and ("topic/one", 1) in tags and not cut
    assert [t for t, _ in cx.tags_for(g, "one")[0]] == ["topic/one"]


def test_query_text_drops_the_link_being_typed() -> None:
    card = parse_card("Home.md", "# Home\n\nGamma rays are\nbright [[Gam]] light.\n")
    line = "bright [[Gam]] light."
    ctx = cx.context_at(line, line.index("]]"))
    assert ctx is not None
    q = cx.meaning_query(card, 3, ctx)
    assert q == "Gamma rays are\nbright   light."
    assert cx.meaning_query(card, 1, ctx) is None  # a blank line


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("bright [", "bright [["),  # no closing brackets (Neovim's default)
        ("bright []", "bright [[]]"),  # the editor closes each bracket (VS Code)
        ("bright ![", "bright ![["),  # an embed
        ("bright [ light.", "bright [[ light."),
        ("bright [] light.", "bright [[]] light."),
    ],
)
def test_bracket_query_is_the_query_the_second_bracket_asks(one: str, two: str) -> None:
    """After a single ``[`` the search ahead asks exactly what ``[[`` will ask (one cache
    entry), whether or not the editor closed the brackets."""
    col = one.index("[") + 1
    ahead = cx.bracket_query(parse_card("Home.md", f"# Home\n\nGamma rays are\n{one}\n"), 3, col)
    card = parse_card("Home.md", f"# Home\n\nGamma rays are\n{two}\n")
    ctx = cx.context_at(two, col + 1)
    assert ctx is not None and ctx.kind == cx.CARD
    assert ahead is not None and ahead == cx.meaning_query(card, 3, ctx)
    assert "[" not in ahead and "]" not in ahead


def test_bracket_query_only_where_a_card_link_would_open() -> None:
    card = parse_card("Home.md", "# Home\n\nGamma rays [[Gam]] are [x](\n[[\n\n[\n")
    assert cx.bracket_query(card, 2, len("Gamma rays [[")) is None  # already two
    assert cx.bracket_query(card, 2, len("Gamma rays")) is None  # no bracket before
    assert cx.bracket_query(card, 3, 2) is None  # "[[" already
    assert cx.bracket_query(card, 5, 1) is None  # a lone bracket: no words to ask about
    assert cx.bracket_query(card, 4, 0) is None  # a blank line


def test_first_prose_line() -> None:
    g = vault(CARDS)
    assert cx.first_prose_line(g.cards["notes/Gamma.md"]) == "The third card, about gamma rays."
    assert cx.first_prose_line(g.cards["notes/Beta.md"]) == "Links Gamma and Delta. #topic"
    card = parse_card("n.md", "# N\n\n> - [ ] *buy* [[Milk|milk]]\n")
    assert cx.first_prose_line(card) == "buy milk"


def test_without_meaning_or_graph_the_most_linked_cards_fill_the_list() -> None:
    """A vault still indexing (no meaning leg) and a card without links: still a list."""
    g = vault(CARDS)
    got = cx.rank_cards(g, "Lonely.md", set(), "", [], {})
    paths = [a.path for a in got.items]
    assert paths[0] == "notes/Gamma.md"  # two cards link to it
    assert paths[-1] == "Lonely.md"  # this card last
    assert len(paths) == len(g.cards)
