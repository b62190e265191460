"""Completion: ``textDocument/completion`` and ``completionItem/resolve``.

``[[`` lists cards (ranked by what the paragraph is about when nothing is typed yet, by name
when something is), ``[[Card#`` its headings, ``[[Card#^`` its block ids, ``](`` a Markdown
link's path, ``#`` in prose the vault's tags. The logic is :mod:`zettel_lsp.search.complete`;
this module turns it into LSP items.

The paragraph's query embedding runs before the vault lock is taken (``service.search``); the
ranking and the items are built inside ``service.read``. A card's first line of prose (its
documentation) is filled in by ``completionItem/resolve`` when the client resolves it lazily.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.notes.model import Card, Position
from zettel_lsp.search import complete as cx
from zettel_lsp.search import completion_names as cn
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.results import folder_of
from zettel_lsp.search.suggest import linked_targets
from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.features.shared import answer_doc, capability
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService

TRIGGERS = ["[", "#", "^", "("]
_MEANING_LOCK = threading.Lock()


def completion(
    doc: Doc,
    pos: types.Position,
    codec: PositionCodec,
    options: SearchOptions,
    *,
    lazy_docs: bool,
) -> types.CompletionList | None:
    c = Codec(codec, doc.lines)
    cpos = c.from_client(pos)
    line = doc.lines[cpos.line].rstrip("\r\n") if cpos.line < len(doc.lines) else ""
    ctx = cx.context_at(line, cpos.character)
    offset = doc.index.offset(cpos)
    if ctx is None:
        # A single "[" (a trigger character): rank what the paragraph is about now, so that the
        # "[[" that usually follows a moment later finds it cached (the query is the same: the
        # paragraph without the link being typed). This answer is empty either way.
        if line[: cpos.character].endswith("[") and not _masked(doc, offset - 1):
            ahead = cx.bracket_query(doc.card, cpos.line, cpos.character)
            if ahead is not None:
                _ranked(doc, ahead, options)
        return None
    if ctx.kind == cx.TAG and _masked(doc, offset - 1):
        return None
    links = ctx.kind in (cx.CARD, cx.PATH)
    if links and _masked(doc, doc.index.offset(Position(cpos.line, ctx.open_start))):
        return None
    # the cards the paragraph is about: the query embedding happens here, before the lock
    text = cx.meaning_query(doc.card, cpos.line, ctx) if links else None
    meaning = [] if text is None else _ranked(doc, text, options)
    return doc.service.read(lambda: _answer(doc, cpos, ctx, offset, meaning, c, lazy_docs))


def _masked(doc: Doc, offset: int) -> bool:
    """Whether ``offset`` is in code or a comment."""
    return any(s <= offset < e for s, e in doc.card.masked)


_MEANING: OrderedDict[tuple[int, str, str], tuple[float, list[str]]] = OrderedDict()
_RUNNING: dict[tuple[int, str, str], Future[list[str]]] = {}
MEANING_TTL = 10.0  # seconds a paragraph's meaning ranking is reused while a name is typed
MEANING_CACHE_SIZE = 64
RUNNING_WAIT = 2.0  # seconds a request waits for the same meaning search running elsewhere


def _ranked(doc: Doc, text: str, options: SearchOptions) -> list[str]:
    """The meaning search for ``text``: cached for ``MEANING_TTL`` (the paragraph without the
    link being typed stays the same while a name is typed); while the same search runs on
    another thread (the search ahead of a ``[``), its answer is awaited, not recomputed."""
    key = (id(doc.service), doc.rel, text)
    now = time.monotonic()
    with _MEANING_LOCK:
        known = _MEANING.get(key)
        if known is not None and now - known[0] < MEANING_TTL:
            return known[1]
        running = _RUNNING.get(key)
        if running is None:
            mine: Future[list[str]] = Future()
            _RUNNING[key] = mine
    if running is not None:
        try:
            return running.result(timeout=RUNNING_WAIT)
        except Exception:  # noqa: BLE001 - it failed or is slow: this request searches itself
            pass
        return _search(doc, text, options, key, now)
    try:
        paths = _search(doc, text, options, key, now)
        mine.set_result(paths)
        return paths
    except BaseException as exc:
        mine.set_exception(exc)
        raise
    finally:
        with _MEANING_LOCK:
            _RUNNING.pop(key, None)


def _search(
    doc: Doc, text: str, options: SearchOptions, key: tuple[int, str, str], now: float
) -> list[str]:
    answer = doc.service.search(text, cx.meaning_options(options))
    paths = [r.path for r in answer.results if r.path != doc.rel]
    if answer.complete:  # a partial answer (still indexing) is asked again next time
        with _MEANING_LOCK:
            _MEANING[key] = (now, paths)
            while len(_MEANING) > MEANING_CACHE_SIZE:
                _MEANING.popitem(last=False)
    return paths


_RECENT: dict[int, tuple[float, dict[str, float]]] = {}
RECENT_TTL = 2.0  # seconds a vault's most recently edited cards are reused


def _recency(service: VaultService) -> dict[str, float]:
    """The most recently modified cards (index mtimes), at most ``RECENT_DEPTH``, recomputed
    every ``RECENT_TTL`` seconds (inside the vault lock)."""
    vault = service.vault
    if vault is None:
        return {}
    now = time.monotonic()
    known = _RECENT.get(id(vault))
    if known is not None and now - known[0] < RECENT_TTL:
        return known[1]
    files = vault.indexer.card_items()
    top = heapq.nlargest(cx.RECENT_DEPTH, files, key=lambda kv: kv[1].mtime_ns)
    recent = {rel: float(f.mtime_ns) for rel, f in top}
    if len(_RECENT) > 8:
        _RECENT.clear()
    _RECENT[id(vault)] = (now, recent)
    return recent


def _answer(
    doc: Doc,
    cpos: Position,
    ctx: cx.CompletionContext,
    offset: int,
    meaning: list[str],
    c: Codec,
    lazy_docs: bool,
) -> types.CompletionList | None:
    service = doc.service
    graph = service.graph
    if ctx.kind == cx.TAG:
        tags, cut = cx.tags_for(graph, ctx.typed)
        rng = c.range(Position(cpos.line, ctx.start), Position(cpos.line, ctx.end))
        items = [
            types.CompletionItem(
                label=f"#{tag}",
                kind=types.CompletionItemKind.Keyword,
                detail=f"{n} card{'s' if n != 1 else ''}",
                filter_text=tag,
                sort_text=f"{i:05d}",
                text_edit=types.TextEdit(range=rng, new_text=tag),
            )
            for i, (tag, n) in enumerate(tags)
        ]
        return types.CompletionList(is_incomplete=cut, items=items)
    if ctx.kind in (cx.HEADING, cx.BLOCK):
        return _anchors(doc, cpos, ctx, c)
    linked = linked_targets(graph, doc.card, offset)
    found = cx.rank_cards(graph, doc.rel, linked, ctx.typed, meaning, _recency(service))
    style = cn.MARKDOWN if ctx.kind == cx.PATH else cn.vault_names(graph).style
    rels = cx.relations(graph, doc.rel, linked, [a.path for a in found.items])
    line = doc.lines[cpos.line] if cpos.line < len(doc.lines) else ""
    embed = ctx.open_start > 0 and line[ctx.open_start - 1 : ctx.open_start] == "!"
    items = []
    # the same two ranges for every item (a long line costs a scan per conversion)
    ranges = {
        w: c.range(
            Position(cpos.line, ctx.open_start if w else ctx.start), Position(cpos.line, ctx.end)
        )
        for w in (False, True)
    }
    for i, a in enumerate(found.items):
        card = graph.cards.get(a.path)
        if card is None:
            continue
        if ctx.kind == cx.PATH:
            new_text, whole = cx.md_path(doc.rel, a.path), False
        else:
            new_text, whole = cx.link_insert(graph, doc.card, a, style, embed=embed)
        rel = rels.get(a.path, "")
        where = f"{folder_of(a.path, service.root.name)} · {rel}"
        item = types.CompletionItem(
            label=card.title if a.name.kind != "alias" else f"{a.name.text} → {card.title}",
            kind=types.CompletionItemKind.File,
            detail=where,
            label_details=types.CompletionItemLabelDetails(description=where),
            filter_text=new_text if ctx.kind == cx.PATH else ("[[" if whole else "") + a.name.text,
            sort_text=f"{i:05d}",
            text_edit=types.TextEdit(range=ranges[whole], new_text=new_text),
            data={"uri": card_uri(service.root, a.path), "relation": rel},
        )
        if not lazy_docs:
            item.documentation = _documentation(card, a.path, rel)
        items.append(item)
    return types.CompletionList(is_incomplete=found.incomplete, items=items)


def _documentation(card: Card, path: str, rel: str) -> types.MarkupContent:
    parts = [f"**{card.title}**", f"`{path}` · *{rel}*"]
    text = cx.first_prose_line(card)
    if text:
        parts += ["", text]
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n".join(parts))


def _anchors(
    doc: Doc, cpos: Position, ctx: cx.CompletionContext, c: Codec
) -> types.CompletionList | None:
    target = cx.target_card(doc.service.graph, doc.card, ctx.target)
    if target is None:
        return None
    rng = c.range(Position(cpos.line, ctx.start), Position(cpos.line, ctx.end))
    # (label, detail, documentation, the name inserted)
    found: list[tuple[str, str, str | None, str]]
    if ctx.kind == cx.HEADING:
        found = [
            (text, f"{'#' * level} {target.title}", None, text)
            for text, level in cx.headings_of(target, ctx.typed)
        ]
    else:
        found = [
            (f"^{n}", line[:80], line or None, n) for n, line in cx.blocks_of(target, ctx.typed)
        ]
    items = [
        types.CompletionItem(
            label=label,
            kind=types.CompletionItemKind.Reference,
            detail=detail,
            documentation=documentation,
            sort_text=f"{i:05d}",
            filter_text=name,
            text_edit=types.TextEdit(range=rng, new_text=f"{name}]]"),
        )
        for i, (label, detail, documentation, name) in enumerate(found)
    ]
    return types.CompletionList(is_incomplete=False, items=items)


def resolve(ls: ZettelLanguageServer, item: types.CompletionItem) -> types.CompletionItem:
    data: Any = item.data
    if not isinstance(data, dict) or item.documentation is not None:
        return item
    uri = str(data.get("uri", ""))
    fs = to_fs_path(uri)
    if not fs:
        return item
    path = Path(fs).resolve()
    service = ls.service_for(path)
    if service is None:
        return item
    rel = path.relative_to(service.root).as_posix()

    def doc() -> types.MarkupContent | None:
        card = service.graph.cards.get(rel)
        return None if card is None else _documentation(card, rel, str(data.get("relation", "")))

    item.documentation = service.read(doc)
    return item


def _lazy_docs(ls: ZettelLanguageServer) -> bool:
    """Whether the client resolves ``documentation`` lazily (else it comes with the item)."""
    path = ("text_document", "completion", "completion_item", "resolve_support", "properties")
    return "documentation" in (capability(ls, *path) or ())


async def on_completion(
    ls: ZettelLanguageServer, params: types.CompletionParams
) -> types.CompletionList | None:
    # The text the request's position is about: the editor goes on typing while the request
    # waits for a worker, and a later didChange must not move the text under it (the edit's
    # range would miss the auto-closed `]]` and the accepted item would leave `]]]]`).
    uri = params.text_document.uri
    try:
        document = ls.workspace.get_text_document(uri)
        asked: tuple[str, int | None] | None = (document.source, document.version)
    except (OSError, UnicodeDecodeError):
        asked = None

    def run(doc: Doc) -> types.CompletionList | None:
        if asked is not None and doc.text != asked[0]:
            doc = Doc(doc.uri, doc.service, doc.rel, asked[0], asked[1])
        return completion(
            doc,
            params.position,
            ls.workspace.position_codec,
            ls.search_options(cx.MEANING_DEPTH),
            lazy_docs=_lazy_docs(ls),
        )

    return await answer_doc(ls, uri, run, None)


async def on_completion_resolve(
    ls: ZettelLanguageServer, item: types.CompletionItem
) -> types.CompletionItem:
    return await ls.off_loop(lambda: resolve(ls, item), item)


def _warm_names(service: VaultService) -> str:
    """Every card's names and the vault's tags (1 s on 13k cards) before the first ``[[``."""
    return f"{len(cn.vault_names(service.graph).names)} names for completion"


def register(server: ZettelLanguageServer) -> None:
    server.warm_ups.append(_warm_names)
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=True),
    )(on_completion)
    server.feature(types.COMPLETION_ITEM_RESOLVE)(on_completion_resolve)
