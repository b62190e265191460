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
from zettel_lsp.server.features.shared import answer_doc, card_location, offset_at
from zettel_lsp.server.server import ZettelLanguageServer


def link_at(doc: Doc, offset: int) -> Link | None:
    return next((k for k in doc.card.links if k.span.start <= offset <= k.span.end), None)


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


def definition(doc: Doc, pos: types.Position, codec: PositionCodec) -> types.Location | None:
    """Where the link at ``pos`` points: the card (at its heading or block) or attachment."""
    offset = offset_at(doc, pos, codec)

    def find() -> types.Location | None:
        link = link_at(doc, offset)
        found = link_target(doc, link) if link is not None else None
        if found is None:
            return None
        return card_location(doc.service.root, found[0], found[1] or 0)

    return doc.service.read(find)


def references(
    doc: Doc, pos: types.Position, codec: PositionCodec, include_declaration: bool
) -> list[types.Location]:
    """Backlinks of the card under the cursor: the linked card on a link, else this card."""
    offset = offset_at(doc, pos, codec)
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
        out.append(card_location(doc.service.root, target))
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
    codec = ls.workspace.position_codec
    return await answer_doc(
        ls, params.text_document.uri, lambda doc: definition(doc, params.position, codec), None
    )


async def on_references(
    ls: ZettelLanguageServer, params: types.ReferenceParams
) -> list[types.Location]:
    codec, declaration = ls.workspace.position_codec, params.context.include_declaration
    return await answer_doc(
        ls,
        params.text_document.uri,
        lambda doc: references(doc, params.position, codec, declaration),
        [],
    )


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(on_definition)
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(on_references)
