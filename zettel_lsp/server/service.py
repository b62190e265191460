"""One vault inside the server: background start-up, live updates, and answers from what is ready.

Start-up (:mod:`zettel_lsp.server.startup`) runs in a thread of its own, in named steps that
each make more of the answers possible. Every request is answered at once from the current
:class:`Phase`; :attr:`VaultService.complete` says whether the answer is final. If another
zettel-lsp holds the index (its lock), the vault runs **read-only**: graph features work, search
uses titles and a plain text scan, and the user is told why.

Thread safety: one lock guards the vault (index reads and writes, graph, engine, phase).
Features run their index and graph steps through :meth:`VaultService.read` and never call a
model inside them; the server's own work changes what it guards through
:meth:`VaultService.locked`. Query embeddings (a model call; with an ``ollama:`` model an HTTP
request) are computed before the ranking step takes the lock
(:meth:`SearchEngine.query_vectors`), so a slow model never holds up the watcher's graph updates
or another request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.compact import spawn_compactor
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.status import SyncReport
from zettel_lsp.index.sync import index_folder
from zettel_lsp.index.watch import VaultWatcher
from zettel_lsp.search.engine import SearchEngine, SearchOptions
from zettel_lsp.search.fallback import scan_search, stored_title_search
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.titles import TitleIndex
from zettel_lsp.server.background import Threads
from zettel_lsp.server.models import Models
from zettel_lsp.server.phase import Phase
from zettel_lsp.server.progress import OperationFactory, VaultProgress
from zettel_lsp.server.read_only import ReadOnlyWatch
from zettel_lsp.server.self_tune import SelfTune
from zettel_lsp.server.settings import ServerSettings
from zettel_lsp.server.startup import StartUp
from zettel_lsp.vault import Vault

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama

__all__ = ["Phase", "SearchAnswer", "VaultService"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# background work (self-tuning) runs only while the editor is quiet: once no request came for
# this long (seconds); an editor busy without pause defers it
SELF_TUNE_QUIET = 0.3
# the longest a vault's close waits for its threads to end (seconds): each stops at its next
# step, and a model call or an index batch in flight ends well within it
CLOSE_SECONDS = 10.0

Notify = Callable[[str, str], None]  # (level "info"|"warning"|"error", message)
GraphListener = Callable[[], None]  # told after the graph changed (outside the lock; be quick)


@dataclass(slots=True)
class SearchAnswer:
    results: list[CardResult]
    complete: bool  # False while start-up is still improving the answers
    note: str  # what is missing, for the user ("" when complete)
    llm_messages: list[str] = field(default_factory=list)  # optional LLM steps that fell back
    query: Query = field(default_factory=lambda: parse_query(""))  # as parsed for the search


class VaultService:
    def __init__(
        self,
        root: Path,
        settings: ServerSettings,
        *,
        operation: OperationFactory | None = None,
        notify: Notify | None = None,
        warm_up: Callable[[VaultService], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        # the server's warm-ups (names for completion and diagnostics), run once by the
        # start-up thread after the graph and its resync (see warm_up)
        self._warm_up_fn = warm_up
        self._warmed_up = False
        self.settings = settings
        self.notify: Notify = notify or (lambda level, msg: None)
        self.progress = VaultProgress(self.root.name, operation, self._multilingual_done)
        self._lock = threading.RLock()
        self.phase = Phase.STARTING
        self.vault: Vault | None = None
        self.graph = LinkGraph()  # the current graph (also in read-only mode)
        self.titles = TitleIndex(())  # for read-only search
        # the last session's database, read-only: titles for the searches that come before
        # the index and the graph are open (dropped once either is)
        self._stored: IndexDB | None = None
        self.problems: list[str] = []
        self.reason = ""  # why read-only / failed
        # seconds of each start-up step, in order (zettel.status; docs/performance.md)
        self.startup_seconds: dict[str, float] = {}
        self.graph_ready = threading.Event()
        self.done = threading.Event()  # start-up finished (ready, read-only or failed)
        self._stop = threading.Event()
        # every thread the vault starts (start-up, models, self-tuning, reindex): joined by close
        self.threads = Threads()
        self._watcher: VaultWatcher | None = None
        self._read_only: ReadOnlyWatch | None = None  # the watcher while read-only
        self.models = Models(self.root.name, self._stop.is_set, self.threads)
        self._self_tune = SelfTune(self)
        self._last_read = 0.0  # monotonic time of the last read (see when_quiet)
        # bumped (inside the lock) whenever ``graph`` is replaced or changed
        self.graph_version = 0
        self._listeners: dict[str, GraphListener] = {}
        self._listeners_lock = threading.Lock()

    # ------------------------------------------------------------------ the vault lock

    def read(self, fn: Callable[[], T], /) -> T:
        """Run ``fn`` while the index and graph hold still (no model call inside ``fn``)."""
        self._last_read = time.monotonic()  # background work waits for a quiet moment
        with self._lock:
            return fn()

    def locked(self, fn: Callable[[], T], /) -> T:
        """:meth:`read` for the server's own work (start-up, updates, self-tuning), which may
        change what the lock guards; not counted as a request (see :meth:`when_quiet`)."""
        with self._lock:
            return fn()

    def when_quiet(self) -> bool:
        """Wait until no read came for :data:`SELF_TUNE_QUIET` seconds; True when stopping."""
        while not self._stop.is_set():
            idle = time.monotonic() - self._last_read
            if idle >= SELF_TUNE_QUIET:
                return False
            self._stop.wait(SELF_TUNE_QUIET - idle)
        return True

    def stopping(self) -> bool:
        """Whether the vault is closing (long work checks it between steps)."""
        return self._stop.is_set()

    def listen(self, key: str, fn: GraphListener) -> None:
        """Call ``fn`` after every graph change (one listener per ``key``; a second call with
        the same key replaces it). It runs on the thread that changed the graph, after the
        lock is released: it should hand work off (e.g. to the request pool) and return."""
        with self._listeners_lock:
            self._listeners[key] = fn

    def graph_changed(self) -> None:
        """Tell the listeners (call after the lock is released)."""
        with self._listeners_lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            try:
                fn()
            except Exception:
                log.exception("a graph listener failed")

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.threads.start(f"zettel-start-{self.root.name}", StartUp(self).run)

    def close(self, *, compact: bool = False) -> None:
        """Stop watching and embedding, flush and close the index, and wait (at most
        :data:`CLOSE_SECONDS`) until every thread of the vault ended: none may still be in a
        model or store call when the process exits. Safe to call twice. With ``compact`` (the
        vault is closed for good: shutdown, folder removed), start compacting the index in a
        detached process when enough was written (index/compact.py)."""
        self._stop.set()
        deadline = time.monotonic() + CLOSE_SECONDS
        self.stop_watching()
        self.stop_read_only()
        with self._lock:
            vault, self.vault = self.vault, None
            self.phase = Phase.CLOSED
            self.drop_stored()
        if vault is not None:
            vault.close()  # waits for a running index batch; a later one sees the store closed
            if compact:
                spawn_compactor(vault.indexer.index_dir, vault.indexer.state)
        left = self.threads.join(deadline)
        self.stop_watching()  # one that start-up made meanwhile
        if left:
            log.warning("%s closed with threads still running: %s", self.root.name, left)
        self.progress.end("closed")

    def open_stored(self) -> None:
        """Open the last session's database for the searches that come before the index and
        the graph are open (start-up's first step)."""
        s = self.settings
        stored = IndexDB.existing(index_folder(self.root, s.index_path, s.cache_path))
        with self._lock:
            if self.phase == Phase.STARTING and self._stored is None:
                self._stored = stored
            elif stored is not None:
                stored.close()

    def drop_stored(self) -> None:
        """Close the last session's database (call under the vault lock)."""
        if self._stored is not None:
            self._stored.close()
            self._stored = None

    def reindex(self) -> None:
        """A full reconcile now (in the background); re-open the index if it was locked."""
        with self._lock:
            restart = self.phase in (Phase.READ_ONLY, Phase.FAILED)
            if restart:
                self.phase = Phase.STARTING
                self.done.clear()
                self._stop.clear()
        if restart:
            self.stop_read_only()
            self.start()
            return
        self.threads.start(f"zettel-reindex-{self.root.name}", self._reconcile)

    def watch(self, vault: Vault) -> None:
        """Start watching the folder (start-up's ``watch`` step), unless the vault is closing."""
        if self._stop.is_set():
            return
        s = self.settings
        watcher = vault.watcher(debounce_ms=s.debounce_ms, on_sync=self._watched)
        watcher.on_embedded = self._embedded
        watcher.start()
        self._watcher = watcher
        watcher.ready.wait(5)

    def stop_watching(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    def watch_read_only(self) -> None:
        """Read-only: keep the graph and text scan current from disk, and take the index over
        once it is free (:mod:`zettel_lsp.server.read_only`)."""
        self.stop_read_only()
        self._read_only = ReadOnlyWatch(self)
        self._read_only.start()

    def stop_read_only(self) -> None:
        watcher, self._read_only = self._read_only, None
        if watcher is not None:
            watcher.stop()

    def warm_up(self) -> None:
        """The server's warm-ups, once, before "ready" (so that the first completion and the
        first diagnostics after it do not build them). They run after the resync, not beside
        it: both are Python work, and beside each other each waits for the other."""
        if self._warm_up_fn is None or self._warmed_up:
            return
        self._warmed_up = True
        self._warm_up_fn(self)

    # ------------------------------------------------------------------ answers

    @property
    def complete(self) -> bool:
        return self.phase == Phase.READY

    @property
    def dense_progress(self) -> tuple[int, int]:
        return self.progress.dense

    def status_note(self) -> str:
        if self.phase == Phase.READY:
            return ""
        if self.phase in (Phase.STARTING, Phase.SYNCING):
            return "indexing: results come from the previous index, without the link graph"
        if self.phase == Phase.GRAPH and self.vault is None and self.graph_ready.is_set():
            return "compacting the new index: results come from titles and a scan of the text"
        if self.phase == Phase.GRAPH:
            return "building the link graph: results are not graph-reranked yet"
        if self.phase == Phase.EMBEDDING:
            done, total = self.dense_progress
            return f"embedding ({done:,}/{total:,} chunks): meaning-based results are partial"
        if self.phase == Phase.READ_ONLY:
            return (
                f"read-only: {self.reason} (answers come from titles and a scan of the text, "
                "kept current from disk; the index opens here once it is free)"
            )
        return f"{self.phase.value}: {self.reason}"

    def search(
        self,
        text: str,
        options: SearchOptions,
        *,
        llm: Ollama | None = None,
        expand: bool = False,
        rerank: bool = False,
        cancel: Callable[[], bool] | None = None,
    ) -> SearchAnswer:
        """Search from what is ready. With ``llm`` and ``expand``/``rerank``, the optional
        Ollama steps run (each falls back with a message in ``SearchAnswer.llm_messages``).
        The query embedding is computed before the lock is taken."""
        query = parse_query(text)
        vault = self.vault
        if llm is not None and (expand or rerank) and vault is not None:
            from zettel_lsp.llm import search_llm

            results, messages = search_llm(
                vault.engine,
                llm,
                query,
                options,
                expand=expand,
                rerank=rerank,
                cancel=cancel,
                read=self.read,
            )
            return SearchAnswer(results, self.complete, self.status_note(), messages, query)
        stored = self._stored
        if vault is None and stored is not None and not self.graph_ready.is_set():
            # outside the vault lock: the start's own steps do not wait for these
            found = stored_title_search(stored, query, options.limit)
            return SearchAnswer(found, False, self.status_note() or "starting", query=query)
        vectors = vault.engine.query_vectors([query], options) if vault is not None else {}

        def rank() -> SearchAnswer:
            vault = self.vault
            if vault is None:
                if not self.graph_ready.is_set():
                    return SearchAnswer([], False, self.status_note() or "starting", query=query)
                found = scan_search(self.graph.cards.values(), self.titles, query, options.limit)
                return SearchAnswer(found, False, self.status_note(), query=query)
            # the engine may have been swapped (graph built) since the vectors were computed
            results = vault.engine.search(query, options, vectors=vectors)
            return SearchAnswer(results, self.complete, self.status_note(), query=query)

        return self.read(rank)

    @property
    def engine(self) -> SearchEngine | None:
        vault = self.vault
        return vault.engine if vault is not None else None

    def status(self) -> dict[str, Any]:
        def snapshot() -> dict[str, Any]:
            out: dict[str, Any] = {
                "root": str(self.root),
                "phase": self.phase.value,
                "read_only": self.phase == Phase.READ_ONLY,
                "complete": self.complete,
                "note": self.status_note(),
                "cards_in_graph": len(self.graph.cards),
                "problems": self.problems[:50],
                "startup_seconds": dict(self.startup_seconds),
            }
            if self.vault is not None:
                out.update(self.vault.status())
            return out

        return self.read(snapshot)

    # ------------------------------------------------------------------ embedding, self-tuning

    def embedding_phase(self, vault: Vault) -> None:
        """After start-up (and after a reindex): embed what the sync queued; then "ready"."""
        self.models.wait(self.progress.report)
        pending = vault.indexer.dense_pending
        with self._lock:
            self.phase = Phase.EMBEDDING if pending else Phase.READY
            self.progress.dense = (0, pending)
        if not pending:
            self._ready(vault)
            return
        self.progress.report(f"embedding {pending} chunks (lexical search works already)", 0)
        if (watcher := self._watcher) is not None:
            watcher.wake_embedder()  # its thread embeds; _embedded() ends the operation
        else:
            vault.indexer.embed_pending(should_stop=self._stop.is_set)
            self._embedded(0)
            vault.indexer.embed_multilingual(should_stop=self._stop.is_set)

    def _embedded(self, count: int) -> None:
        """The embedder ran dry (called from the watcher's embed thread)."""
        vault = self.vault
        if vault is None or vault.indexer.dense_pending:
            return
        with self._lock:
            was_embedding = self.phase == Phase.EMBEDDING
            if self.phase in (Phase.EMBEDDING, Phase.GRAPH) and self.graph_ready.is_set():
                self.phase = Phase.READY
        if was_embedding:
            self._ready(vault)
        elif count and self.phase == Phase.READY and vault.self_tune:
            # edits came in while ready: once they add up to a tenth of the vault's cards or
            # links, the weights are chosen again (checked in the thread, under the lock)
            self.self_tune()

    def _ready(self, vault: Vault) -> None:
        self.progress.end(vault.summary())
        log.info("%s", vault.summary())
        self.self_tune()

    def set_self_tune(self, on: bool) -> None:
        """The ``suggestSelfTune`` setting changed: takes effect at the next suggestion (and
        starts :meth:`self_tune` when turned on)."""
        vault = self.vault
        if vault is None:
            return
        vault.self_tune = on
        if on and self.phase == Phase.READY:
            self.self_tune()

    def self_tune(self) -> None:
        """Choose the suggestions' weights on the vault's own links, in the background
        (:mod:`zettel_lsp.server.self_tune`)."""
        self._self_tune.start()

    def foreign_query(self, vault: Vault) -> None:
        """A search was not in English (``auto``): load the multilingual model and embed every
        card with it, in the background; searches answer with what is ready meanwhile."""
        if self._stop.is_set():
            return
        log.info("a search is not in English: the multilingual phase covers every card")
        self.models.load_multilingual_in_background(vault)
        if (watcher := self._watcher) is not None:
            watcher.wake_embedder()

    def _multilingual_done(self) -> bool:
        vault = self.vault
        return vault is not None and not vault.indexer.multilingual_todo

    # ------------------------------------------------------------------ updates

    def _watched(self, report: SyncReport) -> None:
        """An update from the watcher: say what changed (each card counted once), apply it."""
        if report.new or report.changed or report.renamed or report.deleted:
            log.info("%s updated: %s", self.root.name, report.summary())
        self.apply(report)

    def apply(self, report: SyncReport) -> None:
        """An index update (from the watcher or a reindex): bring the graph in step."""
        vault = self.vault
        if vault is None or not (report.cards_changed or report.paths_removed):
            # nothing for the graph: no write lock, which would wait for whoever reads
            return
        with self._lock:
            changed = self.vault is vault and vault.apply(report)
            if changed:
                self.graph_version += 1
        if changed:
            self.graph_changed()
        if changed and (watcher := self._watcher) is not None:
            watcher.wake_embedder()

    def _reconcile(self) -> None:
        vault = self.vault
        if vault is None:
            return
        if not self.progress.running:  # else start-up is still running: report under its progress
            self.progress.begin(f"Re-indexing {self.root.name}", "scanning the folder")
        try:
            report = vault.indexer.sync(keep_cards=True)
            self.apply(report)
            log.info(
                "reindex of %s: %s, %s unchanged",
                self.root.name,
                report.summary(),
                f"{report.unchanged:,}",
            )
            self.embedding_phase(vault)
        except Exception:
            if not self._stop.is_set():
                log.exception("reindex of %s failed", self.root)
            self.progress.end("reindex failed (see the log)")
