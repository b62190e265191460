"""The zettel-lsp language server object: vaults per workspace folder, the request pool, the
client I/O helpers every feature uses, and progress operations.

The handlers live in :mod:`zettel_lsp.server.features` (one module per capability);
:func:`zettel_lsp.server.app.create_server` registers them on a :class:`ZettelLanguageServer`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from zettel_lsp import __version__
from zettel_lsp.notes.scan import is_note_path
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.rerank import RerankParams
from zettel_lsp.server.background import logged
from zettel_lsp.server.documents import Doc
from zettel_lsp.server.progress import Operation
from zettel_lsp.server.protocol import RobustProtocol
from zettel_lsp.server.service import VaultService
from zettel_lsp.server.settings import ServerSettings
from zettel_lsp.server.vault_root import vault_roots

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama

log = logging.getLogger("zettel_lsp")

T = TypeVar("T")


class ZettelProtocol(RobustProtocol):
    """:class:`RobustProtocol` with cancellation that reaches our commands.

    pygls runs ``workspace/executeCommand`` under a new internal id, so a client's
    ``$/cancelRequest`` would cancel only the outer step while the command (a streaming
    ``zettel.ask``, an LLM search) runs on: commands register an event under the request's id
    (:meth:`ZettelLanguageServer.cancel_event`) that a cancel sets. A cancel for a request
    already answered (normal while a user types) is ignored quietly.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cancel_events: dict[Any, threading.Event] = {}

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            log.warning("ignored a $/cancelRequest whose id is %r", msg_id)  # not even hashable
            return
        event = self.cancel_events.pop(msg_id, None)
        if event is not None:
            event.set()
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)


class ZettelLanguageServer(LanguageServer):
    """The zettel-lsp server: one instance per editor session."""

    protocol: ZettelProtocol

    def __init__(self) -> None:
        super().__init__("zettel-lsp", __version__, protocol_cls=ZettelProtocol)
        self.settings = ServerSettings()
        self.services: list[VaultService] = []
        self.requests = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zettel-request")
        # requests about one open document run apart, so a burst of them on a large document
        # never queues ahead of a search
        self.document_requests = ThreadPoolExecutor(
            max_workers=2, thread_name_prefix="zettel-document"
        )
        # vaults start and stop on this one thread, in the order asked (initialized, settings
        # and folder changes, shutdown), never two at once
        self.vault_tasks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zettel-vaults")
        self.settings_problems: list[str] = []
        # run once per vault in the request pool, inside its read lock, after its first graph:
        # what a first request would otherwise build (completion's names, diagnostics' index);
        # each returns what it built, for the log
        self.warm_ups: list[Callable[[VaultService], str]] = []
        self._services_lock = threading.Lock()
        self._partial_logged: set[tuple[str, str]] = set()
        self._llm: Ollama | None = None
        self._llm_lock = threading.Lock()
        self._docs: dict[str, Doc] = {}  # uri -> the open card, parsed once per text
        self._docs_lock = threading.Lock()  # one parse at a time: a burst parses a text once
        self._too_large: set[str] = set()  # uris said to be above the byte budget

    def cancel_event(self) -> threading.Event:
        """An event set when the client cancels the request being handled (see ZettelProtocol).
        Call it in the handler itself (it reads the request's id from the context)."""
        event = threading.Event()
        if (msg_id := self.protocol.msg_id) is not None:
            self.protocol.cancel_events[msg_id] = event
        return event

    def forget_cancel(self, event: threading.Event) -> None:
        events = self.protocol.cancel_events
        for key in [k for k, v in events.items() if v is event]:
            events.pop(key, None)

    def cancel_all(self) -> None:
        """At shutdown: stop every running command (a stream must not outlive stdout)."""
        for event in list(self.protocol.cancel_events.values()):
            event.set()
        self.protocol.cancel_events.clear()

    # ------------------------------------------------------------------ optional LLM

    @property
    def llm(self) -> Ollama:
        """The Ollama client for the current settings (made on first use: nothing talks to
        Ollama unless a feature that needs it is used)."""
        with self._llm_lock:
            if self._llm is None or self._llm.settings != self.settings.llm:
                from zettel_lsp.llm import Ollama

                if self._llm is not None:
                    self._llm.close()
                self._llm = Ollama(self.settings.llm)
            return self._llm

    def llm_messages(self, messages: list[str]) -> None:
        """Show an LLM fallback once (then only log it): a missing Ollama is not an emergency."""
        for m in messages:
            if self.llm.first_time(m):
                self.show("warning", f"zettel-lsp: {m}")
            else:
                log.info("%s", m)

    # ------------------------------------------------------------------ vaults

    def in_order(self, fn: Callable[[], None]) -> None:
        """Start or stop vaults on the vault thread, after what was asked before."""
        self.vault_tasks.submit(logged("starting or stopping a vault", fn))

    def start_vaults(self, roots: list[Path]) -> None:
        """Start the vaults of the client's ``roots``: each root's vault root (vault_root.py),
        none inside a vault already served."""
        served = [s.root for s in self.services]
        missing = [r for r in roots if not r.is_dir()]
        roots = vault_roots([r for r in roots if r.is_dir()], served) + missing
        settings = self.settings
        if settings.index_dir and len(roots) > 1:
            self.show("warning", "zettel-lsp: 'indexDir' applies to one vault only; ignored")
            settings = replace(settings, index_dir=None)
        for root in roots:
            if not root.is_dir():
                self.show("warning", f"zettel-lsp: workspace folder {root} is not a folder")
                continue
            service = VaultService(
                root, settings, operation=self.operation, notify=self.show, warm_up=self._warm_up
            )
            with self._services_lock:
                self.services.append(service)
            service.start()

    def _warm_up(self, service: VaultService) -> None:
        """The warm-ups of a vault, called once by its start-up thread once the graph is
        built and brought up to date (VaultService.warm_up)."""
        t0 = time.perf_counter()
        built = []
        for fn in list(self.warm_ups):
            try:
                built.append(str(service.read(partial(fn, service))))
            except Exception:
                log.exception("warming up %s failed", service.root)
        if built:
            log.info(
                "%s warmed up: %s (%.0f ms)",
                service.root.name,
                ", ".join(built),
                (time.perf_counter() - t0) * 1000,
            )

    def stop_vaults(self, roots: list[Path] | None = None, *, compact: bool = False) -> None:
        """Close the vaults of ``roots`` (all by default); ``compact``: they are closed for
        good, so their indexes may be compacted in the background (index/compact.py)."""
        with self._services_lock:
            if roots is None:
                stopping, self.services = self.services, []
            else:
                want = {r.resolve() for r in roots}
                stopping = [s for s in self.services if s.root in want]
                self.services = [s for s in self.services if s.root not in want]
        for s in stopping:
            s.close(compact=compact)

    def service_for(self, path: Path) -> VaultService | None:
        """The vault holding ``path`` (the innermost one if folders nest)."""
        inside = [s for s in list(self.services) if path == s.root or s.root in path.parents]
        return max(inside, key=lambda s: len(str(s.root)), default=None)

    def open_uris(self) -> list[str]:
        """The editor's open documents, each URI as the client sent it (pygls keys its table by
        the *unquoted* URI, so its keys are not URIs to answer with or to compare)."""
        return [d.uri for d in list(self.workspace.text_documents.values())]

    def is_open(self, uri: str) -> bool:
        """Whether the editor has ``uri`` open (however its characters are percent-encoded)."""
        return unquote(uri) in self.workspace.text_documents

    def doc(self, uri: str) -> Doc | None:
        """The card at ``uri`` with the editor's text (unsaved edits included), if it is one."""
        fs = to_fs_path(uri)
        if not fs:
            return None
        path = Path(fs)
        try:
            path = path.resolve()
        except OSError:
            return None
        service = self.service_for(path)
        if service is None:
            return None
        rel = path.relative_to(service.root).as_posix()
        if not is_note_path(rel):
            return None
        try:
            document = self.workspace.get_text_document(uri)
            text = document.source
        except (OSError, UnicodeDecodeError):
            return None
        with self._docs_lock:
            known = self._docs.get(uri)
            if known is not None and known.text is text and known.service is service:
                return known
            if self._over_budget(uri, rel, text, service.settings.max_file_bytes):
                return None
            doc = Doc(uri, service, rel, text, document.version)
            if self.is_open(uri):
                self._docs[uri] = doc
            for closed in [u for u in self._docs if not self.is_open(u)]:
                self._docs.pop(closed, None)
            return doc

    def _over_budget(self, uri: str, rel: str, text: str, max_bytes: int) -> bool:
        """A document above the byte budget of files is no card, as the indexer skips such a
        file: every request about it answers empty. Said once while it stays that large."""
        size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8", "replace"))
        if size <= max_bytes:
            self._too_large.discard(uri)
            return False
        if uri not in self._too_large:
            self._too_large.add(uri)
            log.warning(
                "%s: not read as a card: %s bytes is above the %s-byte limit (setting "
                "max_file_bytes)",
                rel,
                f"{size:,}",
                f"{max_bytes:,}",
            )
        return True

    # ------------------------------------------------------------------ client I/O

    def show(self, level: str, message: str) -> None:
        """A popup and a log line; ``level``: "error", "warning" or "info"."""
        log.log(logging.ERROR if level == "error" else logging.WARNING, "%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType[level.title()], message=message)
        )

    def operation(self, title: str, message: str) -> Operation:
        return LspOperation(self, title, message)

    def supports(self, *path: str) -> bool:
        """Whether the client capability at ``path`` is set (("window", "work_done_progress"))."""
        node: Any = self.client_capabilities
        for part in path:
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    def note_partial(self, service: VaultService, note: str) -> None:
        """Say once per vault and phase that answers are partial (logMessage, not a popup)."""
        key = (str(service.root), service.phase.value)
        if note and key not in self._partial_logged:
            self._partial_logged.add(key)
            log.info("answering from what is ready in %s: %s", service.root.name, note)

    def search_options(self, limit: int) -> SearchOptions:
        s = self.settings
        return SearchOptions(
            limit=limit,
            legs=s.legs,
            graph=s.graph and s.graph_strength > 0,
            rerank=RerankParams(strength=s.graph_strength),
        )

    def stop_requests(self) -> None:
        """At shutdown: run no request still waiting in a pool."""
        for pool in (self.requests, self.document_requests):
            pool.shutdown(wait=False, cancel_futures=True)

    async def off_loop(
        self, fn: Callable[[], T], default: T, pool: ThreadPoolExecutor | None = None
    ) -> T:
        """Run ``fn`` in the request pool (or ``pool``). A ``JsonRpcException`` it raises is the
        answer (an error the client shows); any other exception is logged and answered with
        ``default``."""

        def guarded() -> T:
            try:
                return fn()
            except JsonRpcException:
                raise
            except Exception:
                log.exception("request failed")
                return default

        return await asyncio.get_running_loop().run_in_executor(pool or self.requests, guarded)


class LspOperation:
    """``$/progress`` for one operation, with a fresh token (nothing if the client can't)."""

    def __init__(self, ls: ZettelLanguageServer, title: str, message: str) -> None:
        self._ls = ls
        self.token: str | None = None
        if not ls.supports("window", "work_done_progress"):
            log.info("%s: %s", title, message)
            return
        token = f"zettel-{uuid.uuid4()}"
        try:
            ls.work_done_progress.create(token).result(timeout=10)
        except Exception as exc:  # noqa: BLE001 - progress is a nicety; work goes on
            log.info("progress not shown (%s): %s", exc, title)
            return
        self.token = token
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=title, message=message, percentage=0),
        )

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self._ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str) -> None:
        if self.token is not None:
            token, self.token = self.token, None
            self._ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))


def workspace_roots(ls: ZettelLanguageServer, *, fallback: bool = True) -> list[Path]:
    """The client's workspace folders; ``fallback``: its root when it sent no folders."""
    roots = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    if not roots and fallback and ls.workspace.root_path:
        roots = [ls.workspace.root_path]
    return [Path(r).resolve() for r in roots if r]
