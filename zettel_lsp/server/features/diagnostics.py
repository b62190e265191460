"""Diagnostics: unresolved links (with "did you mean"), ambiguous links, links to a missing
heading or block, duplicate titles and aliases (the logic: :mod:`zettel_lsp.graph.diagnostics`).

Two ways to the client, never both for one client:

- **pull** (``textDocument/diagnostic``, ``workspace/diagnostic``) when the client says it can
  (``textDocument.diagnostic``); after a graph change the server asks it to pull again
  (``workspace/diagnostic/refresh``) when it supports that;
- **push** (``textDocument/publishDiagnostics``) otherwise, for open documents: on open, when
  edits pause for ``TYPING_PAUSE`` (not on every keystroke), and again for every open document
  after the graph changed (another file was created, renamed or edited: creating the missing
  card clears the diagnostic).

Severities come from the ``diagnostics*`` settings (``off`` drops a kind). Near-miss names come
from the graph's name table (``graph.names``); everything that reads the graph runs in the
request pool inside ``service.read``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import weakref
from collections.abc import Iterable
from functools import partial

from lsprotocol import types

from zettel_lsp.graph.diagnostics import CardProblem, Kind, card_problems, expect_near_misses
from zettel_lsp.notes.model import Card
from zettel_lsp.server.documents import Codec, Doc, card_uri
from zettel_lsp.server.features.shared import card_location
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService
from zettel_lsp.server.settings import ServerSettings

log = logging.getLogger("zettel_lsp")

SOURCE = "zettel-lsp"
LISTENER = "diagnostics"
WORKSPACE_BATCH = 500  # cards per read lock in workspace/diagnostic
TYPING_PAUSE = 0.2  # seconds without an edit before an edited document's diagnostics are pushed

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def severities(settings: ServerSettings) -> dict[Kind, types.DiagnosticSeverity]:
    """The severity of each kind that is switched on."""
    chosen = {
        Kind.UNRESOLVED: settings.diagnostics_unresolved,
        Kind.AMBIGUOUS: settings.diagnostics_ambiguous,
        Kind.MISSING_HEADING: settings.diagnostics_missing_anchor,
        Kind.MISSING_BLOCK: settings.diagnostics_missing_anchor,
        Kind.DUPLICATE_TITLE: settings.diagnostics_duplicate_title,
    }
    return {k: _SEVERITY[v] for k, v in chosen.items() if v in _SEVERITY}


def problems_of(service: VaultService, card: Card, kinds: Iterable[Kind]) -> list[CardProblem]:
    """The problems of ``card`` (inside ``service.read``); none before the graph is built."""
    if not service.graph_ready.is_set():
        return []
    return card_problems(service.graph, card, frozenset(kinds))


# ------------------------------------------------------------------ to LSP


def to_diagnostic(
    service: VaultService,
    problem: CardProblem,
    codec: Codec,
    severity: types.DiagnosticSeverity,
) -> types.Diagnostic:
    places = [(path, _related_message(problem, path)) for path in problem.related[:20]]
    if problem.target is not None:
        places.append((problem.target, "the card the link goes to"))
    related = [
        types.DiagnosticRelatedInformation(location=card_location(service.root, p), message=m)
        for p, m in places
    ]
    data: dict[str, object] = {"kind": problem.kind.value}
    if problem.suggestions:
        data["suggestions"] = [
            {"path": s.path, "title": s.title, "score": s.score} for s in problem.suggestions
        ]
    return types.Diagnostic(
        range=codec.range(problem.start, problem.end),
        message=problem.message,
        severity=severity,
        code=problem.kind.value,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )


def _related_message(problem: CardProblem, path: str) -> str:
    if problem.kind == Kind.AMBIGUOUS:
        return "the link goes here" if path == problem.related[0] else "also matches"
    return "the same name"


def doc_diagnostics(ls: ZettelLanguageServer, doc: Doc) -> list[types.Diagnostic]:
    """Every diagnostic of ``doc`` as the editor has it. Takes the read lock."""
    sev = severities(ls.settings)
    if not sev:
        return []
    service = doc.service
    problems = doc.problems(frozenset(sev))
    c = Codec(ls.workspace.position_codec, doc.lines)
    return [to_diagnostic(service, p, c, sev[p.kind]) for p in problems]


# ------------------------------------------------------------------ push


def pulls(ls: ZettelLanguageServer) -> bool:
    """Whether the client pulls diagnostics (then the server never pushes them)."""
    return ls.supports("text_document", "diagnostic")


class _Pusher:
    """Publishes diagnostics of open documents in the document pool, one run per document at a
    time (a burst of edits while one runs gives one more run, with the newest text)."""

    def __init__(self, ls: ZettelLanguageServer) -> None:
        self.ls = ls
        self.pending: set[str] = set()
        self.lock = threading.Lock()
        self.attached: weakref.WeakSet[VaultService] = weakref.WeakSet()
        self.typing: dict[str, asyncio.TimerHandle] = {}  # uri -> its publish after typing

    def attach(self) -> None:
        """Listen to every vault's graph changes (vaults start after the session does)."""
        with self.lock:
            new = [s for s in list(self.ls.services) if s not in self.attached]
            self.attached.update(new)
        for service in new:
            service.listen(LISTENER, partial(self.graph_changed, service))

    def graph_changed(self, service: VaultService) -> None:
        """A vault's graph changed (called on the thread that changed it)."""
        if pulls(self.ls):
            if self.ls.supports("workspace", "diagnostics", "refresh_support"):
                self.ls.workspace_diagnostic_refresh(None)
            return
        # every open document (a card of another vault costs one needless check); parsing
        # and the graph reads happen in the request pool, not on this (the watcher's) thread
        self.schedule(self.ls.open_uris())

    def schedule(self, uris: Iterable[str]) -> None:
        with self.lock:
            new = [u for u in uris if u not in self.pending]
            self.pending.update(new)
        for uri in new:
            try:
                self.ls.document_requests.submit(self._run, uri)
            except RuntimeError:  # shutting down
                return

    def schedule_after_typing(self, uri: str) -> None:
        """Publish once the edits of ``uri`` pause for ``TYPING_PAUSE`` (on the event loop):
        a keystroke's diagnostics would be stale at the next one, and their work would compete
        with the completion request that keystroke usually brings."""
        loop = asyncio.get_running_loop()
        old = self.typing.pop(uri, None)
        if old is not None:
            old.cancel()
        self.typing[uri] = loop.call_later(TYPING_PAUSE, self._typed, uri)

    def _typed(self, uri: str) -> None:
        self.typing.pop(uri, None)
        self.schedule([uri])

    def _run(self, uri: str) -> None:
        with self.lock:
            self.pending.discard(uri)
        try:
            self.publish(uri)
        except Exception:
            log.exception("diagnostics of %s failed", uri)

    def publish(self, uri: str) -> None:
        ls = self.ls
        if not ls.is_open(uri):
            return  # closed meanwhile (didClose cleared it)
        doc = ls.doc(uri)
        if doc is None or not doc.service.graph_ready.is_set():
            return  # the graph listener publishes once it is built
        items = doc_diagnostics(ls, doc)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=doc.version)
        )


_PUSHERS: weakref.WeakKeyDictionary[ZettelLanguageServer, _Pusher] = weakref.WeakKeyDictionary()
_PUSHERS_LOCK = threading.Lock()


def pusher(ls: ZettelLanguageServer) -> _Pusher:
    """The server's pusher, listening to every vault that has started."""
    with _PUSHERS_LOCK:
        p = _PUSHERS.setdefault(ls, _Pusher(ls))
    p.attach()
    return p


def _opened(ls: ZettelLanguageServer, uri: str, tries: int = 0) -> None:
    p = pusher(ls)
    if not ls.services and tries < 120:  # opened before the vaults started: look again soon
        asyncio.get_running_loop().call_later(0.5, _opened, ls, uri, tries + 1)
        return
    if not pulls(ls):
        p.schedule([uri])


async def on_did_open(ls: ZettelLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    _opened(ls, params.text_document.uri)


async def on_did_change(
    ls: ZettelLanguageServer, params: types.DidChangeTextDocumentParams
) -> None:
    p = pusher(ls)
    if not pulls(ls):
        p.schedule_after_typing(params.text_document.uri)


async def on_did_close(ls: ZettelLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    if not pulls(ls):
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )


# ------------------------------------------------------------------ pull


def _result_id(service: VaultService, settings: ServerSettings, text: str) -> str:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    sev = ",".join(f"{k.value}={v.value}" for k, v in sorted(severities(settings).items()))
    return f"{service.graph_version}:{digest}:{hashlib.md5(sev.encode()).hexdigest()[:8]}"


def document_report(
    ls: ZettelLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    pusher(ls)
    doc = ls.doc(params.text_document.uri)
    if doc is None or not doc.service.graph_ready.is_set():
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = _result_id(doc.service, ls.settings, doc.text)
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(
        items=doc_diagnostics(ls, doc), result_id=result_id
    )


def workspace_report(
    ls: ZettelLanguageServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Diagnostics of every card that is not open (open ones are pulled one by one), in
    batches of cards per read lock. A card reported before that has none now gets an empty
    report, so the client clears it."""
    pusher(ls)
    previous = {p.uri: p.value for p in params.previous_result_ids}
    sev = severities(ls.settings)
    codec = ls.workspace.position_codec
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for service in list(ls.services):
        if not service.graph_ready.is_set():
            continue
        paths = service.read(partial(_paths, service))
        for i in range(0, len(paths), WORKSPACE_BATCH):
            batch = paths[i : i + WORKSPACE_BATCH]
            found = service.read(partial(_batch, service, batch, sev))
            for path, card, problems in found:
                uri = card_uri(service.root, path)
                if ls.is_open(uri) or (not problems and uri not in previous):
                    continue
                result_id = _result_id(service, ls.settings, card.text)
                if previous.get(uri) == result_id:
                    items.append(
                        types.WorkspaceUnchangedDocumentDiagnosticReport(
                            uri=uri, version=None, result_id=result_id
                        )
                    )
                    continue
                c = Codec(codec, card.text.splitlines(keepends=True) or [""])
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri,
                        version=None,
                        result_id=result_id,
                        items=[to_diagnostic(service, p, c, sev[p.kind]) for p in problems],
                    )
                )
    return types.WorkspaceDiagnosticReport(items=items)


def _paths(service: VaultService) -> list[str]:
    return sorted(service.graph.cards)


def _batch(
    service: VaultService, paths: list[str], sev: dict[Kind, types.DiagnosticSeverity]
) -> list[tuple[str, Card, list[CardProblem]]]:
    out = []
    if Kind.UNRESOLVED in sev:
        expect_near_misses(service.graph, paths)
    for path in paths:
        card = service.graph.cards.get(path)
        if card is not None:
            out.append((path, card, problems_of(service, card, sev) if sev else []))
    return out


async def on_document_diagnostic(
    ls: ZettelLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    empty = types.RelatedFullDocumentDiagnosticReport(items=[])
    return await ls.off_loop(lambda: document_report(ls, params), empty, ls.document_requests)


async def on_workspace_diagnostic(
    ls: ZettelLanguageServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    empty = types.WorkspaceDiagnosticReport(items=[])
    return await ls.off_loop(lambda: workspace_report(ls, params), empty)


DIAGNOSTIC_OPTIONS = types.DiagnosticOptions(
    identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
)


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(on_did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(on_did_close)
    server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, DIAGNOSTIC_OPTIONS)(on_document_diagnostic)
    server.feature(types.WORKSPACE_DIAGNOSTIC)(on_workspace_diagnostic)
