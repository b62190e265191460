"""The problems behind the server's diagnostics (pure: graph + cards, no server)."""

from __future__ import annotations

from tests.conftest import EXAMPLE_VAULT, shared_vault
from zettel_lsp.graph.diagnostics import (
    ALL_KINDS,
    CardProblem,
    Kind,
    card_problems,
    closest,
    new_card_path,
    new_card_text,
    retarget,
)
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.stats import graph_stats
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import load_vault

VAULT = {
    "method/Zettelkasten method.md": (
        "# Zettelkasten method\n\n## Common failure modes\n\nText ^core\n"
    ),
    "method/Atomic notes.md": "---\naliases: [atomic]\n---\nOne idea per note.\n",
    "baking/Overview.md": "The bake.\n",
    "retrieval/Overview.md": "The search.\n",
    "Hub.md": (
        "See [[Zettelkasten methd]] and [[Nothing like any title]].\n"
        "Ties: [[Overview]].\n"
        "Anchors: [[Zettelkasten method#Common failure modes]], [[Zettelkasten method#Nope]],\n"
        "[[Zettelkasten method#^core]], [[Zettelkasten method#^gone]], [[#Local]].\n"
        "Files: ![[diagram.png]], [x](method/Atomic%20notes.md), [y](Missing%20card.md).\n"
        "## Local\n"
    ),
}


def build(spec: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in spec.items())


def problems(spec: dict[str, str], path: str = "Hub.md") -> list[CardProblem]:
    g = build(spec)
    return card_problems(g, g.cards[path])


def raw(p: CardProblem) -> str:
    assert p.link is not None
    return p.link.raw


def test_each_kind_on_its_link() -> None:
    got = {(p.kind, raw(p)) for p in problems(VAULT) if p.link is not None}
    assert got == {
        (Kind.UNRESOLVED, "[[Zettelkasten methd]]"),
        (Kind.UNRESOLVED, "[[Nothing like any title]]"),
        (Kind.UNRESOLVED, "[y](Missing%20card.md)"),
        (Kind.AMBIGUOUS, "[[Overview]]"),
        (Kind.MISSING_HEADING, "[[Zettelkasten method#Nope]]"),
        (Kind.MISSING_BLOCK, "[[Zettelkasten method#^gone]]"),
    }


def test_did_you_mean_and_the_near_miss() -> None:
    by_raw = {raw(p): p for p in problems(VAULT) if p.kind == Kind.UNRESOLVED}
    typo = by_raw["[[Zettelkasten methd]]"]
    assert typo.suggestions[0].path == "method/Zettelkasten method.md"
    assert "did you mean «Zettelkasten method»" in typo.message
    best = closest(typo)
    assert best is not None and best.score >= 0.8
    far = by_raw["[[Nothing like any title]]"]
    assert far.suggestions == () and closest(far) is None
    assert far.message == "No card named «Nothing like any title»"


def test_ambiguous_names_the_ties_and_the_choice() -> None:
    (amb,) = [p for p in problems(VAULT) if p.kind == Kind.AMBIGUOUS]
    assert amb.related == ("baking/Overview.md", "retrieval/Overview.md")
    assert "matches 2 cards" in amb.message and "links to baking/Overview.md" in amb.message


def test_duplicate_titles_and_aliases() -> None:
    spec = dict(VAULT)
    spec["Second.md"] = "---\naliases: [Atomic notes]\n---\nA second card by that name.\n"
    (dup,) = [p for p in problems(spec, "baking/Overview.md") if p.kind == Kind.DUPLICATE_TITLE]
    assert dup.related == ("retrieval/Overview.md",) and "title «Overview»" in dup.message
    g = build(spec)
    (alias,) = card_problems(g, g.cards["Second.md"], frozenset({Kind.DUPLICATE_TITLE}))
    assert alias.related == ("method/Atomic notes.md",)
    assert (alias.start.line, alias.start.character) == (1, 10)  # on the alias in front matter
    assert not [p for p in problems(spec, "Hub.md") if p.kind == Kind.DUPLICATE_TITLE]


def test_off_switch_per_kind() -> None:
    g = build(VAULT)
    hub = g.cards["Hub.md"]
    only = card_problems(g, hub, frozenset({Kind.MISSING_BLOCK}))
    assert [p.kind for p in only] == [Kind.MISSING_BLOCK]
    assert card_problems(g, hub, frozenset()) == []
    assert len(card_problems(g, hub, ALL_KINDS)) == 6


def test_dendron_note_reference_ranges_are_not_missing_headings() -> None:
    spec = {
        "dendron.topic.lookup.md": "# Lookup\n\n## Split Toggle\n\n## 0.82.0\n\ntext ^blk\n",
        "ref.md": (
            "![[dendron.topic.lookup#split-toggle,1:#*]] ![[dendron.topic.lookup#0820]]\n"
            "![[dendron.topic.lookup#*]] ![[dendron.topic.lookup#^blk:#*]]\n"
            "![[dendron.topic.lookup#nothing,1:#*]]\n"
        ),
    }
    got = [(p.kind, raw(p)) for p in problems(spec, "ref.md")]
    assert got == [(Kind.MISSING_HEADING, "![[dendron.topic.lookup#nothing,1:#*]]")]


def test_creating_the_missing_card_clears_it() -> None:
    g = build(VAULT)
    g.upsert(parse_card("inbox/Nothing like any title.md", "# Nothing like any title\n"))
    left = [raw(p) for p in card_problems(g, g.cards["Hub.md"], frozenset({Kind.UNRESOLVED}))]
    assert "[[Nothing like any title]]" not in left and "[[Zettelkasten methd]]" in left


def test_an_unsaved_card_is_resolved_against_the_graph() -> None:
    g = build(VAULT)
    edited = parse_card("Hub.md", "Now [[Atomic notes]] and [[atomic]] and [[Atomc notes]].\n")
    got = card_problems(g, edited)
    assert [(p.kind, raw(p)) for p in got] == [(Kind.UNRESOLVED, "[[Atomc notes]]")]
    # positions are the editor text's (code points)
    assert (got[0].start.line, got[0].start.character) == (0, 40)


def test_new_card_path_and_text() -> None:
    g = build(VAULT)
    hub, zk = g.cards["Hub.md"], g.cards["method/Zettelkasten method.md"]

    def link(card: Card, raw_text: str):  # type: ignore[no-untyped-def]
        return next(lk for lk in card.links if lk.raw == raw_text)

    wiki = link(hub, "[[Nothing like any title]]")
    assert new_card_path(hub, wiki, None) == "Nothing like any title.md"
    assert new_card_path(hub, wiki, "inbox/") == "inbox/Nothing like any title.md"
    assert new_card_path(hub, wiki, ".") == "Nothing like any title.md"
    assert new_card_text(wiki) == "# Nothing like any title\n"
    deep = parse_card("method/New.md", "[[Some idea]] [[a: b?]] [[../up]] [[a\tb]]")
    assert new_card_path(deep, deep.links[0], None) == "method/Some idea.md"
    assert new_card_path(deep, deep.links[1], None) is None  # not a file name
    assert new_card_path(deep, deep.links[2], ".") is None  # outside the vault
    assert new_card_path(deep, deep.links[3], None) is None  # a control character
    md = link(hub, "[y](Missing%20card.md)")
    assert new_card_path(hub, md, "inbox") == "Missing card.md"  # where the link points
    assert zk.path.startswith("method/")


def test_retarget_keeps_heading_and_label() -> None:
    card = parse_card(
        "Hub.md", "x [[Zettelkasten methd#Common failure modes|the method]] [t](<sub/Atomc.md#h>)"
    )
    a, b, text = retarget(
        card.links[0], "Zettelkasten method", "Hub.md", "m/Zettelkasten method.md"
    ) or (0, 0, "")
    assert card.text[a:b] == "Zettelkasten methd" and text == "Zettelkasten method"
    a, b, text = retarget(card.links[1], "Atomic notes", "Hub.md", "method/Atomic notes.md") or (
        0,
        0,
        "",
    )
    assert card.text[a:b] == "sub/Atomc.md" and text == "method/Atomic notes.md"
    plain = parse_card("sub/Hub.md", "[t](Atomc.md)")
    a, b, text = retarget(plain.links[0], "x", "sub/Hub.md", "method/Atomic notes.md") or (0, 0, "")
    assert plain.text[a:b] == "Atomc.md" and text == "../method/Atomic%20notes.md"


def test_counts_equal_the_graph_on_the_example_vault() -> None:
    cards, _ = load_vault(EXAMPLE_VAULT)
    g = LinkGraph.build(cards)
    found = [p for c in g.cards.values() for p in card_problems(g, c)]
    unresolved = [p for p in found if p.kind == Kind.UNRESOLVED]
    assert len(unresolved) == graph_stats(g).unresolved_links == 2


def test_counts_equal_the_graph_on_a_shared_vault() -> None:
    cards, _ = load_vault(shared_vault("obsidian-help-en"))
    g = LinkGraph.build(cards)
    stats = graph_stats(g)
    unresolved = 0
    for path, card in g.cards.items():
        resolves = {
            rl.link.span.start
            for rl in g.links_of(path)
            if rl.target is not None or rl.resolution.attachment
        }
        for p in card_problems(g, card, frozenset({Kind.UNRESOLVED})):
            assert p.link is not None and p.link.span.start not in resolves
            unresolved += 1
    assert unresolved == stats.unresolved_links > 0


def test_the_problems_follow_the_graph() -> None:
    g = build(VAULT)
    g.upsert(parse_card("method/Atomic notes.md", "---\naliases: [atoms]\n---\nNew alias.\n"))
    g.remove("retrieval/Overview.md")
    g.upsert(parse_card("method/Zettelkasten methods.md", "Plural.\n"))
    fresh = build({p: c.text for p, c in g.cards.items()})
    for card in g.cards.values():
        assert card_problems(g, card) == card_problems(fresh, card), card.path
