"""Where a card's tags are written, and which tags a tag query names.

Tags are the parser's (``card.tags``): ``#name`` in prose (with a span) and the names of the
front matter ``tags:`` / ``tag:`` fields (without one). :func:`tag_occurrences` gives both a
place: a prose tag its ``#name`` span, a front matter tag each place its name is written inside
the ``tags:`` field (``[a, b]``, ``a b``, ``- a`` lists, with or without ``#``).

Matching (:func:`tag_matches`) ignores case, as Obsidian does, and is hierarchical: ``a`` names
``a`` and every nested tag ``a/b``, ``a/b/c``, but not ``ab``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.positions import LineIndex

_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:")
_TAG_WORD = re.compile(r"#?[\w/-]+")  # a word of a front matter tags field


@dataclass(frozen=True, slots=True)
class TagOccurrence:
    """One place a tag is written: ``start``..``end`` (code points) covers ``#name`` in prose and
    the name (with its ``#`` if written) in the front matter."""

    name: str
    start: int
    end: int
    start_pos: Position
    end_pos: Position


def tag_key(name: str) -> str:
    return name.lstrip("#").casefold()


def tag_matches(query: str, name: str) -> bool:
    """Whether the tag ``name`` is ``query`` or nested under it (case ignored)."""
    q, n = tag_key(query).rstrip("/"), tag_key(name)
    return bool(q) and (n == q or n.startswith(q + "/"))


def _line_offset(text: str, line: int) -> int:
    """The offset where ``line`` starts (the end of the text when it has fewer lines)."""
    parts = text.split("\n", line)
    return len(text) - len(parts[-1]) if len(parts) > line else len(text)


def _frontmatter_field_spans(lines: LineIndex, body_start_line: int) -> list[tuple[int, int]]:
    """Offsets of the ``tags:`` and ``tag:`` fields of the front matter (``lines`` indexes at
    least the front matter): from after the key to the line before the next top-level key."""
    if body_start_line < 2 or lines.line_count < body_start_line:
        return []
    spans: list[tuple[int, int]] = []
    current: int | None = None
    for i in range(1, body_start_line - 1):  # between the two "---" lines
        line = lines.line_text(i)
        key = _KEY.match(line)
        if key is not None:  # a top-level key ends the previous field
            if current is not None:
                spans.append((current, lines.line_start(i)))
            current = lines.line_start(i) + key.end() if key.group(1) in ("tags", "tag") else None
    if current is not None:
        spans.append((current, lines.line_start(body_start_line - 1)))
    return spans


def tag_occurrences(card: Card, index: LineIndex | None = None) -> list[TagOccurrence]:
    """Every place a tag of ``card`` is written, in text order."""
    text = card.text
    out: list[TagOccurrence] = []
    fm_names = {tag_key(t.name): t.name for t in card.tags if t.span is None}
    if fm_names:
        # positions inside the front matter only: index just that part of the text
        lines = index or LineIndex(text[: _line_offset(text, card.body_start_line)])
        for start, end in _frontmatter_field_spans(lines, card.body_start_line):
            out.extend(_names_in(text, start, end, fm_names, lines))
    for t in card.tags:
        if t.span is not None:
            s = t.span
            out.append(TagOccurrence(t.name, s.start, s.end, s.start_pos, s.end_pos))
    out.sort(key=lambda o: o.start)
    return out


def _names_in(
    text: str, start: int, end: int, names: dict[str, str], lines: LineIndex
) -> Iterator[TagOccurrence]:
    """The tag names of ``names`` written as whole words in ``text[start:end]``."""
    for m in _TAG_WORD.finditer(text, start, end):
        name = names.get(tag_key(m.group()))
        if name is not None:
            a, b = m.span()
            yield TagOccurrence(name, a, b, lines.position(a), lines.position(b))


def tag_at(card: Card, offset: int, index: LineIndex | None = None) -> TagOccurrence | None:
    """The tag written at code-point ``offset`` (its start to its end, both included)."""
    return next((o for o in tag_occurrences(card, index) if o.start <= offset <= o.end), None)


def has_tag(card: Card, query: str) -> bool:
    return any(tag_matches(query, t.name) for t in card.tags)


def cards_tagged(cards: Iterable[Card], query: str) -> list[Card]:
    """Cards with a tag that is ``query`` or nested under it; when none has one, the cards with a
    tag that begins with ``query`` (a tag still being typed: ``#meth`` for ``#method``)."""
    cards = [c for c in cards if c.tags]
    found = [c for c in cards if has_tag(c, query)]
    q = tag_key(query)
    if found or not q:
        return found
    return [c for c in cards if any(t.name.casefold().startswith(q) for t in c.tags)]


def first_tag_line(card: Card, query: str) -> int:
    """The line of the first place ``card`` writes a tag matched by ``query`` (else one that
    begins with it, as :func:`cards_tagged` falls back to; 0 if none)."""
    occurrences = tag_occurrences(card)
    for occ in occurrences:
        if tag_matches(query, occ.name):
            return occ.start_pos.line
    q = tag_key(query)
    for occ in occurrences:
        if q and tag_key(occ.name).startswith(q):
            return occ.start_pos.line
    return 0
