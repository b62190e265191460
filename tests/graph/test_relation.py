"""How a card relates to the one open in the editor: this card, linked, backlink, 2 hops."""

from __future__ import annotations

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.relation import (
    BACKLINK,
    LINKED,
    NOT_LINKED,
    RELATIONS,
    THIS_CARD,
    TWO_HOPS,
    relation,
)
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import load_vault

VAULT = {
    "Here.md": "[[Out]] and ![[Embedded]]",
    "Out.md": "[[Far]]",
    "Embedded.md": "",
    "Back.md": "Points at [[Here]].",
    "Far.md": "",
    "Via.md": "[[Here]] and [[Sibling]]",
    "Sibling.md": "",
    "Lonely.md": "Mentions Here but links nothing.",
}


def linked_targets(g: LinkGraph, card: Card) -> set[str]:
    """What the (possibly unsaved) card links to now, as the server computes it."""
    return {t for ln in card.links if (t := g.resolve_link(ln, card.path).target) is not None}


def graph() -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in VAULT.items())


def test_each_relation() -> None:
    g = graph()
    here = g.cards["Here.md"]
    linked = linked_targets(g, here)
    assert linked == {"Out.md", "Embedded.md"}

    def rel(other: str) -> str:
        return relation(g, "Here.md", linked, other)

    assert rel("Here.md") == THIS_CARD == "this card"
    assert rel("Out.md") == LINKED == "linked"
    assert rel("Embedded.md") == LINKED  # an embed is a link
    assert rel("Back.md") == BACKLINK == "backlink"
    assert rel("Far.md") == TWO_HOPS == "2 hops"  # Here -> Out -> Far
    assert rel("Sibling.md") == TWO_HOPS  # Here <- Via -> Sibling: either direction
    assert rel("Lonely.md") == NOT_LINKED == "not linked"  # a mention is not a link
    assert rel("Unknown.md") == NOT_LINKED
    assert set(RELATIONS) == {"this card", "linked", "backlink", "2 hops", "not linked"}


def test_linked_follows_the_unsaved_text_not_the_graph() -> None:
    g = graph()
    draft = parse_card("Here.md", "Now only [[Back]].")  # edited, not saved
    linked = linked_targets(g, draft)
    assert relation(g, "Here.md", linked, "Back.md") == LINKED  # linked wins over backlink
    # the graph still has the saved edge Here -> Out: one hop away, so not "2 hops" either
    assert relation(g, "Here.md", linked, "Out.md") == NOT_LINKED


def test_relations_in_the_example_vault() -> None:
    cards, problems = load_vault(EXAMPLE_VAULT)
    assert not problems
    g = LinkGraph.build(cards)
    here = "retrieval/TF-IDF.md"
    linked = linked_targets(g, g.cards[here])
    assert relation(g, here, linked, "retrieval/BM25.md") in (LINKED, BACKLINK)
    for other in g.cards:
        r = relation(g, here, linked, other)
        assert r in RELATIONS
        if r == LINKED:
            assert other in g.outgoing(here)
        elif r == BACKLINK:
            assert here in g.outgoing(other) and other not in linked
        elif r == TWO_HOPS:
            assert g.distance(here, other, cutoff=3) == 2
