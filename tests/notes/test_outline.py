"""The outline of a card (headings tree, folds, title line) and where its tags are written."""

from __future__ import annotations

from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.outline import OutlineNode, folding_ranges, heading_tree, title_line
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.tags import cards_tagged, tag_at, tag_matches, tag_occurrences

CARD = """---
title: Outline
tags: [a/b, "#c"]
---
# Outline

Intro.

## First

```
# not a heading
## nor this
```

### Deep

text

## Second  ##

#### Skipped levels
last line
"""


def names(nodes: list[OutlineNode]) -> list[object]:
    return [(n.name, names(n.children)) if n.children else n.name for n in nodes]


def card(text: str = CARD, path: str = "Outline.md") -> Card:
    return parse_card(path, text)


def test_headings_form_a_tree_and_fenced_code_is_not_a_heading() -> None:
    tree = heading_tree(card())
    assert names(tree) == [("Outline", [("First", ["Deep"]), ("Second", ["Skipped levels"])])]


def test_a_section_covers_its_lines_and_the_selection_is_the_heading_text() -> None:
    text = CARD
    lines = text.split("\n")
    root = heading_tree(card())[0]
    first, second = root.children
    assert first.start == Position(8, 0)
    assert lines[first.start.line] == "## First"
    assert first.end.line == 18 and lines[19] == "## Second  ##"  # up to the next H2
    s, e = second.text_start, second.text_end
    assert lines[s.line][s.character : e.character] == "Second"
    assert root.end == Position(len(lines) - 1, 0)  # to the end of the text


def test_empty_heading_has_a_name() -> None:
    nodes = heading_tree(card("#\n\ntext\n"))
    assert nodes[0].name == "#"


def test_folds_cover_front_matter_and_sections_without_trailing_blank_lines() -> None:
    folds = folding_ranges(card())
    assert folds[0].kind == "frontmatter" and (folds[0].start, folds[0].end) == (0, 3)
    sections = {(f.start, f.end) for f in folds if f.kind == "section"}
    assert (8, 17) in sections  # "## First" .. "text" (the blank before "## Second" left out)
    assert (4, 22) in sections
    assert all(f.end > f.start for f in folds)


def test_title_line_is_the_opening_h1_or_the_first_body_line() -> None:
    assert title_line(card()) == 4
    assert title_line(card("---\na: 1\n---\nNo heading\n# Later\n")) == 3
    assert title_line(card("")) == 0


def test_tags_in_prose_and_front_matter_have_places() -> None:
    text = "---\ntags:\n  - method/zettelkasten\n  - '#Reading'\nother: method\n---\nSee #method.\n"
    c = card(text)
    body = text.index("See")
    got = [(o.name, text[o.start : o.end], o.start < body) for o in tag_occurrences(c)]
    assert got == [
        ("method/zettelkasten", "method/zettelkasten", True),
        ("Reading", "#Reading", True),
        ("method", "#method", False),
    ]
    at = text.index("#method.") + 2
    found = tag_at(c, at)
    assert found is not None and found.name == "method"
    assert tag_at(c, text.index("other")) is None


def test_tag_matching_is_hierarchical_and_ignores_case() -> None:
    assert tag_matches("method", "method/zettelkasten")
    assert tag_matches("#Method", "method")
    assert not tag_matches("method", "methods")
    assert not tag_matches("method/zettelkasten", "method")


def test_cards_tagged_includes_nested_tags_then_falls_back_to_prefixes() -> None:
    a = card("---\ntags: [a/b]\n---\nx\n", "a.md")
    b = card("text #ab\n", "b.md")
    assert [c.path for c in cards_tagged([a, b], "a")] == ["a.md"]
    assert [c.path for c in cards_tagged([a, b], "ab")] == ["b.md"]
    assert [c.path for c in cards_tagged([a, b], "a/")] == ["a.md"]
    assert {c.path for c in cards_tagged([a, b], "zz")} == set()
