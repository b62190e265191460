"""The card the editor has open, and the conversions every feature needs at the protocol edge.

Internal positions are code points (Python ``str`` indices); a :class:`Codec` turns them into
the client's units (UTF-16 by default) and back.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.diagnostics import CardProblem, Kind, card_problems
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.search.suggest import MentionTarget, ranked_mentions
from zettel_lsp.server.service import VaultService

T = TypeVar("T")

# the characters that take more than one unit of an encoding (a surrogate pair, UTF-8 bytes)
_WIDE: dict[str | None, re.Pattern[str]] = {
    types.PositionEncodingKind.Utf16: re.compile("[\U00010000-\U0010ffff]"),
    types.PositionEncodingKind.Utf8: re.compile("[^\x00-\x7f]"),
}


@dataclass
class Doc:
    """One card as the editor has it (unsaved edits included)."""

    uri: str
    service: VaultService
    rel: str  # vault-relative path
    text: str
    version: int | None

    # what the card is in the graph, by graph version: key -> ((version, ready), value)
    _derived: dict[object, tuple[tuple[int, bool], Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.card: Card = parse_card(
            self.rel, self.text, title_source=self.service.settings.title_source
        )
        self.index = LineIndex(self.text)
        self.lines = self.text.splitlines(keepends=True) or [""]

    def mentions(self) -> list[MentionTarget]:
        """The card's ranked unlinked mentions."""
        return self._per_graph("mentions", lambda g: ranked_mentions(g, self.card))

    def problems(self, kinds: frozenset[Kind]) -> list[CardProblem]:
        """The card's problems of ``kinds``; none before the graph is built."""
        ready = self.service.graph_ready
        return self._per_graph(
            kinds, lambda g: card_problems(g, self.card, kinds) if ready.is_set() else []
        )

    def _per_graph(self, key: object, fn: Callable[[LinkGraph], T]) -> T:
        """``fn(graph)``, computed once per graph version (in the read lock)."""
        service = self.service

        def version() -> tuple[int, bool]:
            return service.graph_version, service.graph_ready.is_set()

        def compute() -> T:
            known = self._derived.get(key)
            if known is None or known[0] != version():
                known = self._derived[key] = (version(), fn(service.graph))
            return cast(T, known[1])

        known = self._derived.get(key)
        if known is not None and known[0] == version():
            return cast(T, known[1])
        return service.read(compute)


class Codec:
    """Code-point positions <-> client positions for one text, as pygls' ``PositionCodec``
    converts them, but through a table of each line's wide characters (made once per line):
    pygls counts a line up to the position, a character at a time, for every position."""

    def __init__(self, codec: PositionCodec, lines: Sequence[str]) -> None:
        self._codec = codec
        self._lines = list(lines)
        self._wide: re.Pattern[str] | None = None
        if codec.encoding != types.PositionEncodingKind.Utf32:
            self._wide = _WIDE.get(codec.encoding, _WIDE[types.PositionEncodingKind.Utf16])
        # per line: the offsets of its wide characters, and the extra units before each
        self._tables: dict[int, tuple[list[int], list[int]]] = {}

    def to_client(self, pos: Position) -> types.Position:
        if not 0 <= pos.line < len(self._lines):
            return self._codec.position_to_client_units(
                self._lines, types.Position(line=pos.line, character=pos.character)
            )
        line = self._lines[pos.line]
        column = max(0, min(pos.character, len(line)))
        if self._wide_in(line):
            offsets, extra = self._table(pos.line)
            column += extra[bisect_left(offsets, column)]
        return types.Position(line=pos.line, character=column)

    def from_client(self, pos: types.Position) -> Position:
        if pos.line >= len(self._lines) > 0:  # past the end: pygls answers the last line's units
            last = len(self._lines) - 1
            line = self._lines[last]
            wide = self._table(last)[1][-1] if self._wide_in(line) else 0
            return Position(last, len(line) + wide)
        if pos.line < 0 or not self._lines:
            p = self._codec.position_from_client_units(self._lines, pos)
            return Position(p.line, p.character)
        line = self._lines[pos.line].replace("\r\n", "\n")
        offsets, extra = self._table(pos.line) if self._wide_in(line) else ([], [0])
        units = len(line) + extra[-1]
        if units == 0:
            return Position(pos.line, 0)
        wanted = pos.character if pos.character <= units else units - 1
        # the first character that starts at or after the client's column (as pygls answers)
        lo, hi = 0, len(line)
        while lo < hi:
            mid = (lo + hi) // 2
            if mid + extra[bisect_left(offsets, mid)] >= wanted:
                hi = mid
            else:
                lo = mid + 1
        return Position(pos.line, lo)

    def _wide_in(self, line: str) -> bool:
        return self._wide is not None and not line.isascii()

    def _table(self, line_no: int) -> tuple[list[int], list[int]]:
        table = self._tables.get(line_no)
        if table is None:
            assert self._wide is not None
            line = self._lines[line_no]
            offsets: list[int] = []
            extra = [0]
            units = self._codec.client_num_units
            for m in self._wide.finditer(line):
                offsets.append(m.start())
                extra.append(extra[-1] + units(m.group()) - 1)
            table = self._tables[line_no] = (offsets, extra)
        return table

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(start=self.to_client(start), end=self.to_client(end))


@lru_cache(maxsize=65536)
def card_uri(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or (root / rel).as_uri()


def lines_range(line_start: int, line_end: int) -> types.Range:
    """Whole lines: columns are 0, so no unit conversion is needed."""
    return types.Range(
        start=types.Position(line=line_start, character=0),
        end=types.Position(line=line_end + 1, character=0),
    )


def workspace_edit(
    doc: Doc, edits: list[types.TextEdit], document_changes: bool
) -> types.WorkspaceEdit:
    """Edits to ``doc``, versioned when the client takes ``documentChanges``."""
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=doc.uri, version=doc.version
                    ),
                    edits=list(edits),
                )
            ]
        )
    return types.WorkspaceEdit(changes={doc.uri: list(edits)})


def range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }
