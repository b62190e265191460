"""Keep a vault's index in step with its folder: startup reconcile and incremental updates.

Three phases, so that search works long before embedding finishes:

1. **Lexical** (``sync``): find new, changed, renamed and deleted cards (size + mtime, then a
   content hash), chunk them, and store their points with BM25 vectors and payload. Dense vectors
   are reused where the embedded text is unchanged (an edit re-embeds only the chunks that
   changed; a rename reuses every vector). Seconds even for a large vault.
2. **Dense** (``embed_pending``): embed the chunks still without a vector, in length-sorted
   small batches; recently edited cards jump the queue.
3. **Multilingual** (``embed_multilingual``, issue #17): the same chunks embedded by the
   multilingual model into a second vector, ``dense_ml``, for the cards in its scope (see
   :meth:`Indexer.multilingual_scope`). It runs only when the English queue is empty and yields
   to it, so lexical and English readiness do not move; the model loads only when there is work.

Here: the index folder's opening and closing, the lock, the sync's steps and the multilingual
scope. The lexical pass's reading and writing are in :mod:`~zettel_lsp.index.lexical`, the
embedding phases in :mod:`~zettel_lsp.index.embedding`, what is reported in
:mod:`~zettel_lsp.index.status`.

Crash safety: before touching the shard, a batch's paths are committed as *pending*; they are
cleared only in a state save after the shard is flushed. A restart redoes the pending paths, so a
crash at any moment leads to redone work, never to phantom or missing cards.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from zettel_lsp.index.chunker import CHUNKER_VERSION
from zettel_lsp.index.compact import CompactionPolicy, CompactResult
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.embed_queue import EmbedItem, count_tokens
from zettel_lsp.index.embedders import DEFAULT_MODEL, Embedder, EmbedderError, make_embedder
from zettel_lsp.index.embedders.use_backend import USE_MODEL
from zettel_lsp.index.embedding import Embedding
from zettel_lsp.index.folder import check_index_folder, clear_old_layout, open_store, usable_state
from zettel_lsp.index.folder_lock import FolderLock
from zettel_lsp.index.lexical import LexicalPass
from zettel_lsp.index.plan import plan
from zettel_lsp.index.state import FileState, SavedState
from zettel_lsp.index.status import Progress, ProgressFn, Status, SyncReport
from zettel_lsp.index.store import DENSE, DENSE_ML, EdgeStore
from zettel_lsp.index.store_api import StoreError, point_id
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.ollama_client import OllamaSettings

log = logging.getLogger(__name__)

LEXICAL_BATCH_FILES = 1024  # cards per shard write and flush
LEXICAL_SAVE_SECONDS = 10.0  # how often the lexical phase records finished cards (see sync)
MULTILINGUAL_MODES = ("auto", "on", "off")
LANGUAGE_VERSION = 2  # bump when payload fields or BM25 per language change: re-chunks all


@dataclass(frozen=True, slots=True)
class IndexSettings:
    model: str = DEFAULT_MODEL
    threads: int | None = None
    batch_size: int = 16
    chunk_tokens: int = 256
    max_file_bytes: int = DEFAULT_MAX_BYTES
    ignore_globs: tuple[str, ...] = ()
    qdrant_url: str | None = None  # a Qdrant server instead of the embedded shard
    qdrant_api_key: str | None = None
    title_source: TitleSource = TitleSource.AUTO  # which name is a card's title (titleSource)
    follow_external_symlinks: bool = False  # index symlinks leading out of the vault
    # the multilingual model's second vector (issue #17): "auto", "on" or "off"
    multilingual: str = "auto"
    # where Ollama is, for an 'ollama:' model (the defaults otherwise)
    ollama: OllamaSettings = field(default_factory=OllamaSettings)

    @property
    def backend(self) -> str:
        return f"qdrant:{self.qdrant_url}" if self.qdrant_url else "edge"


def chunker_id(settings: IndexSettings) -> str:
    """What the index's chunks depend on besides the text: the chunker's code and token budget,
    the title rule (the embedded text starts with the title) and the per-language payload and
    BM25; any of them changing re-chunks every card (vectors are reused where the embedded text
    is unchanged)."""
    return (
        f"{CHUNKER_VERSION}:{settings.chunk_tokens}:"
        f"title-{TitleSource(settings.title_source)}:lang-{LANGUAGE_VERSION}"
    )


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("zettel-lsp", appauthor=False))


def index_folder(vault: Path, index_dir: Path | None, cache_dir: Path | None) -> Path:
    """The index folder of ``vault``: ``index_dir`` when given, else one folder per vault in
    the user cache, keyed by the vault's absolute path."""
    if index_dir is None:
        resolved = vault.resolve()
        key = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-") or "vault"
        index_dir = (cache_dir or default_cache_dir()) / "indexes" / f"{slug[:40]}-{key}"
    return index_dir.resolve()


class Indexer:
    """Owns one vault's index folder (shard + state). One writer per folder: its lock."""

    def __init__(
        self,
        vault: Path,
        index_dir: Path | None = None,
        settings: IndexSettings | None = None,
        *,
        cache_dir: Path | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        self.vault = vault.resolve()
        self.settings = settings or IndexSettings()
        cache = cache_dir or default_cache_dir()
        self.index_dir = index_folder(self.vault, index_dir, cache)
        self.progress = progress or (lambda p: None)
        make = functools.partial(
            make_embedder,
            cache_dir=cache,
            threads=self.settings.threads,
            batch_size=self.settings.batch_size,
            max_length=self.settings.chunk_tokens,
        )
        self.embedder = make(self.settings.model, ollama=self.settings.ollama)
        self.lock = threading.RLock()  # one writer at a time (sync, dense commits)
        self._chunker_id = chunker_id(self.settings)
        self.multilingual_mode = self.settings.multilingual
        if self.multilingual_mode not in MULTILINGUAL_MODES:
            raise StoreError(
                f"multilingual must be one of {', '.join(MULTILINGUAL_MODES)}, "
                f"not {self.multilingual_mode!r}"
            )
        self.multilingual_embedder: Embedder | None = None  # the multilingual model (loads lazily)
        self.multilingual_off_reason = ""  # why it cannot be used although not switched off
        if self.multilingual_mode != "off":
            try:
                self.multilingual_embedder = make(USE_MODEL)
            except EmbedderError as exc:
                self.multilingual_off_reason = str(exc)
                log.warning("multilingual search is off: %s", exc)
        self.status = Status(self.card_states)  # counts over the cards, read lazily
        dim = self.embedder.dim
        # Take the folder's lock before creating, opening or judging anything in it: a second
        # process (even one started in the same instant on a fresh folder) fails here with
        # IndexLockedError and never mistakes a shard being created for a damaged one.
        check_index_folder(self.index_dir, self.vault)
        self._folder_lock = FolderLock(self.index_dir)
        try:
            self._open(dim)
        except BaseException:
            self._folder_lock.release()
            raise
        self.embedding = Embedding(self)
        self.closed = False
        self._check_multilingual_model()

    def _open(self, dim: int) -> None:
        """Open the store and load (or start) the bookkeeping; called under the folder lock."""
        clear_old_layout(self.index_dir)
        self.db = IndexDB(self.index_dir)
        self.saved = SavedState(self.db)
        state = self.saved.load()
        vault, backend, model = str(self.vault), self.settings.backend, self.embedder.model_id
        own = state is not None and (state.vault, state.backend) == (vault, backend)
        self.store, rebuilt = open_store(
            self.index_dir,
            state.dim if state and state.dim else dim,
            self.settings,
            vault=vault,
            model=model,
            model_dim=dim,
            chunker=self._chunker_id,
            previous_model=state.model if state is not None and own else None,
        )
        if rebuilt or (isinstance(self.store, EdgeStore) and self.store.created):
            state = None  # a new shard (the old one damaged or removed) holds nothing yet
        self.state = usable_state(
            state,
            self.store,
            vault=vault,
            backend=backend,
            model=model,
            dim=dim,
            chunker=self._chunker_id,
        )
        if self.state.bm25_avg_len > 0:
            self.store.set_bm25_avg_len(self.state.bm25_avg_len)

    # ------------------------------------------------------------------ public

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            # the models go with the index: what runs after a close (the compaction at the end
            # of ``zettel-lsp index``) does not carry them
            for model in (self.embedder, self.multilingual_embedder):
                if model is not None:
                    model.close()
            # Whatever fails here (a full disk, a state that cannot be written), the store is
            # closed and the lock released, so this process or the next can open the folder.
            with contextlib.ExitStack() as finally_:
                finally_.callback(self._folder_lock.release)
                finally_.callback(self.db.close)
                finally_.callback(self.store.close)
                self.store.flush()
                self.saved.save(self.state)

    def compaction_before_embedding(self) -> int:
        """The points to compact between a large lexical phase and its dense phase, in a local
        shard (:meth:`~zettel_lsp.index.compact.CompactionPolicy.due_before_embedding`); 0
        when that is not due. The rule of both ``zettel-lsp index`` and the language server."""
        if not isinstance(self.store, EdgeStore):
            return 0
        policy = CompactionPolicy.current()
        return policy.due_before_embedding(self.state, self.index_dir, self.dense_pending)

    def compact(
        self, *, in_child: bool = False, should_stop: Callable[[], bool] = lambda: False
    ) -> CompactResult | None:
        """Compact the local shard when enough was written since the last compaction
        (:meth:`~zettel_lsp.index.compact.CompactionPolicy.due`), under the indexer's lock with
        the state saved before and after; None when not needed, the index is remote, or
        ``should_stop`` stopped it. ``in_child``: the optimizer runs in a child process
        (:meth:`EdgeStore.compact_in_child`, for the language server) so that this process's
        interpreter lock stays free; the store is closed meanwhile (the caller keeps its readers
        away). Otherwise it runs in this process (:meth:`EdgeStore.compact_in_place`): for
        ``zettel-lsp index`` between a large lexical phase and its dense phase, so that an index
        stopped while embedding opens from indexed segments (docs/indexing.md)."""
        store = self.store
        if not isinstance(store, EdgeStore):
            return None
        with self.lock:
            points = CompactionPolicy.current().due(self.state, self.index_dir)
            if not points:
                return None
            t0 = time.perf_counter()
            self.saved.save(self.state)  # a crash meanwhile: the state before it
            if in_child:
                changed = store.compact_in_child(should_stop)
                if not changed:  # stopped
                    return None
            else:
                changed = store.compact_in_place()
            seconds = time.perf_counter() - t0
            CompactionPolicy.done(self.state)
            self.saved.save(self.state)
        log.info("compacted the index in %.1f s (%d points written before)", seconds, points)
        return CompactResult(points, seconds, changed)

    def __enter__(self) -> Indexer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def card_states(self) -> list[FileState]:
        """The card table's entries, copied at once. A sync on another thread may add cards
        meanwhile (under this indexer's lock, which readers do not take): walking the table
        itself then fails with "dictionary changed size during iteration"."""
        return list(self.state.files.values())

    def card_items(self) -> list[tuple[str, FileState]]:
        """``(path, entry)`` of every card, copied at once (see :meth:`card_states`)."""
        return list(self.state.files.items())

    def stored_ids(self, using: str = DENSE) -> Iterator[int]:
        """The point ids of the chunks whose vectors ``using`` are stored, by the state (made
        lazily, so that a caller may spread the work)."""
        for path, f in self.card_items():
            if f.dense if using == DENSE else f.multilingual:
                for i in range(f.chunks):
                    yield point_id(path, i)

    @property
    def dense_pending(self) -> int:
        return self.embedding.dense_pending

    # ------------------------------------------------------------------ multilingual scope

    @property
    def multilingual_available(self) -> bool:
        """Whether the multilingual model can be used at all (setting, package, store)."""
        return self.multilingual_embedder is not None and not self.multilingual_off_reason

    def multilingual_scope(self) -> str:
        """Which cards get multilingual vectors: ``"all"`` (``on``, or ``auto`` once a query
        was not English: :meth:`want_multilingual_all`), ``"foreign"`` (``auto``: the non-English
        cards of a vault that has some, :meth:`Status.foreign_vault`), ``"none"`` (``auto`` on
        an English vault) or ``"off"``."""
        if not self.multilingual_available:
            return "off"
        if self.multilingual_mode == "on" or self.state.multilingual_all:
            return "all"
        return "foreign" if self.status.foreign_vault() else "none"

    @property
    def multilingual_todo(self) -> int:
        """Cards in the multilingual scope still without all their vectors."""
        scope, tally = self.multilingual_scope(), self.status.tally()
        return {"all": tally.no_multilingual, "foreign": tally.no_multilingual_foreign}.get(
            scope, 0
        )

    def want_multilingual_all(self) -> bool:
        """A query was not English: from now on every card gets multilingual vectors (a
        cross-language search needs them all). True if that is new.

        Called from a search: no lock (a sync may hold it for seconds) and no state write; the
        flag is saved with the multilingual phase's first commit (or at close)."""
        if not self.multilingual_available or self.state.multilingual_all:
            return False
        self.state.multilingual_all = True
        return True

    def _check_multilingual_model(self) -> None:
        """The stored multilingual vectors are another model's: drop them."""
        emb = self.multilingual_embedder
        if (
            emb is None
            or not self.state.multilingual_model
            or self.state.multilingual_model == emb.model_id
        ):
            return
        log.info(
            "multilingual model changed (%s -> %s)", self.state.multilingual_model, emb.model_id
        )
        self.store.drop_vector(DENSE_ML)
        for f in self.state.files.values():
            f.multilingual = False
        self.state.multilingual_model = ""
        self.status.multilingual_dropped()

    # ------------------------------------------------------------------ the phases

    def sync(self, paths: Iterable[str] | None = None, *, keep_cards: bool = False) -> SyncReport:
        """Reconcile the whole vault (``paths`` None) or just these vault-relative paths.

        Returns what changed; with ``keep_cards`` also the parsed cards (for a graph). Dense
        work is queued (see :meth:`embed_pending`).
        """
        with self.lock:
            try:
                report = self._sync(None if paths is None else set(paths))
            finally:
                self.status.changed()
        if paths is None:  # cards without vectors found (or left) by it: queued later
            # outside the lock (the watcher's sync may add cards meanwhile)
            self.embedding.unqueued = any(not f.dense for f in self.card_states())
        if not keep_cards:
            report.cards_changed = []
        return report

    def embed_pending(self, should_stop: Callable[[], bool] | None = None) -> int:
        """Embed queued chunks until the queue is empty (or ``should_stop`` says so); returns
        how many. The model runs outside the lock, so a sync (an edit) never waits for a batch."""
        return self.embedding.embed_pending(None, should_stop)

    def embed_multilingual(self, should_stop: Callable[[], bool] | None = None) -> int:
        """The multilingual phase: embed the chunks of the cards in scope
        (:meth:`multilingual_scope`) that lack their multilingual vector. Stops (to be called
        again) as soon as English work is queued: that goes first. Loads the model only when
        there is work."""
        if not self.multilingual_available or self.multilingual_embedder is None:
            return 0
        return self.embedding.embed_multilingual(self.multilingual_embedder, None, should_stop)

    def _sync(self, scope: set[str] | None) -> SyncReport:
        """The lexical phase, under the lock: find the notes, plan, read, write, record."""
        report = SyncReport()
        t0 = time.perf_counter()
        state = self.state
        lex = LexicalPass(
            self.vault,
            self.settings,
            state,
            self.store,
            report,
            self.embedder.count_tokens,
            self.embedding.generation,
            self.embedding.dense_queue,
            self.embedding.multilingual_queue,
            self.status,
        )
        present = lex.on_disk(scope)
        rechunk_all = state.chunker != self._chunker_id
        todo = plan(
            state.files,
            present,
            pending=lex.uncertain,
            skipped=set(state.skipped),
            scope=scope,
            rechunk_all=rechunk_all,
        )
        report.unchanged = todo.unchanged
        report.seconds["scan"] = round(time.perf_counter() - t0, 3)
        self.progress(Progress("scan", len(present), len(present), f"{len(todo.read):,} to read"))
        t1 = time.perf_counter()
        lex.read(todo.read, set(todo.gone), rechunk_all=rechunk_all)
        report.seconds["read"] = round(time.perf_counter() - t1, 3)
        t2 = time.perf_counter()
        self._write(lex, scope)
        if lex.uncertain and not todo.read and not lex.gone:
            state.pending = []
            self.saved.save(state)
        state.chunker = self._chunker_id
        if scope is None:
            self.saved.save(state)  # the rows that changed, e.g. touched files' mtimes
        report.seconds["write"] = round(time.perf_counter() - t2, 3)
        report.cards = len(state.files)
        report.chunks = sum(f.chunks for f in state.files.values())
        report.seconds["total"] = round(time.perf_counter() - t0, 3)
        for problem in lex.scan.problems:
            log.warning("%s", problem)
        return report

    def _write(self, lex: LexicalPass, scope: set[str] | None) -> None:
        """Write what the pass read (and the deletions) in batches, then queue the chunks
        without vectors: one job sorted by token count (padding is what makes unsorted batches
        slow); an edit's job goes first, a full reconcile's bulk job last.

        Crash safety: every path this pass may write is "pending" on disk before the first
        write, and stops being so only once its batch is flushed and a state save records
        it. A save compares every card's row, so it runs when LEXICAL_SAVE_SECONDS have
        passed, not per batch (that would grow with the square of the vault). A crash redoes
        the pending cards only."""
        state, renames = self.state, lex.renames
        work = sorted(lex.cards) + sorted(lex.gone - set(renames.values()))
        if not work:
            return
        state.pending = sorted(set(work) | set(renames.values()))
        self.saved.save_pending(state.pending)
        new_dense: list[EmbedItem] = []
        last_save = time.perf_counter()
        for start in range(0, len(work), LEXICAL_BATCH_FILES):
            batch = work[start : start + LEXICAL_BATCH_FILES]
            new_dense.extend(lex.write(batch))
            self.progress(Progress("lexical", start + len(batch), len(work)))
            rest = work[start + LEXICAL_BATCH_FILES :]
            if rest and time.perf_counter() - last_save >= LEXICAL_SAVE_SECONDS:
                state.pending = sorted(set(rest) | {renames[p] for p in rest if p in renames})
                self.saved.save(state)
                last_save = time.perf_counter()
        state.pending = []
        if scope is not None:
            self.saved.save(state)
        if new_dense:
            count_tokens(new_dense, self.embedder)
            self.embedding.dense_queue.push(new_dense, first=scope is not None)
