"""Outline: ``textDocument/documentSymbol`` (headings as a tree), ``textDocument/documentLink``
(every link with its target), ``textDocument/codeLens`` (backlinks and unlinked mentions on the
title line) and ``textDocument/foldingRange`` (front matter and sections).

Everything is computed from the open card (the editor's text, unsaved edits included) and the
graph's indexes (``backlinks`` is one adjacency lookup; the mention count runs the mention
matcher over this one card): no request scans the vault. See docs/lsp-outline.md.
"""

from __future__ import annotations

from functools import partial

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.notes.outline import OutlineNode, folding_ranges, heading_tree, title_line
from zettel_lsp.server.documents import Codec, Doc, card_uri, range_json
from zettel_lsp.server.features.navigation import link_target, references
from zettel_lsp.server.features.shared import answer_doc
from zettel_lsp.server.server import ZettelLanguageServer

# The backlinks lens's command: run by the client, never sent to the server. Arguments are those
# of VS Code's ``editor.action.showReferences`` in LSP JSON: (uri, position, locations).
SHOW_REFERENCES = "zettel.showReferences"
SUGGEST_LINKS = "zettel.suggestLinks"
MENTIONS_LENS = "mentions"


# ------------------------------------------------------------------ documentSymbol


def _symbol(node: OutlineNode, c: Codec) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=node.name,
        kind=types.SymbolKind.String,
        detail="#" * node.heading.level,
        range=c.range(node.start, node.end),
        selection_range=c.range(node.text_start, node.text_end),
        children=[_symbol(child, c) for child in node.children],
    )


def document_symbols(doc: Doc, codec: PositionCodec) -> list[types.DocumentSymbol]:
    c = Codec(codec, doc.lines)
    return [_symbol(node, c) for node in heading_tree(doc.card)]


# ------------------------------------------------------------------ documentLink


def document_links(
    doc: Doc, codec: PositionCodec, tooltips: bool = True
) -> list[types.DocumentLink]:
    """Links that point somewhere: a card (with ``#L<line>``, 1-based as VS Code's opener reads
    file URIs, for a heading or a block that exists), or an attachment file. Unresolved links
    get no entry (diagnostics report them). ``tooltips``: the client shows them (the target's
    title)."""
    c = Codec(codec, doc.lines)
    service = doc.service

    def find() -> list[types.DocumentLink]:
        out: list[types.DocumentLink] = []
        for link in doc.card.links:
            found = link_target(doc, link)
            if found is None:
                continue
            target, line = found
            card = service.graph.cards.get(target)
            tip = card.title if card is not None else target
            uri = card_uri(service.root, target)
            if line is not None:
                uri += f"#L{line + 1}"
                tip += f" › {link.subpath}" if link.subpath else ""
            out.append(
                types.DocumentLink(
                    range=c.range(link.span.start_pos, link.span.end_pos),
                    target=uri,
                    tooltip=tip if tooltips else None,
                )
            )
        return out

    return service.read(find)


# ------------------------------------------------------------------ codeLens


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def title_range(doc: Doc, codec: PositionCodec) -> types.Range:
    line = min(title_line(doc.card), doc.index.line_count - 1)
    end = doc.index.line_start(line) + len(doc.index.line_text(line).rstrip("\r"))
    return types.Range(
        start=types.Position(line=line, character=0),
        end=Codec(codec, doc.lines).to_client(doc.index.position(end)),
    )


def backlinks_lens(doc: Doc, codec: PositionCodec, rng: types.Range) -> types.CodeLens:
    """Each link to this card, at its range (what references on the title line answers)."""
    pos = types.Position(line=title_line(doc.card), character=0)
    locations = references(doc, pos, codec, include_declaration=False)
    sources = {loc.uri for loc in locations}
    return types.CodeLens(
        range=rng,
        command=types.Command(
            title=plural(len(sources), "backlink"),
            command=SHOW_REFERENCES,
            arguments=[
                doc.uri,
                range_json(rng)["start"],
                [{"uri": loc.uri, "range": range_json(loc.range)} for loc in locations],
            ],
        ),
    )


def code_lenses(doc: Doc, codec: PositionCodec) -> list[types.CodeLens]:
    """Two lenses on the title line: backlinks (shows them as references) and unlinked mentions
    (runs ``zettel.suggestLinks``; its count is computed in ``codeLens/resolve``)."""
    rng = title_range(doc, codec)
    return [
        backlinks_lens(doc, codec, rng),
        types.CodeLens(range=rng, data={"uri": doc.uri, "lens": MENTIONS_LENS}),
    ]


def resolve_lens(lens: types.CodeLens, doc: Doc) -> types.CodeLens:
    """Fill in the unlinked-mentions lens's command: its count is how many unlinked mentions
    ``zettel.suggestLinks`` lists for the card's current text (every mention of every
    suggested card)."""
    data = lens.data if isinstance(lens.data, dict) else {}
    if lens.command is None and data.get("lens") == MENTIONS_LENS:
        n = sum(t.count for t in doc.mentions())
        lens.command = types.Command(
            title=plural(n, "unlinked mention"), command=SUGGEST_LINKS, arguments=[{"uri": doc.uri}]
        )
    return lens


# ------------------------------------------------------------------ foldingRange

FOLD_KINDS = {
    "frontmatter": types.FoldingRangeKind.Comment,
    "section": types.FoldingRangeKind.Region,
}


def folds(doc: Doc) -> list[types.FoldingRange]:
    """Whole lines: no column, so no unit conversion."""
    return [
        types.FoldingRange(start_line=f.start, end_line=f.end, kind=FOLD_KINDS[f.kind])
        for f in folding_ranges(doc.card)
    ]


# ------------------------------------------------------------------ handlers


async def on_document_symbol(
    ls: ZettelLanguageServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    codec = ls.workspace.position_codec
    return await answer_doc(
        ls, params.text_document.uri, partial(document_symbols, codec=codec), []
    )


async def on_document_link(
    ls: ZettelLanguageServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink]:
    tips = ls.supports("text_document", "document_link", "tooltip_support")
    links = partial(document_links, codec=ls.workspace.position_codec, tooltips=tips)
    return await answer_doc(ls, params.text_document.uri, links, [])


async def on_code_lens(
    ls: ZettelLanguageServer, params: types.CodeLensParams
) -> list[types.CodeLens]:
    codec = ls.workspace.position_codec
    return await answer_doc(ls, params.text_document.uri, partial(code_lenses, codec=codec), [])


async def on_code_lens_resolve(ls: ZettelLanguageServer, lens: types.CodeLens) -> types.CodeLens:
    uri = str(lens.data.get("uri", "")) if isinstance(lens.data, dict) else ""
    return await answer_doc(ls, uri, partial(resolve_lens, lens), lens)


async def on_folding_range(
    ls: ZettelLanguageServer, params: types.FoldingRangeParams
) -> list[types.FoldingRange]:
    return await answer_doc(ls, params.text_document.uri, folds, [])


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(on_document_symbol)
    server.feature(
        types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions(resolve_provider=False)
    )(on_document_link)
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))(
        on_code_lens
    )
    server.feature(types.CODE_LENS_RESOLVE)(on_code_lens_resolve)
    server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)(on_folding_range)
