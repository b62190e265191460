"""Hover and related notes: on a link, the linked card (preview, backlinks, similar cards); on
prose, the notes related to the paragraph. ``zettel.related`` gives the same list as JSON (the
sidebars' "related" views).

Model calls (the paragraph's query embedding) run before the vault lock is taken: the ranking
and every graph read run inside ``service.read``.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.relation import relation
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.anchors import link_section
from zettel_lsp.notes.editing import paragraph_at
from zettel_lsp.notes.model import Card, Link, Position
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import parse_query, words_around
from zettel_lsp.search.results import excerpt, folder_of, result_dict
from zettel_lsp.search.suggest import linked_targets
from zettel_lsp.server.arguments import arg, limit_arg, position_arg
from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.features.shared import answer_doc
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService

PREVIEW_CHARS = 400
RELATED_EXCERPT_CHARS = 100


def hover(
    doc: Doc, pos: types.Position, codec: PositionCodec, limit: int, options: SearchOptions
) -> types.Hover | None:
    from zettel_lsp.server.features.navigation import resolve_at

    service = doc.service
    cpos = Codec(codec, doc.lines).from_client(pos)
    offset = doc.index.offset(cpos)
    found = service.read(lambda: resolve_at(doc, offset))
    if found is not None:
        link, target = found
        md = service.read(lambda: _link_hover(doc, link, target, limit))
        return _hover(md, Codec(codec, doc.lines).range(link.span.start_pos, link.span.end_pos))
    para = paragraph_at(doc.card, cpos.line)
    if para is None:
        return None
    start, end, text = para
    if not parse_query(text).words:
        return None
    cursor = offset - doc.index.line_start(start)
    results = _related_to_text(doc, words_around(text, cursor), limit, options)
    if not results:
        return None

    def lines() -> list[str]:
        graph = service.graph
        linked = linked_targets(graph, doc.card)
        out = ["**Related notes**", ""]
        for r in results:
            rel = relation(graph, doc.rel, linked, r.path)
            out.append(_related_line(service, r.path, r.title, r.chunk, rel))
        return out

    end_pos = Position(end, len(doc.index.line_text(end)))
    rng = Codec(codec, doc.lines).range(Position(start, 0), end_pos)
    return _hover("\n".join(service.read(lines)), rng)


def _hover(markdown: str, rng: types.Range) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown), range=rng
    )


def _related_to_text(doc: Doc, text: str, limit: int, options: SearchOptions) -> list[CardResult]:
    opts = SearchOptions(
        limit=limit + 1,
        legs=tuple(leg for leg in options.legs if leg != "keyword") or options.legs,
        graph=options.graph,
    )
    answer = doc.service.search(text, opts)  # the query embedding first, then the lock
    return [r for r in answer.results if r.path != doc.rel][:limit]


def _related_line(
    service: VaultService, path: str, title: str, chunk: ChunkPayload, rel: str
) -> str:
    line = int(chunk.get("line_start", 0))
    uri = card_uri(service.root, path) + f"#L{line + 1}"
    snippet = excerpt(str(chunk.get("text", "")), [], RELATED_EXCERPT_CHARS)
    snippet = snippet.replace("\n", " ").replace("[", "\\[").replace("]", "\\]")
    return f"- [{_md_text(title)}]({uri}) · *{rel}* — {snippet}"


def _md_text(text: str) -> str:
    return re.sub(r"([\[\]*_`\\])", r"\\\1", text)


def _link_hover(doc: Doc, link: Link, target: str | None, limit: int) -> str:
    """The hover of a link (reads the graph and the index, calls no model: inside
    ``service.read``)."""
    service = doc.service
    if target is None:
        return (
            f"**Unresolved link** `{link.target}`: no card has this file name, title, alias or id."
        )
    card = service.graph.cards.get(target)
    uri = card_uri(service.root, target)
    if card is None:
        return f"**[{_md_text(link.target)}]({uri})** (attachment)"
    backlinks = len(service.graph.backlinks(target))
    parts = [
        f"### [{_md_text(card.title)}]({uri})",
        f"`{target}` · {backlinks} backlink{'s' if backlinks != 1 else ''}",
        "",
        _preview(card, link),
    ]
    engine = service.engine
    similar = engine.similar_cards(target, limit, exclude={doc.rel}) if engine else []
    if similar:
        linked = linked_targets(service.graph, doc.card)
        parts += ["", "**Related**", ""]
        for path, title, chunk in similar:
            rel = relation(service.graph, doc.rel, linked, path)
            parts.append(_related_line(service, path, title, chunk, rel))
    return "\n".join(parts)


def _preview(card: Card, link: Link) -> str:
    body = link_section(card, link)
    if len(body) > PREVIEW_CHARS:
        cut = body.rfind(" ", 0, PREVIEW_CHARS)
        body = body[: cut if cut > 0 else PREVIEW_CHARS] + " …"
    return "\n".join("> " + line for line in body.split("\n")) if body else "*(empty card)*"


def related_json(
    doc: Doc, pos: types.Position | None, codec: PositionCodec, limit: int, options: SearchOptions
) -> list[dict[str, Any]]:
    """Related notes for the paragraph at ``pos``, or for the whole card without one."""
    text = doc.card.body
    if pos is not None:
        para = paragraph_at(doc.card, Codec(codec, doc.lines).from_client(pos).line)
        if para is not None:
            text = para[2]
    if not parse_query(text).words:
        return []
    results = _related_to_text(doc, text, limit, options)

    def rows() -> list[dict[str, Any]]:
        graph = doc.service.graph
        linked = linked_targets(graph, doc.card)
        out = []
        for r in results:
            row = result_dict(r, [])
            row["uri"] = card_uri(doc.service.root, r.path)
            row["folder"] = folder_of(r.path, doc.service.root.name)
            row["relation"] = relation(graph, doc.rel, linked, r.path)
            out.append(row)
        return out

    return doc.service.read(rows)


async def on_hover(ls: ZettelLanguageServer, params: types.HoverParams) -> types.Hover | None:
    limit, codec = ls.settings.hover_limit, ls.workspace.position_codec

    def answer(doc: Doc) -> types.Hover | None:
        return hover(doc, params.position, codec, limit, ls.search_options(limit))

    return await answer_doc(ls, params.text_document.uri, answer, None)


async def cmd_related(ls: ZettelLanguageServer, *args: Any) -> list[dict[str, Any]]:
    """``zettel.related`` {uri, position?, limit?}: related notes of a paragraph or card."""
    uri = str(arg(args, "uri", 0, "") or "")
    pos = position_arg(arg(args, "position", 1))
    limit = limit_arg(arg(args, "limit", 2), ls.settings.hover_limit)

    def answer(doc: Doc) -> list[dict[str, Any]]:
        return related_json(doc, pos, ls.workspace.position_codec, limit, ls.search_options(limit))

    return await answer_doc(ls, uri, answer, [])


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.command("zettel.related")(cmd_related)
