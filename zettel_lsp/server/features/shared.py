"""What the feature modules share: answering a request about an open card off the event loop,
and the LSP shapes of a place in a card."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.server import ZettelLanguageServer

T = TypeVar("T")


async def answer_doc(ls: ZettelLanguageServer, uri: str, answer: Callable[[Doc], T], empty: T) -> T:
    """``answer`` for the card at ``uri`` as the editor has it, run in the document pool;
    ``empty`` when ``uri`` is no card of an open vault (or ``answer`` fails)."""

    def run() -> T:
        doc = ls.doc(uri)
        return empty if doc is None else answer(doc)

    return await ls.off_loop(run, empty, ls.document_requests)


def capability(ls: ZettelLanguageServer, *path: str) -> Any:
    """The client capability at ``path`` (``("workspace", "workspace_edit")``), None if unset."""
    node: Any = ls.client_capabilities
    for part in path:
        node = getattr(node, part, None)
    return node


def offset_at(doc: Doc, pos: types.Position, codec: PositionCodec) -> int:
    """The code-point offset in ``doc`` of the client's ``pos``."""
    return doc.index.offset(Codec(codec, doc.lines).from_client(pos))


def card_location(root: Path, path: str, line: int = 0) -> types.Location:
    """The start of ``line`` in the card (or file) at ``path`` of the vault at ``root``."""
    pos = types.Position(line=line, character=0)
    return types.Location(uri=card_uri(root, path), range=types.Range(start=pos, end=pos))
