"""The pygls language server: vaults per workspace folder, requests answered off the event loop.

Every request runs in a small thread pool (``await loop.run_in_executor``), so the event loop
keeps reading messages (cancellations, edits) while a search or a hover is computed, and no
handler's exception reaches the client as anything worse than an empty answer and a log line.
Long work (indexing, embedding, reindex) reports ``$/progress`` with a fresh token each time.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from zettel_lsp import __version__
from zettel_lsp.index.embedder import configure_ollama
from zettel_lsp.notes.scan import is_note_path
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.rerank import RerankParams
from zettel_lsp.server import features
from zettel_lsp.server.features import Doc
from zettel_lsp.server.logging_bridge import LspLogHandler
from zettel_lsp.server.protocol import RobustProtocol, serve
from zettel_lsp.server.service import Operation, VaultService
from zettel_lsp.server.settings import ServerSettings, parse_settings

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama

log = logging.getLogger("zettel_lsp")

T = TypeVar("T")

# the zettel.* API the editor plugins use (docs/server.md); each is registered below
COMMANDS = (
    "zettel.search",
    "zettel.related",
    "zettel.suggestLinks",
    "zettel.reindex",
    "zettel.status",
    "zettel.ask",
)


class ZettelProtocol(RobustProtocol):
    """pygls' protocol, validated (protocol.py: one answer per request, broken framing ends the
    process), with cancellation that reaches our commands.

    pygls runs ``workspace/executeCommand`` through a generator that starts the command under a
    new internal id, so a client's ``$/cancelRequest`` cancels only the outer step while the
    command (a streaming ``zettel.ask``, an LLM search) runs on. Commands register a
    :class:`threading.Event` under the request's id (:meth:`ZettelLanguageServer.cancel_event`);
    a cancel sets it. A cancel for a request already answered is normal while a user types:
    it is ignored quietly instead of logging a warning each time.
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

    def __init__(self) -> None:
        super().__init__("zettel-lsp", __version__, max_workers=4, protocol_cls=ZettelProtocol)
        self.settings = ServerSettings()
        self.services: list[VaultService] = []
        self.requests = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zettel-request")
        self._settings_problems: list[str] = []
        self._services_lock = threading.Lock()
        self._partial_logged: set[tuple[str, str]] = set()
        self._llm: Ollama | None = None
        self._llm_lock = threading.Lock()

    def cancel_event(self) -> threading.Event:
        """An event set when the client cancels the request being handled (see ZettelProtocol).
        Call it in the handler itself (it reads the request's id from the context)."""
        event = threading.Event()
        protocol = self.protocol
        msg_id = protocol.msg_id
        if isinstance(protocol, ZettelProtocol) and msg_id is not None:
            protocol.cancel_events[msg_id] = event
        return event

    def forget_cancel(self, event: threading.Event) -> None:
        protocol = self.protocol
        if isinstance(protocol, ZettelProtocol):
            for key in [k for k, v in protocol.cancel_events.items() if v is event]:
                protocol.cancel_events.pop(key, None)

    def cancel_all(self) -> None:
        """At shutdown: stop every running command (a stream must not outlive stdout)."""
        protocol = self.protocol
        if isinstance(protocol, ZettelProtocol):
            for event in list(protocol.cancel_events.values()):
                event.set()
            protocol.cancel_events.clear()

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

    def start_vaults(self, roots: list[Path]) -> None:
        settings = self.settings
        llm = settings.llm
        configure_ollama(llm.host, connect_timeout=llm.connect_timeout, timeout=llm.timeout)
        if settings.index_dir and len(roots) > 1:
            self.show("warning", "zettel-lsp: 'indexDir' applies to one vault only; ignored")
            settings = replace(settings, index_dir=None)
        for root in roots:
            if not root.is_dir():
                self.show("warning", f"zettel-lsp: workspace folder {root} is not a folder")
                continue
            service = VaultService(root, settings, operation=self.operation, notify=self.show)
            with self._services_lock:
                self.services.append(service)
            service.start()

    def stop_vaults(self, roots: list[Path] | None = None) -> None:
        with self._services_lock:
            if roots is None:
                stopping, self.services = self.services, []
            else:
                want = {r.resolve() for r in roots}
                stopping = [s for s in self.services if s.root in want]
                self.services = [s for s in self.services if s.root not in want]
        for s in stopping:
            s.close()

    def service_for(self, path: Path) -> VaultService | None:
        """The vault holding ``path`` (the innermost one if folders nest)."""
        best: VaultService | None = None
        for s in list(self.services):
            inside = path == s.root or s.root in path.parents
            if inside and (best is None or len(str(s.root)) > len(str(best.root))):
                best = s
        return best

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
        return Doc(uri, service, rel, text, document.version)

    # ------------------------------------------------------------------ client I/O

    def show(self, level: str, message: str) -> None:
        kinds = {
            "error": types.MessageType.Error,
            "warning": types.MessageType.Warning,
            "info": types.MessageType.Info,
        }
        log.log(logging.ERROR if level == "error" else logging.WARNING, "%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=kinds.get(level, types.MessageType.Info), message=message)
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

    async def off_loop(self, fn: Callable[[], T], default: T) -> T:
        """Run ``fn`` in the request pool; any exception is logged and answered with ``default``."""

        def guarded() -> T:
            try:
                return fn()
            except Exception:
                log.exception("request failed")
                return default

        return await asyncio.get_running_loop().run_in_executor(self.requests, guarded)


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


def _folders(ls: ZettelLanguageServer) -> list[Path]:
    roots = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    if not roots and ls.workspace.root_path:
        roots = [ls.workspace.root_path]
    return [Path(r).resolve() for r in roots if r]


def _arg(args: tuple[Any, ...], name: str, index: int, default: Any = None) -> Any:
    """Command arguments come as one object ``{name: value}`` or positionally."""
    if args and isinstance(args[0], dict):
        return args[0].get(name, default)
    return args[index] if len(args) > index else default


def create_server() -> ZettelLanguageServer:
    server = ZettelLanguageServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ZettelLanguageServer, params: types.InitializeParams) -> None:
        ls.settings, ls._settings_problems = parse_settings(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ZettelLanguageServer, params: types.InitializedParams) -> None:
        roots = _folders(ls)
        log.info(
            "zettel-lsp %s ready; workspace folders: %s",
            __version__,
            ", ".join(str(r) for r in roots) or "none",
        )
        if ls._settings_problems:
            ls.show("warning", "zettel-lsp settings: " + "; ".join(ls._settings_problems))
        ls.start_vaults(roots)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(
        ls: ZettelLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        new, problems = parse_settings(params.settings, ls.settings)
        if problems:
            ls.show("warning", "zettel-lsp settings: " + "; ".join(problems))
        restart = new.index_key() != ls.settings.index_key()
        ls.settings = new
        if restart:
            roots = [s.root for s in ls.services]
            log.info("index settings changed: re-opening %d vault(s)", len(roots))

            def reopen() -> None:
                ls.stop_vaults()
                ls.start_vaults(roots)

            threading.Thread(target=reopen, name="zettel-reopen", daemon=True).start()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(ls: ZettelLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = [Path(p).resolve() for f in params.event.removed if (p := to_fs_path(f.uri))]
        added = [Path(p).resolve() for f in params.event.added if (p := to_fs_path(f.uri))]

        def change() -> None:
            ls.stop_vaults(removed)
            ls.start_vaults(added)

        threading.Thread(target=change, name="zettel-folders", daemon=True).start()

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ZettelLanguageServer, *args: Any) -> None:
        # Flush and close every shard before answering. Off the event loop: a vault still
        # starting may be waiting for the client's answer to a progress request.
        ls.cancel_all()
        await asyncio.get_running_loop().run_in_executor(None, ls.stop_vaults)
        ls.requests.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: ZettelLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        limit = ls.settings.symbol_limit

        def run() -> list[types.SymbolInformation]:
            per_vault = []
            for s in list(ls.services):
                # no LLM steps here: editors send this on every keystroke
                rows, answer = features.search_rows(s, params.query, ls.search_options(limit))
                if not answer.complete:
                    ls.note_partial(s, answer.note)
                per_vault.append(rows)
            return features.symbols(features.merge_rows(per_vault, limit))

        return await ls.off_loop(run, [])

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: ZettelLanguageServer, params: types.HoverParams) -> types.Hover | None:
        def run() -> types.Hover | None:
            doc = ls.doc(params.text_document.uri)
            if doc is None:
                return None
            with doc.service.lock:
                return features.hover(
                    doc,
                    params.position,
                    ls.workspace.position_codec,
                    ls.settings.hover_limit,
                    ls.search_options(ls.settings.hover_limit),
                )

        return await ls.off_loop(run, None)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
            ],
            resolve_provider=True,
        ),
    )
    async def code_action(
        ls: ZettelLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        def run() -> list[types.CodeAction]:
            doc = ls.doc(params.text_document.uri)
            if doc is None:
                return []
            codec = ls.workspace.position_codec
            changes = ls.supports("workspace", "workspace_edit", "document_changes")
            with doc.service.lock:
                actions = features.mention_actions(
                    doc, params.range, codec, document_changes=changes
                )
            if doc.service.engine is None:
                return actions
            heading = ls.settings.related_heading
            resolve = ls.supports("text_document", "code_action", "resolve_support")
            if resolve and "edit" in (
                ls.client_capabilities.text_document.code_action.resolve_support.properties  # type: ignore[union-attr]
            ):
                actions.append(features.related_action_stub(doc, heading))
            else:
                action = features.related_action(
                    doc, heading, ls.settings.related_limit, codec, document_changes=changes
                )
                if action is not None:
                    actions.append(action)
            return actions

        return await ls.off_loop(run, [])

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(
        ls: ZettelLanguageServer, action: types.CodeAction
    ) -> types.CodeAction:
        def run() -> types.CodeAction:
            data = action.data if isinstance(action.data, dict) else {}
            if data.get("action") != features.ADD_RELATED:
                return action
            doc = ls.doc(str(data.get("uri", "")))
            if doc is None:
                return action
            changes = ls.supports("workspace", "workspace_edit", "document_changes")
            edit = features.related_links_edit(
                doc,
                ls.settings.related_heading,
                ls.settings.related_limit,
                ls.workspace.position_codec,
            )
            action.edit = features.workspace_edit(doc, [edit] if edit else [], changes)
            if edit is None:
                action.title += " (nothing to add)"
            return action

        return await ls.off_loop(run, action)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: ZettelLanguageServer, params: types.DefinitionParams
    ) -> types.Location | None:
        def run() -> types.Location | None:
            doc = ls.doc(params.text_document.uri)
            if doc is None:
                return None
            with doc.service.lock:
                return features.definition(doc, params.position, ls.workspace.position_codec)

        return await ls.off_loop(run, None)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(
        ls: ZettelLanguageServer, params: types.ReferenceParams
    ) -> list[types.Location]:
        def run() -> list[types.Location]:
            doc = ls.doc(params.text_document.uri)
            if doc is None:
                return []
            with doc.service.lock:
                return features.references(
                    doc,
                    params.position,
                    ls.workspace.position_codec,
                    params.context.include_declaration,
                )

        return await ls.off_loop(run, [])

    # ------------------------------------------------------------------ commands

    @server.command("zettel.search")
    async def cmd_search(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
        query = str(_arg(args, "query", 0, "") or "")
        limit = _int(_arg(args, "limit", 1), ls.settings.symbol_limit)
        use_llm = _arg(args, "llm", 2, True) is not False
        here_uri = _arg(args, "uri", 3)
        cancelled = ls.cancel_event()

        def run() -> dict[str, Any]:
            llm_settings = ls.settings.llm
            expand = use_llm and llm_settings.expand_query
            rerank = use_llm and llm_settings.llm_rerank
            llm = ls.llm if expand or rerank else None
            here = ls.doc(str(here_uri)) if here_uri else None
            per_vault: list[list[dict[str, Any]]] = []
            notes: list[str] = []
            messages: list[str] = []
            complete = True
            for s in list(ls.services):
                rows, answer = features.search_rows(
                    s,
                    query,
                    ls.search_options(limit),
                    llm=llm,
                    expand=expand,
                    rerank=rerank,
                    cancel=cancelled.is_set,
                    here=here if here is not None and here.service is s else None,
                )
                per_vault.append(rows)
                complete = complete and answer.complete
                messages.extend(m for m in answer.llm_messages if m not in messages)
                if answer.note:
                    notes.append(f"{s.root.name}: {answer.note}")
            ls.llm_messages(messages)
            return {
                "query": query,
                "results": features.merge_rows(per_vault, limit),
                "complete": complete,
                "note": "; ".join(notes + messages),
            }

        empty: dict[str, Any] = {"query": query, "results": [], "complete": False, "note": ""}
        try:
            return await ls.off_loop(run, empty)
        finally:
            cancelled.set()  # a superseded search stops its LLM steps
            ls.forget_cancel(cancelled)

    @server.command("zettel.ask")
    async def cmd_ask(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
        """Answer a question from the notes with Ollama: {question, token?, uri?} (``uri`` picks
        the vault when several are open). With a ``token``, the answer streams as
        ``zettel/askDelta`` {token, delta} notifications. A cancel stops the stream; the reply
        is then pygls' RequestCancelled error."""
        question = str(_arg(args, "question", 0, "") or "")
        token = _arg(args, "token", 1)
        cancelled = ls.cancel_event()

        def run() -> dict[str, Any]:
            from zettel_lsp.llm import ask

            services = list(ls.services)
            if not question.strip() or not services:
                return {"question": question, "answer": "", "sources": [], "fallback": None}
            service = services[0]
            if len(services) > 1 and (doc_uri := _arg(args, "uri", 2)):
                fs = to_fs_path(str(doc_uri))
                service = (ls.service_for(Path(fs).resolve()) if fs else None) or service
            engine = service.engine
            if engine is None:
                return {
                    "question": question,
                    "answer": "",
                    "sources": [],
                    "fallback": service.status_note() or "the index is not open",
                }

            def delta(text: str) -> None:
                if token is not None:
                    ls.protocol.notify("zettel/askDelta", {"token": token, "delta": text})

            result = ask(
                engine,
                ls.llm,
                question,
                on_delta=delta,
                cancel=cancelled.is_set,
                options=ls.search_options(ls.settings.llm.max_context_chunks),
                guard=service.lock,
            )
            if result.fallback:
                ls.llm_messages([result.fallback])
            out = result.as_dict()
            for src in out.get("sources", []):
                src["uri"] = features.card_uri(service.root, str(src["path"]))
            out["vault"] = str(service.root)
            return out

        empty: dict[str, Any] = {"question": question, "answer": "", "sources": []}
        try:
            return await ls.off_loop(run, empty)
        finally:
            cancelled.set()
            ls.forget_cancel(cancelled)

    @server.command("zettel.related")
    async def cmd_related(ls: ZettelLanguageServer, *args: Any) -> list[dict[str, Any]]:
        uri = str(_arg(args, "uri", 0, "") or "")
        pos = _position_arg(_arg(args, "position", 1))
        limit = _int(_arg(args, "limit", 2), ls.settings.hover_limit)

        def run() -> list[dict[str, Any]]:
            doc = ls.doc(uri)
            if doc is None:
                return []
            with doc.service.lock:
                return features.related_json(
                    doc, pos, ls.workspace.position_codec, limit, ls.search_options(limit)
                )

        return await ls.off_loop(run, [])

    @server.command("zettel.suggestLinks")
    async def cmd_suggest(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any] | None:
        uri = str(_arg(args, "uri", 0, "") or "")
        limit = _int(_arg(args, "limit", 1), ls.settings.related_limit)

        def run() -> dict[str, Any] | None:
            doc = ls.doc(uri)
            if doc is None:
                return None
            return features.suggest_json(doc, limit, ls.workspace.position_codec)

        return await ls.off_loop(run, None)

    @server.command("zettel.reindex")
    def cmd_reindex(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
        for s in list(ls.services):
            s.reindex()
        return {"started": [str(s.root) for s in ls.services]}

    @server.command("zettel.status")
    async def cmd_status(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
        with_llm = _arg(args, "ollama", 0, False) is True

        def run() -> dict[str, Any]:
            out: dict[str, Any] = {
                "version": __version__,
                "vaults": [s.status() for s in list(ls.services)],
            }
            # Ollama's state: asked for, or when a feature uses it (a quick, cached request)
            s = ls.settings
            if with_llm or s.llm.expand_query or s.llm.llm_rerank or s.model.startswith("ollama:"):
                out["ollama"] = ls.llm.status()
            return out

        return await ls.off_loop(run, {"version": __version__, "vaults": []})

    return server


def _position_arg(raw: Any) -> types.Position | None:
    """A command's ``position`` argument ({line, character}, unsigned 32-bit integers); None
    when absent. Anything else is the client's mistake: -32602, not an exception in a thread."""
    if raw is None:
        return None
    if isinstance(raw, dict) and "line" in raw:
        line, character = raw["line"], raw.get("character", 0)
        if all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31
            for v in (line, character)
        ):
            return types.Position(line=line, character=character)
    raise JsonRpcInvalidParams(
        f"position must be {{line, character}} with integers in [0, 2**31), got {raw!r:.200}"
    )


def _int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return min(value, 200)
    return default


def serve_stdio() -> None:
    """Serve on stdin/stdout. Returns after ``shutdown`` + ``exit``; otherwise (``exit`` without
    ``shutdown``, end of input, broken framing) raises ``SystemExit`` with a non-zero code, so
    an editor sees that the server died and can restart it."""
    server = create_server()
    handler = LspLogHandler(server)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        code = serve(
            server, functools.partial(os.read, sys.stdin.buffer.fileno()), sys.stdout.buffer
        )
    finally:
        log.removeHandler(handler)
        server.cancel_all()
        server.requests.shutdown(wait=False, cancel_futures=True)
        server.stop_vaults()
    if code:
        raise SystemExit(code)
