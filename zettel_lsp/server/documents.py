"""The card the editor has open, and the conversions every feature needs at the protocol edge.

Internal positions are code points (Python ``str`` indices); a :class:`Codec` turns them into
the client's units (UTF-16 by default) and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.notes.model import Card, Position
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.server.service import VaultService


@dataclass
class Doc:
    """One card as the editor has it (unsaved edits included)."""

    uri: str
    service: VaultService
    rel: str  # vault-relative path
    text: str
    version: int | None

    def __post_init__(self) -> None:
        self.card: Card = parse_card(
            self.rel, self.text, title_source=self.service.settings.title_source
        )
        self.index = LineIndex(self.text)
        self.lines = self.text.splitlines(keepends=True) or [""]


class Codec:
    """Code-point positions <-> client positions for one text."""

    def __init__(self, codec: PositionCodec, lines: Sequence[str]) -> None:
        self._codec = codec
        self._lines = list(lines)

    def to_client(self, pos: Position) -> types.Position:
        return self._codec.position_to_client_units(
            self._lines, types.Position(line=pos.line, character=pos.character)
        )

    def from_client(self, pos: types.Position) -> Position:
        p = self._codec.position_from_client_units(self._lines, pos)
        return Position(p.line, p.character)

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
