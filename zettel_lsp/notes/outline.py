"""A card's outline: its headings as a tree with the range of each section, and the line ranges
an editor can fold (front matter, sections). No LSP types; positions are code points.

Headings are the parser's (``card.headings``: one ATX rule in :mod:`zettel_lsp.notes.masking`,
fenced code, comments and front matter excluded), so the outline, ``[[Card#Heading]]`` anchors and
the title rule always agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.model import Card, Heading, Position


@dataclass(slots=True)
class OutlineNode:
    """One heading: ``start``..``end`` is its whole section (the heading line to the end of the
    section's last line), ``text_start``..``text_end`` the heading's text on its line."""

    heading: Heading
    name: str
    start: Position
    end: Position
    text_start: Position
    text_end: Position
    children: list[OutlineNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Fold:
    """Lines ``start``..``end`` (inclusive) that can be folded; ``kind``: "frontmatter" or
    "section"."""

    start: int
    end: int
    kind: str


def _text_columns(line: str, heading: Heading) -> tuple[int, int]:
    """Where the heading's text sits on its line (code points); the ``#`` marks when empty."""
    hashes = line.find("#")
    after = hashes + heading.level
    if heading.text:
        at = line.find(heading.text, after)
        if at >= 0:
            return at, at + len(heading.text)
    return max(hashes, 0), max(after, 0)


def heading_name(line: str, heading: Heading) -> str:
    """What the outline shows: the heading text, else the heading line itself (never empty)."""
    if heading.text:
        return heading.text
    atx = atx_heading(line)
    return (atx[1] if atx and atx[1] else line.strip()) or "#" * heading.level


def heading_tree(card: Card) -> list[OutlineNode]:
    """The headings of ``card`` as a tree: a heading's children are the headings of a higher
    level inside its section (an H3 right under an H1 is the H1's child)."""
    lines = card.text.split("\n")
    roots: list[OutlineNode] = []
    stack: list[OutlineNode] = []
    for h in card.headings:
        line = lines[h.line] if h.line < len(lines) else ""
        end_line = min(h.end_line, len(lines) - 1)
        s, e = _text_columns(line, h)
        node = OutlineNode(
            heading=h,
            name=heading_name(line, h),
            start=Position(h.line, 0),
            end=Position(end_line, len(lines[end_line].rstrip("\r"))),
            text_start=Position(h.line, s),
            text_end=Position(h.line, e),
        )
        while stack and stack[-1].heading.level >= h.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def folding_ranges(card: Card) -> list[Fold]:
    """Front matter (the ``---`` lines included) and every section (its heading line to its last
    non-blank line), in line order; one-line ranges are left out."""
    folds: list[Fold] = []
    if card.body_start_line >= 2:
        folds.append(Fold(0, card.body_start_line - 1, "frontmatter"))
    lines = card.text.split("\n")
    for h in card.headings:
        end = min(h.end_line, len(lines) - 1)
        while end > h.line and not lines[end].strip():
            end -= 1
        if end > h.line:
            folds.append(Fold(h.line, end, "section"))
    return folds


def title_line(card: Card) -> int:
    """The line a card's title is shown on: its opening H1 (the first line of the body that is
    not blank) when it has one, else the first line of the body (0 when the card is empty)."""
    lines = card.text.split("\n")
    for i in range(card.body_start_line, len(lines)):
        if lines[i].strip():
            h = card.headings[0] if card.headings else None
            return i if h is not None and h.line == i and h.level == 1 else card.body_start_line
    return min(card.body_start_line, max(len(lines) - 1, 0))
