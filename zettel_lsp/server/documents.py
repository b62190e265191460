"""The card the editor has open, and the conversions every feature needs at the protocol edge.

Internal positions are code points (Python ``str`` indices); a :class:`Codec` turns them into
the client's units (UTF-16 by default) and back.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.search.suggest import MentionTarget, ranked_mentions
from zettel_lsp.server.service import VaultService

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

    _mentions: tuple[int, list[MentionTarget]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.card: Card = parse_card(
            self.rel, self.text, title_source=self.service.settings.title_source
        )
        self.index = LineIndex(self.text)
        self.lines = self.text.splitlines(keepends=True) or [""]

    def mentions(self) -> list[MentionTarget]:
        """The card's ranked unlinked mentions, searched once per graph version (takes the
        read lock when they are not known yet)."""
        service = self.service

        def search() -> tuple[int, list[MentionTarget]]:
            if self._mentions is None or self._mentions[0] != service.graph_version:
                self._mentions = (service.graph_version, ranked_mentions(service.graph, self.card))
            return self._mentions

        known = self._mentions
        if known is not None and known[0] == service.graph_version:
            return known[1]
        return service.read(search)[1]


class Codec:
    """Code-point positions <-> client positions for one text, as pygls' ``PositionCodec``
    converts them. A conversion takes time in the number of wide characters of its line, not
    in the line's length (pygls counts the line's prefix, a character at a time)."""

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
        if self._wide is not None and not line.isascii():
            offsets, extra = self._table(pos.line)
            column += extra[bisect_left(offsets, column)]
        return types.Position(line=pos.line, character=column)

    def from_client(self, pos: types.Position) -> Position:
        line = self._lines[pos.line] if 0 <= pos.line < len(self._lines) else None
        if line is not None and line.isascii():  # what pygls answers, without its loop
            n = len(line.replace("\r\n", "\n"))
            column = pos.character if pos.character <= n else n - 1
            return Position(pos.line, max(column, 0))
        p = self._codec.position_from_client_units(self._lines, pos)
        return Position(p.line, p.character)

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
