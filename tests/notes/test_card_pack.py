"""Packed cards (Card.pack, issue #18): the link graph keeps a card's headings, block ids,
front matter and masked spans as one ``bytes``; every attribute must read the same."""

from __future__ import annotations

import copy
import inspect
import pickle

import pytest

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card, Position, Span
from zettel_lsp.notes.parser import parse_card

TEXT = """---
title: Packed
aliases: [Pack, Bundle]
tags: [memory, "scale/100k"]
created: 2026-11-29
---
# Packed

Intro with `inline code` and a [[Link#Heading|label]] and #tag. ^intro

## Second heading

```python
[[not a link]]
```

<!-- [[hidden]] -->
Last line ^last
"""

# every field a card is made with, from its constructor (not from the class's own list)
FIELDS = tuple(inspect.signature(Card.__init__).parameters)[1:]


def values(card: Card) -> dict[str, object]:
    return {n: getattr(card, n) for n in FIELDS}


def test_a_packed_card_reads_as_before() -> None:
    card = parse_card("notes/Packed.md", TEXT)
    before = values(card)
    assert before["headings"] and before["block_ids"] and before["masked"]
    assert before["frontmatter"] and before["tags"]
    twin = copy.deepcopy(card)
    card.pack()
    assert card.packed and not twin.packed
    assert values(card) == before
    assert card == twin and twin == card
    card.pack()  # twice: nothing changes
    assert values(card) == before
    assert card.stem == "Packed" and card.tag_names == twin.tag_names and card.body == twin.body


def test_packed_and_unpacked_cards_pickle_as_they_are() -> None:
    for pack in (False, True):
        card = parse_card("a/Packed.md", TEXT)
        if pack:
            card.pack()
        back = pickle.loads(pickle.dumps(card, protocol=5))
        assert back.packed is pack
        assert values(back) == values(card)
        assert back == card


def test_cards_differ_when_a_packed_part_differs() -> None:
    a = parse_card("x.md", TEXT)
    b = parse_card("x.md", TEXT.replace("## Second heading", "## Other heading"))
    a.pack()
    b.pack()
    assert a != b
    assert a.headings != b.headings


def test_the_graph_packs_what_it_keeps_and_reads_the_same() -> None:
    paths = sorted(EXAMPLE_VAULT.rglob("*.md"))
    texts = {p.relative_to(EXAMPLE_VAULT).as_posix(): p.read_text() for p in paths}
    fresh = {path: parse_card(path, text) for path, text in texts.items()}
    g = LinkGraph.build(parse_card(path, text) for path, text in texts.items())
    assert all(c.packed for c in g.cards.values())
    assert {p: values(c) for p, c in g.cards.items()} == {p: values(c) for p, c in fresh.items()}
    path = next(iter(texts))
    g.upsert(parse_card(path, texts[path] + "\n## Added\n"))
    assert g.cards[path].packed
    assert [h.text for h in g.cards[path].headings][-1] == "Added"


def test_a_span_keeps_its_positions_as_numbers_and_stays_a_value() -> None:
    a = Span(3, 9, Position(1, 2), Position(1, 8))
    b = pickle.loads(pickle.dumps(a, protocol=5))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert b.start_pos == Position(1, 2) and b.end_pos == Position(1, 8)
    assert (b.start, b.end) == (3, 9)
    assert a != Span(3, 9, Position(1, 2), Position(2, 0))
    with pytest.raises(AttributeError):
        a.start = 4  # type: ignore[misc]
    assert not hasattr(a, "__dict__")


def test_a_packed_card_holds_no_empty_lists_and_reads_them_as_empty() -> None:
    card = parse_card("Plain.md", "Just prose, nothing else.\n")
    before = values(card)
    card.pack()
    assert values(card) == before
    assert card.aliases == card.tags == card.links == card.problems == []
    held = [card._aliases, card._tags, card._links, card._problems]
    assert held == [None, None, None, None]  # no list object per card (issue #18)


def test_equality_and_pickling_cover_every_field() -> None:
    assert set(Card._FIELDS) == set(FIELDS)
