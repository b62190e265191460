"""Rename: ``textDocument/prepareRename``, ``textDocument/rename`` and
``workspace/willRenameFiles``.

On a link or on the card's title (the opening H1 or the frontmatter ``title`` that gives it, or
an H1 that repeats the file name) a rename renames the card: the file moves (a ``RenameFile``
resource operation) and every link to it is rewritten in its own form (the edit computation is
:mod:`zettel_lsp.graph.rename`, in code points; here it becomes UTF-16 ranges). On any other
heading, or on the ``#heading`` part of a link, it renames that heading and every link to it. A
client that cannot rename files (no ``rename`` resource operation) gets the text edits only and
a message naming the file move left to the user. Anywhere else ``prepareRename`` answers null.
A rename in the editor's file tree (``willRenameFiles``) gets the link edits. The server never
writes a file: the editor applies the edit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.rename import (
    NameSource,
    RenameError,
    RenamePlan,
    TextEdit,
    frontmatter_title,
    heading_text,
    name_source,
    new_path_for,
    opening_h1,
    plan_file_rename,
    plan_heading_rename,
    plan_title_rename,
    wiki_name,
)
from zettel_lsp.graph.resolver import Stage
from zettel_lsp.notes.anchors import heading_for
from zettel_lsp.notes.model import Card, Heading, LinkKind, file_stem
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.features.shared import answer_doc, capability, offset_at
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService

log = logging.getLogger(__name__)
T = TypeVar("T")

REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed


class RenameRefused(JsonRpcException):
    """The rename cannot be done; the message is for the user."""

    CODE = REQUEST_FAILED


def _not_refused(record: logging.LogRecord) -> bool:
    """pygls logs every error answer with its traceback; a refused rename is an answer, not a
    fault (the client shows its message), so it is not logged."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, RenameRefused)


@dataclass(frozen=True, slots=True)
class Target:
    """What a rename at a position renames, and the text range (code points) it shows."""

    kind: str  # "card" (file), "title" (frontmatter / H1 title) or "heading"
    path: str  # the card
    start: int  # in the open document
    end: int
    placeholder: str
    heading: Heading | None = None


def target_at(doc: Doc, offset: int, graph: LinkGraph) -> Target | None:
    """What renaming at ``offset`` of ``doc`` renames (call inside ``service.read``)."""
    card = doc.card
    for link in card.links:
        if not link.span.start <= offset <= link.span.end:
            continue
        res = graph.resolve_link(link, doc.rel)
        target = res.target or ""  # "": unresolved, no card's path
        target_card = card if target == doc.rel else graph.cards.get(target)  # unsaved text
        if target_card is None:
            raise RenameError("this link does not point at a card")
        if link.kind in (LinkKind.WIKI, LinkKind.EMBED):
            parts = wiki_name(link, res.swapped)
            if parts is None:
                return None
            name, sub = parts
            if sub is not None and link.heading and sub.start <= offset <= sub.end:
                h = heading_for(target_card, link.heading)
                if h is None:
                    raise RenameError(f"{target_card.title} has no heading {link.heading!r}")
                return Target("heading", target, sub.start, sub.end, h.text, h)
            start, end = name.start, name.end
        else:
            start, end = link.span.start, link.span.end
        if res.stage is Stage.TITLE and name_source(target_card) is not NameSource.FILE:
            return Target("title", target, start, end, target_card.title)
        return Target("card", target, start, end, target_card.stem)
    line = doc.index.line_of(offset)
    for h in card.headings:
        if h.line != line:
            continue
        part = heading_text(card, h)
        if part is None:
            return None
        if h is opening_h1(card):
            source = name_source(card)
            if source is NameSource.H1:
                return Target("title", doc.rel, part.start, part.end, card.title)
            if h.text == card.stem:
                return Target("card", doc.rel, part.start, part.end, card.stem)
        return Target("heading", doc.rel, part.start, part.end, h.text, h)
    if line < card.body_start_line:
        fm = frontmatter_title(card)
        if fm is not None and doc.index.line_of(fm.start) == line:
            if name_source(card) is NameSource.FRONTMATTER:
                return Target("title", doc.rel, fm.start, fm.end, card.title)
            if fm.text == card.stem:
                return Target("card", doc.rel, fm.start, fm.end, card.stem)
    return None


def plan_for(
    target: Target, new_name: str, graph: LinkGraph, overrides: dict[str, Card]
) -> RenamePlan:
    if target.kind == "heading":
        assert target.heading is not None
        return plan_heading_rename(
            graph, target.path, target.heading, new_name, overrides=overrides
        )
    if target.kind == "title":
        return plan_title_rename(graph, target.path, new_name, overrides=overrides)
    return plan_file_rename(
        graph, target.path, new_path_for(target.path, new_name), overrides=overrides
    )


# ------------------------------------------------------------------ plan -> WorkspaceEdit


def workspace_edit(
    root: Path,
    plan: RenamePlan,
    texts: Callable[[str], str | None],
    codec: PositionCodec,
    versions: Callable[[str], int | None] = lambda _: None,
    *,
    document_changes: bool = True,
) -> types.WorkspaceEdit:
    """``plan`` as a ``WorkspaceEdit``: text edits (client units, against each card's current
    text from ``texts``) then the file move. Without ``document_changes`` (``changes`` only) the
    plan must have no move: the callers drop it first."""
    per_file = [
        (path, to_lsp_edits(text, plan.edits[path], codec))
        for path in sorted(plan.edits)
        if (text := texts(path)) is not None
    ]
    if not document_changes:
        assert plan.move is None, "a file move needs documentChanges"
        return types.WorkspaceEdit(changes={card_uri(root, p): e for p, e in per_file})
    changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=card_uri(root, p), version=versions(p)
            ),
            edits=list(e),
        )
        for p, e in per_file
    ]
    if plan.move is not None:
        old, new = plan.move
        changes.append(
            types.RenameFile(
                old_uri=card_uri(root, old),
                new_uri=card_uri(root, new),
                options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
            )
        )
    return types.WorkspaceEdit(document_changes=changes)


def to_lsp_edits(
    text: str, edits: Iterable[TextEdit], codec: PositionCodec
) -> list[types.TextEdit]:
    index = LineIndex(text)
    c = Codec(codec, text.splitlines(keepends=True) or [""])
    return [
        types.TextEdit(
            range=c.range(index.position(e.start), index.position(e.end)), new_text=e.new_text
        )
        for e in edits
    ]


# ------------------------------------------------------------------ handlers


def _can_move(ls: ZettelLanguageServer) -> bool:
    ops = capability(ls, "workspace", "workspace_edit", "resource_operations") or ()
    return any(str(getattr(o, "value", o)) == "rename" for o in ops)


def open_docs(
    ls: ZettelLanguageServer, service: VaultService, doc: Doc | None = None
) -> dict[str, Doc]:
    """The editor's open cards of ``service``'s vault (unsaved text included), ``doc`` too."""
    out = {doc.rel: doc} if doc is not None else {}
    for uri in ls.open_uris():
        other = ls.doc(uri)
        if other is not None and other.service is service and other.rel not in out:
            out[other.rel] = other
    return out


def _text_of(graph: LinkGraph, docs: dict[str, Doc], path: str) -> str | None:
    """The text of the card at ``path``: the editor's when it is open, else the graph's."""
    if path in docs:
        return docs[path].text
    card = graph.cards.get(path)
    return card.text if card is not None else None


def _refusing(fn: Callable[[Doc], T]) -> Callable[[Doc], T]:
    """``fn``, with a refused rename raised as the error the client shows."""

    def run(doc: Doc) -> T:
        try:
            return fn(doc)
        except RenameError as exc:
            raise RenameRefused(str(exc)) from None

    return run


async def on_prepare_rename(
    ls: ZettelLanguageServer, params: types.PrepareRenameParams
) -> types.PrepareRenamePlaceholder | None:
    def run(doc: Doc) -> types.PrepareRenamePlaceholder | None:
        codec = Codec(ls.workspace.position_codec, doc.lines)
        offset = doc.index.offset(codec.from_client(params.position))
        target = doc.service.read(lambda: target_at(doc, offset, doc.service.graph))
        if target is None:
            return None  # null: the client says so without asking for a new name
        rng = codec.range(doc.index.position(target.start), doc.index.position(target.end))
        return types.PrepareRenamePlaceholder(range=rng, placeholder=target.placeholder)

    return await answer_doc(ls, params.text_document.uri, _refusing(run), None)


async def on_rename(
    ls: ZettelLanguageServer, params: types.RenameParams
) -> types.WorkspaceEdit | None:
    def run(doc: Doc) -> tuple[types.WorkspaceEdit | None, str | None]:
        service = doc.service
        offset = offset_at(doc, params.position, ls.workspace.position_codec)

        def compute() -> tuple[types.WorkspaceEdit | None, str | None]:
            graph = service.graph
            target = target_at(doc, offset, graph)
            if target is None:
                raise RenameError("nothing to rename here")
            docs = open_docs(ls, service, doc)
            plan = plan_for(target, params.new_name, graph, {p: d.card for p, d in docs.items()})
            move, left = plan.move, None
            can_move = _can_move(ls)
            if move is not None and not can_move:
                plan.move, left = None, _move_left_message(*move)  # the user moves the file
            edit = workspace_edit(
                service.root,
                plan,
                partial(_text_of, graph, docs),
                ls.workspace.position_codec,
                lambda p: docs[p].version if p in docs else None,
                document_changes=can_move
                or ls.supports("workspace", "workspace_edit", "document_changes"),
            )
            if move is not None:
                _own_move(service.root / move[0], service.root / move[1])
            return edit, left

        return service.read(compute)

    nothing: tuple[types.WorkspaceEdit | None, str | None] = (None, None)
    edit, left = await answer_doc(ls, params.text_document.uri, _refusing(run), nothing)
    if edit is not None and left is not None:
        ls.show("info", left)
    return edit


def _move_left_message(old: str, new: str) -> str:
    """What the user still does after a card rename the editor applied without its file move."""
    return (
        f"zettel-lsp: the links and the title now name {file_stem(new)!r}; this editor cannot "
        f"rename files in an edit: move {old} to {new} yourself "
        "(until then those links do not resolve)"
    )


# The moves of this server's own rename answers (made by the editor, or left to the user when
# the editor cannot rename files). Announced with willRenameFiles, the move's links are
# rewritten by that rename's WorkspaceEdit already, and answering again would edit the new text
# (VS Code asks "wants to make refactoring changes with this file move"; `[[New|old]]` would
# read as a Dendron link to the old card and get its label renamed too).
_OWN_MOVES: dict[tuple[str, str], float] = {}
_OWN_MOVES_LOCK = threading.Lock()
OWN_MOVE_TTL = 120.0  # seconds (a preview of the edit may keep it waiting)


def _move_key(old: Path, new: Path) -> tuple[str, str]:
    return (str(old.resolve()), str(new.resolve()))


def _own_move(old: Path, new: Path) -> None:
    now = time.monotonic()
    with _OWN_MOVES_LOCK:
        for key, at in list(_OWN_MOVES.items()):
            if now - at > OWN_MOVE_TTL:
                del _OWN_MOVES[key]
        _OWN_MOVES[_move_key(old, new)] = now


def _was_own_move(old: Path, new: Path) -> bool:
    with _OWN_MOVES_LOCK:
        at = _OWN_MOVES.pop(_move_key(old, new), None)
    return at is not None and time.monotonic() - at <= OWN_MOVE_TTL


async def on_will_rename_files(
    ls: ZettelLanguageServer, params: types.RenameFilesParams
) -> types.WorkspaceEdit | None:
    """Links to a card the editor is about to move (edits only: the editor moves the file)."""

    def run() -> types.WorkspaceEdit | None:
        changes: dict[str, list[types.TextEdit]] = {}
        for f in params.files:
            for uri, edits in _move_edits(ls, f.old_uri, f.new_uri).items():
                changes.setdefault(uri, []).extend(edits)
        return types.WorkspaceEdit(changes=changes) if changes else None

    return await ls.off_loop(run, None)


def _move_edits(
    ls: ZettelLanguageServer, old_uri: str, new_uri: str
) -> Mapping[str, Sequence[types.TextEdit]]:
    """The link edits, by URI, for the move of the card at ``old_uri`` to ``new_uri``; none
    for a move this server's rename answered (its WorkspaceEdit holds them already)."""
    old_fs, new_fs = to_fs_path(old_uri), to_fs_path(new_uri)
    if not old_fs or not new_fs or _was_own_move(Path(old_fs), Path(new_fs)):
        return {}
    service = ls.service_for(Path(old_fs).resolve())
    if service is None:
        return {}
    try:
        old = Path(old_fs).resolve().relative_to(service.root).as_posix()
        new = Path(new_fs).resolve().relative_to(service.root).as_posix()
    except ValueError:
        return {}

    def compute() -> Mapping[str, Sequence[types.TextEdit]]:
        graph = service.graph
        if old not in graph.cards or not new.lower().endswith(".md"):
            return {}
        docs = open_docs(ls, service)
        overrides = {p: d.card for p, d in docs.items()}
        try:
            plan = plan_file_rename(graph, old, new, overrides=overrides, strict=False)
        except RenameError as exc:
            log.info("not updating links for %s -> %s: %s", old, new, exc)
            return {}
        plan.move = None  # the editor moves the file
        texts = partial(_text_of, graph, docs)
        codec = ls.workspace.position_codec
        edit = workspace_edit(service.root, plan, texts, codec, document_changes=False)
        return edit.changes or {}

    return service.read(compute)


def register(server: ZettelLanguageServer) -> None:
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_refused)  # added once
    server.feature(
        types.TEXT_DOCUMENT_PREPARE_RENAME,
        types.RenameOptions(prepare_provider=True),
    )(on_prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(on_rename)
    md = types.FileOperationFilter(
        pattern=types.FileOperationPattern(
            glob="**/*.md", matches=types.FileOperationPatternKind.File
        )
    )
    server.feature(
        types.WORKSPACE_WILL_RENAME_FILES,
        types.FileOperationRegistrationOptions(filters=[md]),
    )(on_will_rename_files)
