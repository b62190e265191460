"""Card-level text helpers for editor features: the paragraph around a line, and where "Add
related links" inserts its list.

Headings, fences and links are the parser's (``card.headings``, ``card.links``, built on
:mod:`zettel_lsp.notes.masking`), so these helpers follow the project's one heading rule, one
fence rule and one link parser. Offsets are code points; lines are zero-based.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zettel_lsp.notes.anchors import heading_as_written
from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.model import Card, Heading, LinkKind
from zettel_lsp.notes.parser import parse_card

DEFAULT_LEVEL = 2  # the level of a related heading given without '#' marks
_WIKI_KINDS = (LinkKind.WIKI, LinkKind.EMBED)


def paragraph_at(card: Card, line: int) -> tuple[int, int, str] | None:
    """The run of non-blank lines around ``line`` as (first line, last line, text); None on a
    blank line, past the end, or in the frontmatter (the paragraph never reaches into it)."""
    raw = card.text.split("\n")
    if line >= len(raw) or line < card.body_start_line or not raw[line].strip():
        return None
    start, end = paragraph_lines(raw, line, card.body_start_line)
    return start, end, "\n".join(raw[start : end + 1])


def paragraph_lines(lines: Sequence[str], line: int, first: int = 0) -> tuple[int, int]:
    """The first and last line of ``line`` and the non-blank lines next to it, none above
    ``first`` (``line`` counts whether blank or not)."""
    start = line
    while start > first and lines[start - 1].strip():
        start -= 1
    end = line
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return start, end


def find_section(card: Card, heading: str) -> Heading | None:
    """The first heading of ``card`` at ``heading``'s level (``"## Related"``: 2; plain text:
    level 2) whose text equals ``heading``'s, ignoring case. Headings in fenced code, comments
    and the frontmatter do not count (they are not in ``card.headings``)."""
    want = atx_heading(heading)
    level = want[0] if want else DEFAULT_LEVEL
    text = (want[1] if want else heading).strip().lower()
    lines = card.text.split("\n")
    for h in card.headings:
        if h.level == level and heading_as_written(lines[h.line], h).lower() == text:
            return h
    return None


def insert_related(note: Card | str, heading: str, names: Sequence[str]) -> tuple[int, str]:
    """Where (code-point offset into the card's text) and what to insert to list ``names`` as
    ``- [[name]]`` items: after the last non-blank line of the ``heading`` section (see
    :func:`find_section`; it ends before the next heading of the same or a higher level) if the
    card has one, else in a new section at the end. ``note`` is a parsed card, or a text that is
    parsed here."""
    card = note if isinstance(note, Card) else parse_card("note.md", note)
    text = card.text
    items = "".join(f"- [[{n}]]\n" for n in names)
    section = find_section(card, heading)
    if section is not None:
        lines = text.split("\n")
        last = section.line
        for i in range(section.line + 1, section.end_line + 1):
            if lines[i].strip():
                last = i
        at = sum(len(line) + 1 for line in lines[:last]) + len(lines[last])
        sep = "\n\n" if last == section.line else "\n"
        return at, sep + items.rstrip("\n")
    if not text.strip():
        return len(text), f"{heading}\n\n{items}"
    prefix = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    return len(text), f"{prefix}{heading}\n\n{items}"


def wikilinked_names(card: Card) -> set[str]:
    """The names ``card`` already wikilinks or embeds (``[[name]]``, ``[[name#h|x]]``,
    ``![[name]]``), lower-cased: the parser's links in the body, plus wikilinks written in the
    frontmatter (``up: "[[Parent]]"``), which are not links of the card but name it all the same.
    """
    names = {ln.target.lower() for ln in card.links if ln.kind in _WIKI_KINDS and ln.target}
    if card.body_start_line > 0:
        names |= _frontmatter_wikilinks(card)
    return names


def unlinked_names(card: Card, names: Iterable[str]) -> list[str]:
    """``names`` (in order) that ``card`` does not wikilink yet (case-insensitive)."""
    present = wikilinked_names(card)
    return [n for n in names if n.lower() not in present]


def _frontmatter_wikilinks(card: Card) -> set[str]:
    """Wikilink targets in the frontmatter block, found by the parser on its inner lines."""
    inner = card.text.split("\n", card.body_start_line)[1 : card.body_start_line - 1]
    if "[[" not in "".join(inner):
        return set()
    block = parse_card("frontmatter.md", "\n".join(inner))
    return {ln.target.lower() for ln in block.links if ln.kind in _WIKI_KINDS and ln.target}
