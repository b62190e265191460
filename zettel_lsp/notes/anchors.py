"""Where a link's ``#heading`` or ``#^block`` part points inside a card, and the text it shows.

Headings and block ids are the parser's (``card.headings``, ``card.block_ids``), so a ``#`` line
in fenced code, a comment or the frontmatter is never an anchor. Lines are zero-based.
"""

from __future__ import annotations

import re

from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.model import BlockId, Card, Heading, Link
from zettel_lsp.notes.title_rule import same_name

_NOT_WORD = re.compile(r"[^\w\s]")


def heading_key(text: str) -> str:
    """A heading as links name it: lower case, punctuation as spaces, spacing collapsed
    ("Saturation & the k1 parameter" and "saturation the k1 parameter" are one key)."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def heading_as_written(line: str, heading: Heading) -> str:
    """A heading's text as written on its ``line`` (inline code kept, closing ``#`` sequence
    dropped)."""
    atx = atx_heading(line)
    return atx[1] if atx is not None else heading.text


def heading_for(card: Card, subpath: str) -> Heading | None:
    """The first heading of ``card`` a link's heading part names. A nested part
    (``A#B``, Obsidian's heading path) names its last heading."""
    want = heading_key(subpath.split("#")[-1])
    return next((h for h in card.headings if heading_key(h.text) == want), None)


def block_for(card: Card, block_id: str) -> BlockId | None:
    """The first block of ``card`` marked ``^block_id`` (exact name, without the ``^``)."""
    return next((b for b in card.block_ids if b.name == block_id), None)


def anchor_lines(card: Card, link: Link) -> tuple[int, int] | None:
    """The lines (first, last; inclusive) that ``link``'s subpath points at in ``card``: a
    heading's section or a block's line. None when the link has no subpath or the card has no
    such heading or block (the link then points at the card as a whole)."""
    if link.heading:
        h = heading_for(card, link.heading)
        return (h.line, h.end_line) if h is not None else None
    if link.block_id:
        b = block_for(card, link.block_id)
        return (b.line, b.line) if b is not None else None
    return None


def link_section(card: Card, link: Link) -> str:
    """The text ``link`` shows of ``card`` (a preview): the linked section or block, else the
    body; stripped. When it starts at the top of the body, an opening heading that repeats the
    card's title is left out (the title is shown already)."""
    lines = card.text.split("\n")
    start, end = anchor_lines(card, link) or (card.body_start_line, len(lines) - 1)
    if start == card.body_start_line:
        first = next((i for i in range(start, end + 1) if lines[i].strip()), None)
        if first is not None and _is_title_heading(card, lines[first], first):
            start = first + 1
    return "\n".join(lines[start : end + 1]).strip()


def _is_title_heading(card: Card, line_text: str, line: int) -> bool:
    """Whether ``line`` is a heading of ``card`` whose text is the card's title."""
    h = next((h for h in card.headings if h.line == line), None)
    return h is not None and same_name(heading_as_written(line_text, h), card.title)
