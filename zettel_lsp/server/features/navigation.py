"""Navigation: ``textDocument/definition`` (where a link points: card, heading or block) and
``textDocument/references`` (on a ``#tag``: every place the tag or a tag nested under it is
written in the vault; else backlinks of the card under the cursor, or of this card)."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.notes.anchors import anchor_lines
from zettel_lsp.notes.model import Card, Link
from zettel_lsp.notes.tags import has_tag, tag_at, tag_matches, tag_occurrences
from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService


def link_at(doc: Doc, offset: int) -> Link | None:
    for link in doc.card.links:
        if link.span.start <= offset <= link.span.end:
            return link
    return None


def resolve_at(doc: Doc, offset: int) -> tuple[Link, str | None] | None:
    """The link under the cursor and its target path (None when unresolved). Reads the graph:
    call it inside ``service.read``."""
    link = link_at(doc, offset)
    if link is None:
        return None
    found = link_target(doc, link)
    return link, (found[0] if found is not None else None)


def link_target(doc: Doc, link: Link) -> tuple[str, int | None] | None:
    """Where ``link`` of ``doc`` points: (the card or attachment path, the first line of the
    heading or block it names, None for the whole file); None when unresolved. Reads the graph:
    call it inside ``service.read``."""
    graph = doc.service.graph
    res = graph.resolve_link(link, doc.rel)
    if res.target is not None:
        card = graph.cards.get(res.target)
        lines = anchor_lines(card, link) if card is not None else None
        return res.target, (lines[0] if lines is not None else None)
    if res.attachment:
        for base in (doc.card.folder, ""):
            candidate = f"{base}/{link.target}" if base else link.target
            if (doc.service.root / candidate).is_file():
                return candidate, None
    return None


def target_location(service: VaultService, target: str, link: Link) -> types.Location | None:
    """Where a resolved link points: the card, its heading or its block."""
    card = service.graph.cards.get(target)
    line = 0
    if card is not None:
        line = (anchor_lines(card, link) or (0, 0))[0]
    elif not (service.root / target).is_file():
        return None
    pos = types.Position(line=line, character=0)
    return types.Location(uri=card_uri(service.root, target), range=types.Range(start=pos, end=pos))


def definition(doc: Doc, pos: types.Position, codec: PositionCodec) -> types.Location | None:
    offset = doc.index.offset(Codec(codec, doc.lines).from_client(pos))

    def find() -> types.Location | None:
        found = resolve_at(doc, offset)
        if found is None or found[1] is None:
            return None
        return target_location(doc.service, found[1], found[0])

    return doc.service.read(find)


def references(
    doc: Doc, pos: types.Position, codec: PositionCodec, include_declaration: bool
) -> list[types.Location]:
    """Backlinks of the card under the cursor: the linked card on a link, else this card."""
    offset = doc.index.offset(Codec(codec, doc.lines).from_client(pos))
    return doc.service.read(lambda: _references(doc, offset, codec, include_declaration))


def tag_references(doc: Doc, name: str, codec: PositionCodec) -> list[types.Location]:
    """Every place a tag matched by ``name`` (:func:`~zettel_lsp.notes.tags.tag_matches`) is
    written: this card as the editor has it, the others as the graph has them; by path, then
    in text order. Reads the graph: call it inside ``service.read``."""
    graph = doc.service.graph
    cards: dict[str, Card] = dict(graph.cards)
    cards[doc.rel] = doc.card
    out: list[types.Location] = []
    for path in sorted(cards):
        card = cards[path]
        if not has_tag(card, name):
            continue
        lines = doc.lines if path == doc.rel else card.text.splitlines(keepends=True) or [""]
        c = Codec(codec, lines)
        uri = doc.uri if path == doc.rel else card_uri(doc.service.root, path)
        for occ in tag_occurrences(card, doc.index if path == doc.rel else None):
            if tag_matches(name, occ.name):
                out.append(types.Location(uri=uri, range=c.range(occ.start_pos, occ.end_pos)))
    return out


def _references(
    doc: Doc, offset: int, codec: PositionCodec, include_declaration: bool
) -> list[types.Location]:
    tag = tag_at(doc.card, offset, doc.index)
    if tag is not None:
        return tag_references(doc, tag.name, codec)
    found = resolve_at(doc, offset)
    target = found[1] if found is not None and found[1] is not None else doc.rel
    graph = doc.service.graph
    out: list[types.Location] = []
    if include_declaration and target in graph.cards:
        start = types.Position(line=0, character=0)
        out.append(
            types.Location(
                uri=card_uri(doc.service.root, target), range=types.Range(start=start, end=start)
            )
        )
    for src in sorted(graph.backlinks(target)):
        card = graph.cards.get(src)
        if card is None:
            continue
        src_codec = Codec(codec, card.text.splitlines(keepends=True) or [""])
        uri = card_uri(doc.service.root, src)
        for rl in graph.links_of(src):
            if rl.target == target:
                span = rl.link.span
                out.append(
                    types.Location(uri=uri, range=src_codec.range(span.start_pos, span.end_pos))
                )
    return out


async def on_definition(
    ls: ZettelLanguageServer, params: types.DefinitionParams
) -> types.Location | None:
    def run() -> types.Location | None:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        return definition(doc, params.position, ls.workspace.position_codec)

    return await ls.off_loop(run, None)


async def on_references(
    ls: ZettelLanguageServer, params: types.ReferenceParams
) -> list[types.Location]:
    def run() -> list[types.Location]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return []
        return references(
            doc, params.position, ls.workspace.position_codec, params.context.include_declaration
        )

    return await ls.off_loop(run, [])


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(on_definition)
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(on_references)
