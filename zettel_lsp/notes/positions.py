"""Offsets, line/column positions and UTF-16 columns.

The parser works in code points (Python ``str`` indices). LSP positions count UTF-16 code units by
default, so a character outside the Basic Multilingual Plane (most emoji) counts 2 there. These
helpers are pure and cheap so that the server converts only what it reports.
"""

from __future__ import annotations

from bisect import bisect_right

from zettel_lsp.notes.model import Position, Span


class LineIndex:
    """Maps code-point offsets of one text to (line, column) and back."""

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._starts = starts

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_start(self, line: int) -> int:
        return self._starts[line]

    def line_text(self, line: int) -> str:
        start = self._starts[line]
        end = self._starts[line + 1] - 1 if line + 1 < len(self._starts) else len(self._text)
        return self._text[start:end]

    def position(self, offset: int) -> Position:
        line = bisect_right(self._starts, offset) - 1
        return Position(line, offset - self._starts[line])

    def line_of(self, offset: int) -> int:
        return bisect_right(self._starts, offset) - 1

    def span(self, start: int, end: int) -> Span:
        return Span(start, end, self.position(start), self.position(end))

    def offset(self, pos: Position) -> int:
        line = min(max(pos.line, 0), len(self._starts) - 1)
        return min(self._starts[line] + max(pos.character, 0), len(self._text))


def utf16_column(line_text: str, column: int) -> int:
    """Code-point column → UTF-16 code-unit column on one line."""
    prefix = line_text[:column]
    return column + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def column_from_utf16(line_text: str, utf16_col: int) -> int:
    """UTF-16 code-unit column → code-point column (clamped to the line; never splits a pair)."""
    units = 0
    for i, ch in enumerate(line_text):
        if units >= utf16_col:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)
