"""Offsets and line/column positions, in code points.

The parser works in code points (Python ``str`` indices). LSP positions count UTF-16 code units by
default, so a character outside the Basic Multilingual Plane (most emoji) counts 2 there: the
server converts what it reports (pygls' ``PositionCodec``, in ``server/``), nothing here does.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from zettel_lsp.notes.model import Position, Span


class LineIndex:
    """Maps code-point offsets of one text to (line, column) and back."""

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        lines = text.split("\n")[:-1]
        self._starts = list(accumulate((len(line) + 1 for line in lines), initial=0))

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
        line = self.line_of(offset)
        return Position(line, offset - self._starts[line])

    def line_of(self, offset: int) -> int:
        return bisect_right(self._starts, offset) - 1

    def span(self, start: int, end: int) -> Span:
        a, b = self.line_of(start), self.line_of(end)
        return Span(start, end, a, start - self._starts[a], b, end - self._starts[b])

    def offset(self, pos: Position) -> int:
        line = min(max(pos.line, 0), len(self._starts) - 1)
        return min(self._starts[line] + max(pos.character, 0), len(self._text))
