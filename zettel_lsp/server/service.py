"""One vault inside the server: background start-up, live updates, and answers from what is ready.

Start-up runs in a thread of its own, in steps that each make more of the answers possible:

1. **open** the index folder: from here the previous session's index answers searches (lexical
   legs at once; dense once the model has loaded in a side thread);
2. **sync** the folder into the index (new, changed, deleted cards; lexical phase);
3. **graph**: parse every card into the link graph (titles leg, graph rerank, hover, links);
4. **watch** the folder, and **embed** what the sync queued (dense phase).

Every request is answered at once from the current step; :attr:`complete` says whether the
answer is final. If another zettel-lsp holds the index (its lock), the vault runs **read-only**:
graph features work, search uses titles and a plain text scan, and the user is told why.

Thread safety: one lock guards the vault (index reads and writes, graph, engine, phase).
Only this class changes what it guards; features run their index and graph steps through
:meth:`VaultService.read` and never call a model inside them.
Query embeddings (a model call; with an ``ollama:`` model an HTTP request) are computed before
the ranking step takes the lock (:meth:`SearchEngine.query_vectors`), so a slow model never
holds up the watcher's graph updates or another request.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.compact import spawn_compactor
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.embedders import EmbedderError
from zettel_lsp.index.status import Progress, SyncReport
from zettel_lsp.index.store_api import IndexLockedError, StoreError
from zettel_lsp.index.sync import index_folder
from zettel_lsp.index.watch import VaultWatcher
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.engine import SearchEngine, SearchOptions, title_index
from zettel_lsp.search.fallback import scan_search, stored_title_search
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.titles import TitleIndex
from zettel_lsp.server.settings import ServerSettings
from zettel_lsp.vault import Vault

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama

log = logging.getLogger(__name__)

T = TypeVar("T")

REPORT_EVERY_SECONDS = 0.25
# above this many cards the server does not choose the suggestions' weights itself (it builds
# a second link graph for it: +260-300 MB for a while at 13k cards); `zettel-lsp index` does
SELF_TUNE_MAX_CARDS = 20_000
# it works only while the editor is quiet: a card at a time, once no request came for this
# long (seconds); an editor busy without pause defers it, and the stored or default weights serve
SELF_TUNE_QUIET = 0.3


class Phase(StrEnum):
    STARTING = "starting"  # the last session's titles only (open_stored)
    SYNCING = "syncing"  # index open (previous content), reconciling the folder
    GRAPH = "graph"  # index current, parsing the link graph
    EMBEDDING = "embedding"  # everything but some vectors
    READY = "ready"
    READ_ONLY = "read-only"  # index locked by another server: graph + text scan
    FAILED = "failed"  # the index could not be opened at all: graph + text scan
    CLOSED = "closed"


class Operation(Protocol):
    """One long operation shown to the user (LSP work-done progress)."""

    def report(self, message: str, percentage: int | None = None) -> None: ...
    def end(self, message: str) -> None: ...


OperationFactory = Callable[[str, str], Operation]  # (title, first message) -> begun operation
Notify = Callable[[str, str], None]  # (level "info"|"warning"|"error", message)
GraphListener = Callable[[], None]  # told after the graph changed (outside the lock; be quick)


class _NoOperation:
    def report(self, message: str, percentage: int | None = None) -> None:
        pass

    def end(self, message: str) -> None:
        pass


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
        # start-up thread after the graph and its resync (see _warm_up)
        self._warm_up_fn = warm_up
        self._warmed_up = False
        self.settings = settings
        self._operation = operation or (lambda title, msg: _NoOperation())
        self._notify = notify or (lambda level, msg: None)
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
        self.dense_progress: tuple[int, int] = (0, 0)
        # seconds of each start-up step, in order (zettel.status; docs/performance.md)
        self.startup_seconds: dict[str, float] = {}
        self.graph_ready = threading.Event()
        self.done = threading.Event()  # start-up finished (ready, read-only or failed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: VaultWatcher | None = None
        self._op: Operation | None = None
        self._last_report = 0.0
        self._warm: threading.Thread | None = None
        self._ml_loading = threading.Lock()  # one multilingual model load at a time
        self._self_tuning = threading.Lock()  # one calibration at a time (self_tune)
        self._self_tune_skipped = False  # the vault is over SELF_TUNE_MAX_CARDS (logged)
        self._last_read = 0.0  # monotonic time of the last read (see _when_quiet)
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

    def _read_quietly(self, fn: Callable[[], T], /) -> T:
        """:meth:`read` for background work that yields to requests (not counted as one)."""
        with self._lock:
            return fn()

    def _when_quiet(self) -> bool:
        """Wait until no read came for :data:`SELF_TUNE_QUIET` seconds; True when stopping."""
        while not self._stop.is_set():
            idle = time.monotonic() - self._last_read
            if idle >= SELF_TUNE_QUIET:
                return False
            self._stop.wait(SELF_TUNE_QUIET - idle)
        return True

    def listen(self, key: str, fn: GraphListener) -> None:
        """Call ``fn`` after every graph change (one listener per ``key``; a second call with
        the same key replaces it). It runs on the thread that changed the graph, after the
        lock is released: it should hand work off (e.g. to the request pool) and return."""
        with self._listeners_lock:
            self._listeners[key] = fn

    def _graph_changed(self) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            try:
                fn()
            except Exception:
                log.exception("a graph listener failed")

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"zettel-start-{self.root.name}", daemon=True
        )
        self._thread.start()

    def close(self, *, compact: bool = False) -> None:
        """Stop watching and embedding, flush and close the index. Safe to call twice. With
        ``compact`` (the vault is closed for good: shutdown, folder removed), start compacting
        the index in a detached process when enough was written (index/compact.py)."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.stop()
        with self._lock:
            vault, self.vault = self.vault, None
            self.phase = Phase.CLOSED
            self._drop_stored()
        if vault is not None:
            vault.close()  # waits for a running index batch; a later one sees the store closed
            if compact:
                spawn_compactor(vault.indexer.index_dir, vault.indexer.state)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self._end_op("closed")

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

    def _drop_stored(self) -> None:
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
            self.start()
            return
        threading.Thread(target=self._reconcile, name="zettel-reindex", daemon=True).start()

    # ------------------------------------------------------------------ answers

    @property
    def complete(self) -> bool:
        return self.phase == Phase.READY

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
            return f"embedding ({done}/{total} chunks): meaning-based results are partial"
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

    # ------------------------------------------------------------------ start-up

    def _run(self) -> None:
        self._op = self._operation(f"Indexing {self.root.name}", "opening the index")
        try:
            self._start_up()
        except Exception as exc:
            if self._stop.is_set():
                return  # closed while starting: the store went away under us
            log.exception("start-up of %s failed", self.root)
            self._release_index()
            self._fail(Phase.FAILED, f"the index could not be built: {exc}")
        finally:
            self.done.set()

    def _release_index(self) -> None:
        """After a failed start-up: stop the watcher and close the index, so that its folder
        lock is free again (for 'zettel.reindex', another window, or the CLI)."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        with self._lock:
            vault, self.vault = self.vault, None
        if vault is not None:
            try:
                vault.close()
            except Exception:  # closing is best effort; the lock goes regardless
                log.exception("closing the index of %s after a failure", self.root)

    def _step(self, name: str, t0: float) -> float:
        """Record start-up step ``name`` as taking from ``t0`` until now; returns now."""
        now = time.perf_counter()
        self.startup_seconds[name] = round(now - t0, 3)
        return now

    def _start_up(self) -> None:
        s = self.settings
        t = time.perf_counter()
        self.open_stored()
        try:
            vault = Vault(
                self.root,
                s.index_path,
                s.index_settings(),
                cache_dir=s.cache_path,
                progress=self._on_progress,
                lexical_until_model_loads=True,
            )
        except IndexLockedError as exc:
            self._fail(Phase.READ_ONLY, str(exc))
            return
        except (StoreError, EmbedderError, OSError) as exc:
            self._fail(Phase.FAILED, str(exc))
            return
        if self._stop.is_set():
            vault.close()
            return
        vault.self_tune = s.suggest_self_tune
        with self._lock:
            self.vault = vault
            self.phase = Phase.SYNCING
            self._drop_stored()
        t = self._step("open", t)
        vault.on_foreign_query = lambda: self._foreign_query(vault)
        self._warm = threading.Thread(target=self._load_model, args=(vault,), daemon=True)
        self._warm.start()
        report = vault.indexer.sync()
        t = self._step("sync", t)
        self._report(f"{report.cards} cards ({report.summary()}); building the link graph")
        if self._stop.is_set():
            return
        with self._lock:
            self.phase = Phase.GRAPH
        graph, engine, problems = vault.load_graph()  # parsing: no lock
        with self._lock:
            vault.graph, vault.engine = graph, engine
            self.graph, self.problems = graph, problems
            self.graph_version += 1
        t = self._step("graph", t)
        # the first edit would build the mention automata under the lock: build them now
        threading.Thread(target=graph.prepare_mentions, name="mentions", daemon=True).start()
        # the graph lives as long as the vault: later collections skip its objects
        gc.freeze()
        self.graph_ready.set()
        self._graph_changed()
        t = self._step("settle", t)
        if self._stop.is_set():
            return
        if not self._compact_before_embedding(vault):
            return  # closed meanwhile
        t = self._step("compact", t)
        if s.watch:
            self._watcher = vault.watcher(debounce_ms=s.debounce_ms, on_sync=self._watched)
            self._watcher.on_embedded = self._embedded
            self._watcher.start()
            self._watcher.ready.wait(5)
            t = self._step("watch", t)
            # what changed while the graph was parsed (the watcher was not looking yet)
            self._apply(vault.indexer.sync(keep_cards=True))
            t = self._step("resync", t)
        self._warm_up()
        t = self._step("warm-up", t)
        self._wait_for_model()
        self._step("model (waited for)", t)
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in self.startup_seconds.items())
        log.info("start-up of %s: %s", self.root.name, steps)
        self._embedding_phase(vault)

    def _compact_before_embedding(self, vault: Vault) -> bool:
        """After a first lexical phase big enough (``compaction_before_embedding``), compact
        the shard before embedding, as ``zettel-lsp index`` does: a server stopped while
        embedding then reopens from indexed segments instead of rebuilding the BM25 index of
        every point. The optimizer runs in a child process; meanwhile the index is detached and
        requests are answered from titles and a text scan (as when read-only). False when the
        vault was closed meanwhile."""
        ix = vault.indexer
        points = ix.compaction_before_embedding()
        if not points:
            return True
        with self._lock:
            if self.vault is not vault:
                return False  # closed meanwhile
            self.vault = None
        self._report(
            f"compacting the new index ({points:,} points) before embedding, so that a restart "
            "opens it fast; titles and text are searched meanwhile"
        )
        try:
            done = ix.compact(in_child=True, should_stop=self._stop.is_set)
        except Exception:  # only a faster reopen is lost: the index is open again, embed on
            log.exception("%s: compacting the new index failed; embedding goes on", self.root)
            done = None
        with self._lock:
            closed = self._stop.is_set()
            if not closed:
                self.vault = vault
        if closed:
            vault.close()  # the service closed while it was detached: nobody else will
            return False
        if done is not None:
            log.info(
                "%s: compacted the new index (%d points) in %.1f s before embedding",
                self.root.name,
                done.points,
                done.seconds,
            )
        return True

    def _warm_up(self) -> None:
        """The server's warm-ups, once, before "ready" (so that the first completion and the
        first diagnostics after it do not build them). They run after the resync, not beside
        it: both are Python work, and beside each other each waits for the other."""
        if self._warm_up_fn is None or self._warmed_up:
            return
        self._warmed_up = True
        self._warm_up_fn(self)

    def _wait_for_model(self) -> None:
        if self._warm is not None:
            self._report("loading the embedding model")
            self._warm.join()  # "ready" means the dense leg answers too

    def _embedding_phase(self, vault: Vault) -> None:
        self._wait_for_model()
        pending = vault.indexer.dense_pending
        with self._lock:
            self.phase = Phase.EMBEDDING if pending else Phase.READY
            self.dense_progress = (0, pending)
        if not pending:
            self._ready(vault)
            return
        self._report(f"embedding {pending} chunks (lexical search works already)", 0)
        if self._watcher is not None:
            self._watcher.wake_embedder()  # its thread embeds; _embedded() ends the operation
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
        self._end_op(vault.summary())
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
        """In a thread of its own, with its own ``$/progress``: choose the related-card
        suggestions' weights on the vault's own links if :meth:`Vault.calibration_due`. It
        yields to the editor (a card at a time, after :data:`SELF_TUNE_QUIET` seconds without
        a request); suggestions use the stored or default weights until it is done."""
        threading.Thread(
            target=self._calibrate, name=f"zettel-self-tune-{self.root.name}", daemon=True
        ).start()

    def _calibrate(self) -> None:
        vault = self.vault
        if vault is None or not self._self_tuning.acquire(blocking=False):
            return
        try:
            if not vault.self_tune:
                return
            cards = self._read_quietly(lambda: len(vault.graph.cards))
            if cards > SELF_TUNE_MAX_CARDS:  # before calibration_due: it walks every link
                if self._self_tune_skipped:
                    return
                self._self_tune_skipped = True  # said once a session, not after every edit
                log.info(
                    "%s: %d cards; the suggestions keep %s (the server chooses them on vaults "
                    "of at most %d cards; `zettel-lsp suggest` does it for any vault)",
                    self.root.name,
                    cards,
                    "the weights chosen before" if vault.calibration else "the default weights",
                    SELF_TUNE_MAX_CARDS,
                )
                return
            if not self._read_quietly(vault.calibration_due) or self._stop.is_set():
                return
            op = self._operation(
                f"Link suggestions for {self.root.name}",
                "choosing the weights on this vault's own links",
            )
            last = [0.0]

            def progress(done: int, total: int) -> None:
                now = time.monotonic()
                if now - last[0] >= REPORT_EVERY_SECONDS or done >= total:
                    last[0] = now
                    op.report(f"{done}/{total} cards", int(100 * done / total) if total else None)

            try:
                made = vault.calibrate(
                    read=self._read_quietly, progress=progress, should_stop=self._when_quiet
                )
            except Exception:
                if not self._stop.is_set():  # else: the vault closed under it
                    log.exception("%s: choosing the suggestions' weights failed", self.root.name)
                    op.end("failed (see the log); the default weights serve")
                    return
                made = None
            if made is None:
                op.end(
                    "stopped"
                    if self._stop.is_set()
                    else "too few links to learn from: the default weights serve"
                )
                return
            log.info(
                "%s: suggestion weights chosen on %d of its links in %.0f s (Recall@10 on "
                "them %.3f, default %.3f)",
                self.root.name,
                made.pairs,
                made.seconds,
                made.recall,
                made.default_recall,
            )
            op.end(
                f"weights chosen on {made.pairs} of its links (they find "
                f"{made.recall:.0%} of them in the top 10, the default {made.default_recall:.0%})"
            )
        finally:
            self._self_tuning.release()

    def _warm_store(self, vault: Vault) -> None:
        """Once the model loaded and before "ready" (in the model's thread, while the start-up
        thread syncs and builds the graph): read the stored vectors a slice at a time
        (:meth:`Vault.warm_store`), so that the first searches after "ready" answer as fast as
        the later ones, and no search after "ready" waits for it."""
        t0 = time.perf_counter()
        try:
            n = vault.warm_store(should_stop=self._stop.is_set)
        except Exception as exc:  # noqa: BLE001 - only a speed-up: searches work without it
            log.warning("%s: reading the stored vectors ahead failed (%s)", self.root.name, exc)
            return
        seconds = time.perf_counter() - t0
        log.info("%s: %d stored vectors read ahead (%.1f s)", self.root.name, n, seconds)

    def _load_model(self, vault: Vault) -> None:
        try:
            vault.load_model()
        except Exception as exc:  # noqa: BLE001 - lexical search still works
            log.warning("the embedding model did not load (%s); search stays lexical", exc)
        if vault.ml_status()[0]:  # the index has multilingual vectors: queries will need it
            self._load_ml_model(vault)
        if vault.model_loaded:  # else no dense search will read the vectors
            self._warm_store(vault)

    def _load_ml_model(self, vault: Vault) -> None:
        if not self._ml_loading.acquire(blocking=False):
            return  # another thread is loading it
        try:
            vault.load_ml_model()
        except Exception as exc:  # noqa: BLE001 - the other legs still work
            log.warning("the multilingual model did not load (%s); searching without it", exc)
        finally:
            self._ml_loading.release()

    def _foreign_query(self, vault: Vault) -> None:
        """A search was not in English (``auto``): load the multilingual model and embed every
        card with it, in the background; searches answer with what is ready meanwhile."""
        if self._stop.is_set():
            return
        log.info("a search is not in English: the multilingual phase covers every card")
        threading.Thread(target=self._load_ml_model, args=(vault,), daemon=True).start()
        if self._watcher is not None:
            self._watcher.wake_embedder()

    def _fail(self, phase: Phase, reason: str) -> None:
        """No index: keep answering from the graph and a text scan, and tell the user."""
        with self._lock:
            self.phase = Phase.GRAPH  # the final phase once the cards are read
            self.reason = reason
        if phase == Phase.READ_ONLY:
            message = (
                f"zettel-lsp: {reason}. This window answers read-only: links, backlinks, hover "
                "and search by titles and plain text. Run 'zettel.reindex' once the other "
                "window is closed."
            )
        else:
            message = f"zettel-lsp: {reason}. Search falls back to titles and plain text."
        self._notify("warning" if phase == Phase.READ_ONLY else "error", message)
        self._report("reading the notes for links and titles")
        s = self.settings
        cards, problems = load_vault(
            self.root,
            s.ignore,
            s.max_file_bytes,
            title_source=s.title_source,
            follow_external_symlinks=s.follow_external_symlinks,
        )
        graph = LinkGraph.build(cards)
        titles = title_index(graph)
        with self._lock:
            self.graph, self.titles, self.problems = graph, titles, problems
            self.phase = phase
            self.graph_version += 1
            self._drop_stored()
        self.graph_ready.set()
        self._graph_changed()
        self._warm_up()
        self._end_op(f"{self.root.name}: {len(graph.cards)} cards ({phase.value})")

    # ------------------------------------------------------------------ updates

    def _watched(self, report: SyncReport) -> None:
        """An update from the watcher: say what changed (each card counted once), apply it."""
        if report.new or report.changed or report.renamed or report.deleted:
            log.info("%s updated: %s", self.root.name, report.summary())
        self._apply(report)

    def _apply(self, report: SyncReport) -> None:
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
            self._graph_changed()
        if changed and self._watcher is not None:
            self._watcher.wake_embedder()

    def _reconcile(self) -> None:
        vault = self.vault
        if vault is None:
            return
        if self._op is None:  # else start-up is still running: report under its progress
            self._op = self._operation(f"Re-indexing {self.root.name}", "scanning the folder")
        try:
            report = vault.indexer.sync(keep_cards=True)
            self._apply(report)
            log.info(
                "reindex of %s: %s, %s unchanged",
                self.root.name,
                report.summary(),
                f"{report.unchanged:,}",
            )
            self._embedding_phase(vault)
        except Exception:
            if not self._stop.is_set():
                log.exception("reindex of %s failed", self.root)
            self._end_op("reindex failed (see the log)")

    # ------------------------------------------------------------------ progress

    def _on_progress(self, p: Progress) -> None:
        if p.phase == "dense":
            self.dense_progress = (p.done, p.total)  # one tuple, replaced whole
        now = time.monotonic()
        final = p.total and p.done >= p.total
        if p.phase == "multilingual":
            # its own operation: it runs after "ready", in the background
            if self._op is None and not final:
                self._op = self._operation(
                    f"Multilingual search for {self.root.name}", "embedding with the second model"
                )
            if final and self.vault is not None and not self.vault.indexer.ml_todo:
                self._end_op(f"{self.root.name}: multilingual search ready")
                return
        if not final and now - self._last_report < REPORT_EVERY_SECONDS:
            return
        self._last_report = now
        pct = int(100 * p.done / p.total) if p.total else None
        label = {
            "scan": "scanned",
            "lexical": "indexed",
            "dense": "embedded",
            "multilingual": "embedded (multilingual)",
        }.get(p.phase, p.phase)
        self._report(f"{label} {p.done}/{p.total}" + (f" ({p.detail})" if p.detail else ""), pct)

    def _report(self, message: str, percentage: int | None = None) -> None:
        op = self._op
        if op is not None:
            op.report(message, percentage)

    def _end_op(self, message: str) -> None:
        op, self._op = self._op, None
        if op is not None:
            op.end(message)
