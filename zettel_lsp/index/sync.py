"""Keep a vault's index in step with its folder: startup reconcile and incremental updates.

Two phases, so that search works long before embedding finishes:

1. **Lexical** (``sync``): find new, changed, renamed and deleted cards (size + mtime, then a
   content hash), chunk them, and store their points with BM25 vectors and payload. Dense vectors
   are reused where the embedded text is unchanged (an edit re-embeds only the chunks that
   changed; a rename reuses every vector). Seconds even for a large vault.
2. **Dense** (``embed_pending``): embed the chunks still without a vector, in length-sorted
   small batches; recently edited cards jump the queue.
3. **Multilingual** (``embed_multilingual``, issue #17): the same chunks embedded by the
   multilingual model into a second vector, ``dense_ml``, for the cards in its scope (see
   :meth:`Indexer.in_ml_scope`). It runs only when the English queue is empty and yields to it,
   so lexical and English readiness do not move; the model loads only when there is work.

Crash safety: before touching the shard, a batch's paths are written to the state as *pending*;
the state is saved only after the shard is flushed. A restart redoes pending paths and deletes
points of paths the state does not know (checked against the shard's own path facet), so a
crash at any moment leads to redone work, never to phantom or missing cards.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from zettel_lsp.index.chunker import CHUNKER_VERSION, Chunk, chunk_cards
from zettel_lsp.index.compact import CompactionPolicy, CompactResult
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.embed_queue import EmbedItem, EmbedQueue, count_tokens
from zettel_lsp.index.embedders import DEFAULT_MODEL, Embedder, EmbedderError, make_embedder
from zettel_lsp.index.embedders.use_backend import USE_MODEL
from zettel_lsp.index.folder import check_index_folder, clear_old_layout, open_local_store
from zettel_lsp.index.folder_lock import FolderLock
from zettel_lsp.index.plan import match_renames, plan
from zettel_lsp.index.state import FileState, IndexState, SavedState, text_sha256
from zettel_lsp.index.store import DENSE, DENSE_ML, STORE_LAYOUT, EdgeStore
from zettel_lsp.index.store_api import (
    ChunkPoint,
    StoreError,
    VectorStore,
    chunk_payload,
    point_id,
    text_hash,
)
from zettel_lsp.notes.language import EN, card_language
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES, ReadResult, ReadStatus, read_note
from zettel_lsp.notes.scan import (
    ScanReport,
    external_link_problem,
    external_target,
    is_ignored,
    is_note_path,
    iter_note_paths,
)
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.ollama_client import OllamaSettings

log = logging.getLogger(__name__)

LEXICAL_BATCH_FILES = 1024  # cards per shard write and flush
LEXICAL_SAVE_SECONDS = 10.0  # how often the lexical phase records finished cards (see sync)
# how often the dense phase flushes and records finished cards (a crash redoes what was
# embedded since), and the share of its time those saves may take at most: a save writes the
# whole state (0.3-0.4 s at 100k cards). Until 2026-11-29 5 s and 1/20: about 4% of the dense
# phase at 100k went to saves (docs/performance.md, twelfth pass)
DENSE_SAVE_SECONDS = 15.0
DENSE_SAVE_SHARE = 0.01
MULTILINGUAL_MODES = ("auto", "on", "off")
# ``auto`` embeds the non-English cards when they are at least this many and this share
AUTO_CARDS = 20
AUTO_SHARE = 0.02
# cards read and chunked per lock hold when a dense or multilingual queue fills
ML_QUEUE_CARDS = 256
LANGUAGE_VERSION = 1  # bump when payload fields or BM25 per language change: re-chunks all


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


@dataclass(slots=True)
class Progress:
    phase: str  # "scan", "lexical", "dense", "multilingual"
    done: int
    total: int
    detail: str = ""


ProgressFn = Callable[[Progress], None]


@dataclass(frozen=True, slots=True)
class Tally:
    """Counts over every card of the state, taken in one pass (see :meth:`Indexer.tally`)."""

    chunks: int = 0
    dense: int = 0  # cards with all their vectors
    ml: int = 0  # cards with all their multilingual vectors
    ml_foreign: int = 0  # of them, not English
    no_ml: int = 0  # cards without all their multilingual vectors
    no_ml_foreign: int = 0  # of them, not English


@dataclass(slots=True)
class SyncReport:
    cards: int = 0
    chunks: int = 0
    indexed: int = 0  # cards (re)chunked and stored: new + changed + renamed + re-chunked
    unchanged: int = 0
    deleted: int = 0
    renamed: int = 0
    new: int = 0  # cards not in the index before (a rename is not new)
    changed: int = 0  # cards whose text changed
    reused_vectors: int = 0
    embedded: int = 0  # chunks embedded by embed_pending
    embedded_ml: int = 0  # chunks embedded by embed_multilingual
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    cards_changed: list[Card] = field(default_factory=list)  # parsed cards, for the graph
    paths_removed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """'3 new, 1 changed, 89 renamed, 2 deleted' (counts that are 0 left out), or
        'no changes'. Each card is counted once: a renamed card is neither new nor deleted."""
        parts = [
            f"{n:,} {what}"
            for n, what in (
                (self.new, "new"),
                (self.changed, "changed"),
                (self.renamed, "renamed"),
                (self.deleted, "deleted"),
            )
            if n
        ]
        return ", ".join(parts) or "no changes"


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


def default_index_dir(vault: Path, cache_dir: Path | None = None) -> Path:
    """One folder per vault in the user cache, keyed by the vault's absolute path."""
    resolved = str(vault.resolve())
    key = hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", vault.resolve().name).strip("-") or "vault"
    return (cache_dir or default_cache_dir()) / "indexes" / f"{slug[:40]}-{key}"


class Indexer:
    """Owns one vault's index folder (shard + state). One writer per folder, enforced by Edge."""

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
        self.index_dir = (index_dir or default_index_dir(self.vault, cache)).resolve()
        self.progress = progress or (lambda p: None)
        self.embedder = make_embedder(
            self.settings.model,
            cache_dir=cache,
            threads=self.settings.threads,
            batch_size=self.settings.batch_size,
            max_length=self.settings.chunk_tokens,
            ollama=self.settings.ollama,
        )
        self._lock = threading.RLock()  # one writer at a time (sync, dense commits)
        # chunk boundaries depend on the code and on the budget, and the embedded text starts
        # with the card's title: any of them changing re-chunks every card (vectors are reused
        # where the embedded text is unchanged); so do the per-language payload and BM25
        self._chunker_id = chunker_id(self.settings)
        self.ml_mode = self.settings.multilingual
        if self.ml_mode not in MULTILINGUAL_MODES:
            raise StoreError(
                f"multilingual must be one of {', '.join(MULTILINGUAL_MODES)}, not {self.ml_mode!r}"
            )
        self.ml_embedder: Embedder | None = None  # the multilingual model (loads lazily)
        self.ml_off_reason = ""
        if self.ml_mode == "off":
            self.ml_off_reason = "multilingual is off"
        else:
            try:
                self.ml_embedder = make_embedder(
                    USE_MODEL,
                    cache_dir=cache,
                    threads=self.settings.threads,
                    batch_size=self.settings.batch_size,
                    max_length=self.settings.chunk_tokens,
                )
            except EmbedderError as exc:
                self.ml_off_reason = str(exc)
                log.warning("multilingual search is off: %s", exc)
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
        self._generation: dict[str, int] = {}
        self.dense_queue = EmbedQueue()
        # cards without vectors that a full sync found but no job holds yet: queued by the
        # next embed_pending (the embedding thread), not by the sync (see _queue_missing_dense)
        self._unqueued = False
        self.ml_queue = EmbedQueue()
        self._languages: dict[str, int] | None = None  # language -> cards (cached)
        self._closed = False
        self.embed_seconds = 0.0  # time inside the model (for throughput figures)
        self.ml_embed_seconds = 0.0
        self._check_ml_model()

    def _open(self, dim: int) -> None:
        """Open the store and load (or start) the bookkeeping; called under the folder lock."""
        clear_old_layout(self.index_dir)
        self.db = IndexDB(self.index_dir)
        self.saved = SavedState(self.db)
        state = self.saved.load()
        self.store: VectorStore = self._open_store(state.dim if state and state.dim else dim, state)
        if self._store_rebuilt or (isinstance(self.store, EdgeStore) and self.store.created):
            state = None  # a new shard (the old one damaged or removed) holds nothing yet
        if (
            state is None
            or state.vault != str(self.vault)
            or state.backend != self.settings.backend
        ):
            # No (usable) bookkeeping: never trust the store's content; start clean.
            created = isinstance(self.store, EdgeStore) and self.store.created
            state = IndexState(
                str(self.vault),
                self.embedder.model_id,
                self._chunker_id,
                dim=dim,
                backend=self.settings.backend,
                store_layout=STORE_LAYOUT if created else 1,
            )
            if not created:  # a new shard is empty, with the vector of ``dim``
                stale = list(self.store.paths())
                if stale:
                    self.store.delete_paths(stale)
                self.store.reset_dense(dim)
        elif state.dim != dim or state.model != self.embedder.model_id:
            log.info(
                "embedding model changed (%s -> %s): re-embedding, lexical search keeps working",
                state.model,
                self.embedder.model_id,
            )
            if not self.store.reset_dense(dim):
                state.files.clear()  # the store had to start again: re-index everything
            for f in state.files.values():
                f.dense = False
            state.model, state.dim = self.embedder.model_id, dim
        self.state = state
        self._ml_presence: tuple[bool, bool] | None = None  # see ml_presence
        self._state_version = 0  # bumped when cards or their flags change (see tally)
        self._tally: tuple[int, Tally] | None = None
        if state.bm25_avg_len > 0:
            self.store.set_bm25_avg_len(state.bm25_avg_len)

    def _open_store(self, dim: int, own: IndexState | None) -> VectorStore:
        self._store_rebuilt = False
        if not self.settings.qdrant_url:
            store, self._store_rebuilt = open_local_store(self.index_dir, dim)
            return store
        from zettel_lsp.index.remote_store import (
            RemoteStore,
            VaultIdentity,
            collection_name,
            this_host,
        )

        # The collection records whose index it is; the model this writer's own state says it
        # stored there may differ from the current one (a model change: re-embedded in place)
        if own is not None and (
            own.vault != str(self.vault) or own.backend != self.settings.backend
        ):
            own = None
        return RemoteStore.connect(
            self.settings.qdrant_url,
            self.settings.qdrant_api_key,
            collection_name(self.index_dir),
            dim,
            100.0,
            identity=VaultIdentity(
                str(self.vault),
                self.embedder.model_id,
                self.embedder.dim,
                self._chunker_id,
                host=this_host(),
            ),
            previous_model=own.model if own is not None else None,
        )

    # ------------------------------------------------------------------ public

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            # Whatever fails here (a full disk, a state that cannot be written), the store is
            # closed and the lock released, so this process or the next can open the folder.
            try:
                self.store.flush()
                self.saved.save(self.state)
            finally:
                try:
                    self.store.close()
                finally:
                    try:
                        self.db.close()
                    finally:
                        self._folder_lock.release()

    def compaction_before_embedding(self) -> int:
        """The points to compact between a large lexical phase and its dense phase, in a local
        shard (:meth:`~zettel_lsp.index.compact.CompactionPolicy.due_before_embedding`); 0
        when that is not due. The rule of both ``zettel-lsp index`` and the language server."""
        if not isinstance(self.store, EdgeStore):
            return 0
        policy = CompactionPolicy.current()
        return policy.due_before_embedding(self.state, self.index_dir, self.dense_pending)

    def compact_in_child(
        self, should_stop: Callable[[], bool] = lambda: False
    ) -> CompactResult | None:
        """:meth:`compact_now` with the optimizer in a child process
        (:meth:`EdgeStore.compact_in_child`): this process's interpreter lock stays free, and
        the store is closed meanwhile (the caller keeps its readers away). None when not
        needed, or stopped by ``should_stop``."""
        return self._compact(lambda store: store.compact_in_child(should_stop) or None)

    def compact_now(self) -> CompactResult | None:
        """Compact the local shard in this process when enough was written since the last
        compaction (:meth:`~zettel_lsp.index.compact.CompactionPolicy.due`); None when not
        needed (or the index is remote). Holds the interpreter lock while the optimizer runs: for
        ``zettel-lsp index``, which calls it between a large lexical phase and its dense phase,
        so that an index stopped while embedding (closed, killed) opens from indexed segments,
        Edge rebuilding only what was embedded since (docs/indexing.md)."""
        return self._compact(lambda store: store.compact_in_place())

    def _compact(self, run: Callable[[EdgeStore], bool | None]) -> CompactResult | None:
        """``run`` compacts the store (returns whether segments were rewritten, None when it
        was stopped), under the indexer's lock, with the state saved before and after."""
        store = self.store
        if not isinstance(store, EdgeStore):
            return None
        with self._lock:
            points = CompactionPolicy.current().due(self.state, self.index_dir)
            if not points:
                return None
            t0 = time.perf_counter()
            self.saved.save(self.state)  # a crash meanwhile: the state before it
            changed = run(store)
            if changed is None:
                return None
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

    @property
    def dense_pending(self) -> int:
        """Chunks waiting for vectors: queued, and (until the embedding thread queues them)
        those of the cards a sync found without vectors."""
        queued = len(self.dense_queue)
        if not self._unqueued:
            return queued
        left = self.dense_queue.left
        return queued + sum(f.chunks for p, f in self.card_items() if not f.dense and p not in left)

    @property
    def ml_pending(self) -> int:
        """Chunks queued for the multilingual model (cards in scope not yet queued excluded)."""
        return len(self.ml_queue)

    # ------------------------------------------------------------------ languages

    def languages(self) -> dict[str, int]:
        """The vault's languages with their numbers of cards, most cards first. Read on every
        search and status, never under the lock: a sync holds it for minutes in a large
        vault's lexical phase, and a search then must answer with what is indexed (issue
        #18: a status request waiting here held up every request of the server)."""
        langs = self._languages
        if langs is not None:
            return langs
        counts: dict[str, int] = {}
        for f in self.card_states():
            counts[f.lang] = counts.get(f.lang, 0) + 1
        langs = self._languages = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
        return langs

    def main_languages(self) -> tuple[str, ...]:
        """The languages of at least :data:`AUTO_SHARE` of the cards: those a query is also
        read in by the lexical legs. A few misread cards (3 German film titles among
        HotpotQA's 994 documents, 13 of vaultofknowledge's 2,726 cards) do not change every
        query's terms."""
        langs = self.languages()
        floor = AUTO_SHARE * sum(langs.values())
        return tuple(lang for lang, n in langs.items() if n >= floor)

    @property
    def ml_available(self) -> bool:
        """Whether the multilingual model can be used at all (setting, package, store)."""
        return self.ml_embedder is not None and not self.ml_off_reason

    def ml_foreign_vault(self) -> bool:
        """``auto``'s test: at least :data:`AUTO_CARDS` cards and :data:`AUTO_SHARE` of the
        vault are not in English (a few misread cards in an English vault do not load a
        second model; the first query in another language starts it anyway)."""
        langs = self.languages()
        total = sum(langs.values())
        foreign = total - langs.get(EN, 0)
        return foreign >= max(AUTO_CARDS, AUTO_SHARE * total)

    def in_ml_scope(self, f: FileState) -> bool:
        """Whether the card gets multilingual vectors: ``on``: every card; ``auto``: every card
        once a query was not English (:meth:`want_ml_all`), before that the non-English cards
        of a vault where they are many (:meth:`ml_foreign_vault`); ``off``: none."""
        if not self.ml_available:
            return False
        if self.ml_mode == "on" or self.state.ml_all:
            return True
        return f.lang != EN and self.ml_foreign_vault()

    def want_ml_all(self) -> bool:
        """A query was not English: from now on every card gets multilingual vectors (a
        cross-language search needs them all). True if that is new.

        Called from a search: no lock (a sync may hold it for seconds) and no state write; the
        flag is saved with the multilingual phase's first commit (or at close)."""
        if not self.ml_available or self.state.ml_all:
            return False
        self.state.ml_all = True
        return True

    def _state_changed(self) -> None:
        self._state_version += 1

    def tally(self) -> Tally:
        """Counts over every card (chunks, cards with vectors, ...), kept until the cards or
        their flags change: ``zettel.status`` asks for them on every call, and five passes
        over the cards took 10-13 ms at 100k cards (the benchmarks poll every 50 ms). Not used
        for :meth:`ml_presence`, which searches ask after every edit."""
        version = self._state_version
        cached = self._tally
        if cached is not None and cached[0] == version:
            return cached[1]
        # sums over generators: 10.5 ms at 100k cards, one loop with branches 25 ms
        files = self.card_states()
        with_ml = [f for f in files if f.ml]
        ml_foreign = sum(f.lang != EN for f in with_ml)
        foreign = sum(f.lang != EN for f in files)
        tally = Tally(
            chunks=sum(f.chunks for f in files),
            dense=sum(f.dense for f in files),
            ml=len(with_ml),
            ml_foreign=ml_foreign,
            no_ml=len(files) - len(with_ml),
            no_ml_foreign=foreign - ml_foreign,
        )
        self._tally = (version, tally)  # a change meanwhile bumped the version: taken again
        return tally

    @property
    def ml_cards(self) -> tuple[int, int]:
        """(cards with multilingual vectors, of them not English)."""
        t = self.tally()
        return t.ml, t.ml_foreign

    @property
    def ml_todo(self) -> int:
        """Cards in the multilingual scope still without all their vectors."""
        if not self.ml_available:
            return 0
        # in_ml_scope per card, with its vault-wide tests asked once (zettel.status reads this)
        if self.ml_mode == "on" or self.state.ml_all:
            return self.tally().no_ml
        if not self.ml_foreign_vault():
            return 0
        return self.tally().no_ml_foreign

    def _check_ml_model(self) -> None:
        """The stored multilingual vectors are another model's: drop them."""
        emb = self.ml_embedder
        if emb is None or not self.state.ml_model or self.state.ml_model == emb.model_id:
            return
        log.info("multilingual model changed (%s -> %s)", self.state.ml_model, emb.model_id)
        self.store.drop_vector(DENSE_ML)
        for f in self.state.files.values():
            f.ml = False
        self.state.ml_model = ""
        self._ml_presence = (False, False)
        self._state_changed()

    def sync(self, paths: Iterable[str] | None = None, *, keep_cards: bool = False) -> SyncReport:
        """Reconcile the whole vault (``paths`` None) or just these vault-relative paths.

        Returns what changed; with ``keep_cards`` also the parsed cards (for a graph). Dense
        work is queued (see :meth:`embed_pending`).
        """
        with self._lock:
            try:
                report = self._sync(None if paths is None else set(paths))
            finally:
                self._state_changed()
        if paths is None:  # cards without vectors found (or left) by it: queued later
            # outside the lock (the watcher's sync may add cards meanwhile)
            self._unqueued = any(not f.dense for f in self.card_states())
        if not keep_cards:
            report.cards_changed = []
        return report

    def embed_pending(
        self, max_seconds: float | None = None, should_stop: Callable[[], bool] | None = None
    ) -> int:
        """Embed queued chunks until the queue is empty (or time/stop says so). Returns count.

        The model runs outside the lock, so a sync (an edit) never waits for a batch."""
        if self._unqueued:
            self._unqueued = False
            if not self._queue_missing_dense(should_stop):
                self._unqueued = True  # stopped while queueing: the next call queues them
                return 0
        return self._embed_jobs(self.embedder, DENSE, self.dense_queue, max_seconds, should_stop)

    def embed_multilingual(
        self, max_seconds: float | None = None, should_stop: Callable[[], bool] | None = None
    ) -> int:
        """The multilingual phase: embed the chunks of the cards in scope (:meth:`in_ml_scope`)
        that lack their multilingual vector. Stops (to be called again) as soon as English
        work is queued: that goes first. Loads the model only when there is work."""
        if not self.ml_available or self.ml_embedder is None:
            return 0
        done = 0
        started = time.monotonic()
        while not (self.dense_queue.jobs or self._unqueued):
            if should_stop is not None and should_stop():
                break
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                break
            if not self.ml_queue.jobs and not self._queue_missing_ml(should_stop):
                break
            left = None if max_seconds is None else max_seconds - (time.monotonic() - started)

            def stop() -> bool:
                return (
                    bool(self.dense_queue.jobs)
                    or self._unqueued
                    or (should_stop is not None and should_stop())
                )

            done += self._embed_jobs(self.ml_embedder, DENSE_ML, self.ml_queue, left, stop)
        return done

    def _embed_jobs(
        self,
        embedder: Embedder,
        using: str,
        queue: EmbedQueue,
        max_seconds: float | None,
        should_stop: Callable[[], bool] | None,
    ) -> int:
        done = 0
        started = last_save = time.monotonic()
        every = DENSE_SAVE_SECONDS
        finished: set[str] = set()
        phase = "dense" if using == DENSE else "multilingual"
        while True:
            if should_stop is not None and should_stop():
                break
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                break
            with self._lock:
                batch = queue.next_batch(embedder, self._live)
            if not batch:
                break
            t_embed = time.perf_counter()
            vectors = embedder.embed([it.text for it in batch])
            if using == DENSE:
                self.embed_seconds += time.perf_counter() - t_embed
            else:
                self.ml_embed_seconds += time.perf_counter() - t_embed
            with self._lock:
                if self._closed:
                    break
                live = [i for i, it in enumerate(batch) if self._live(it)]
                self.store.set_dense(
                    [batch[i].point for i in live], [vectors[i] for i in live], using=using
                )
                self.state.uncompacted += len(live)
                finished.update(batch[i].path for i in live if queue.embedded(batch[i].path))
                done += len(live)
                now = time.monotonic()
                if now - last_save >= every or not queue.jobs:
                    self._commit_dense(finished, using)
                    finished = set()
                    last_save = time.monotonic()
                    # a save writes the whole state: at most DENSE_SAVE_SHARE of the time
                    every = max(DENSE_SAVE_SECONDS, (last_save - now) / DENSE_SAVE_SHARE)
            self.progress(Progress(phase, done, done + len(queue)))
        with self._lock:
            if not self._closed:
                self._commit_dense(finished, using)
        return done

    # ------------------------------------------------------------------ lexical phase

    def _sync(self, scope: set[str] | None) -> SyncReport:
        report = SyncReport()
        t0 = time.perf_counter()
        state = self.state
        scan = ScanReport()
        if scope is None:
            disk_paths = list(
                iter_note_paths(
                    self.vault,
                    self.settings.ignore_globs,
                    scan,
                    follow_external_symlinks=self.settings.follow_external_symlinks,
                )
            )
            for rel, target in scan.external_links.items():  # said once, like other skips
                self._skip(rel, _outside(self.vault / rel, target), report)
            for shown, message in scan.bad_names.items():
                self._skip(shown, ReadResult(ReadStatus.UNREADABLE, problems=[message]), report)
        else:
            disk_paths = [
                p
                for p in scope
                if is_note_path(p) and not is_ignored(p, self.settings.ignore_globs)
            ]
        present: dict[str, tuple[int, int]] = {}
        root = str(self.vault)  # os.path, not pathlib: 100k stats per full sync
        for rel in disk_paths:
            if scope is not None and not self.settings.follow_external_symlinks:
                leads_to = external_target(self.vault, rel)
                if leads_to is not None:  # the full scan does not list these
                    self._skip(rel, _outside(self.vault / rel, leads_to), report)
                    continue
            try:
                st = os.stat(os.path.join(root, rel))
            except FileNotFoundError:
                if os.path.islink(self.vault / rel):  # dangling symlink: say so, once
                    self._skip(rel, read_note(self.vault / rel), report)
                continue
            except OSError:  # a symlink loop, permissions: say why, once
                self._skip(rel, read_note(self.vault / rel), report)
                continue
            if stat.S_ISREG(st.st_mode):
                present[rel] = (st.st_size, st.st_mtime_ns)
            else:  # a FIFO, socket or device named like a note: say so, once
                self._skip(rel, read_note(self.vault / rel), report)
        pending = set(state.pending)
        rechunk_all = state.chunker != self._chunker_id
        todo = plan(
            state.files,
            present,
            pending=pending,
            skipped=set(state.skipped),
            scope=scope,
            rechunk_all=rechunk_all,
        )
        candidates, gone = todo.read, set(todo.gone)
        report.unchanged = todo.unchanged
        report.seconds["scan"] = round(time.perf_counter() - t0, 3)
        self.progress(Progress("scan", len(present), len(present), f"{len(candidates)} to read"))

        # read, hash, parse the candidates
        t1 = time.perf_counter()
        cards: dict[str, tuple[Card, str, int, int]] = {}
        for rel in candidates:
            res = read_note(self.vault / rel, self.settings.max_file_bytes)
            if not res.ok:
                self._skip(rel, res, report)
                if rel in state.files:
                    gone.add(rel)
                continue
            state.skipped.pop(rel, None)
            sha = text_sha256(res.text)
            old = state.files.get(rel)
            if old is not None and old.sha256 == sha and rel not in pending and not rechunk_all:
                old.size, old.mtime_ns = res.size, res.mtime_ns  # touched, not changed
                report.unchanged += 1
                continue
            card = self._parse(rel, res)
            for problem in res.problems + card.problems:
                log.warning("%s", problem)
            cards[rel] = (card, sha, res.size, res.mtime_ns)
        for rel in [p for p in gone if p in state.skipped and p not in state.files]:
            if rel not in report.skipped:  # gone; still skipped (FIFO, link...): keep the reason
                state.skipped.pop(rel, None)
            gone.discard(rel)

        # new path -> old path: a vanished card whose content hash reappears
        renames = match_renames(gone, state.files, {rel: c[1] for rel, c in cards.items()})
        report.seconds["read"] = round(time.perf_counter() - t1, 3)

        # chunk, then write in batches
        t2 = time.perf_counter()
        order = sorted(cards)
        new_dense: list[EmbedItem] = []
        work = order + sorted(gone - set(renames.values()))
        total = len(work)
        done = 0
        # Crash safety: every path this pass may write is "pending" on disk before the first
        # write, and stops being so only once its batch is flushed and a state save records
        # it. The state is written whole (18 MB at 100k cards, ~0.5 s), so it is saved when
        # LEXICAL_SAVE_SECONDS have passed, not per batch (per batch, the saves grew with the
        # square of the vault: a minute at 100k cards). A crash redoes the pending cards only.
        if work:
            state.pending = sorted(set(work) | set(renames.values()))
            self.saved.save_pending(state.pending)
        last_save = time.perf_counter()
        for start in range(0, max(total, 1), LEXICAL_BATCH_FILES):
            batch = work[start : start + LEXICAL_BATCH_FILES]
            if not batch:
                break
            new_dense.extend(self._write_batch(batch, cards, renames, gone, report, pending))
            done += len(batch)
            self.progress(Progress("lexical", done, total))
            rest = work[start + LEXICAL_BATCH_FILES :]
            if rest and time.perf_counter() - last_save >= LEXICAL_SAVE_SECONDS:
                state.pending = sorted(set(rest) | {renames[p] for p in rest if p in renames})
                self.saved.save(state)
                last_save = time.perf_counter()
        if work:
            state.pending = []
            if scope is not None:
                self.saved.save(state)
        if new_dense:
            # one job sorted by token count (padding is what makes unsorted batches slow); an
            # edit's job goes first, a full reconcile's bulk job last
            count_tokens(new_dense, self.embedder)
            self.dense_queue.push(new_dense, first=scope is not None)
        if pending and not candidates and not gone:
            state.pending = []
            self.saved.save(state)
        state.chunker = self._chunker_id
        if scope is None:
            self.saved.save(state)  # the rows that changed, e.g. touched files' mtimes
        report.seconds["write"] = round(time.perf_counter() - t2, 3)
        report.cards = len(state.files)
        report.chunks = sum(f.chunks for f in state.files.values())
        report.seconds["total"] = round(time.perf_counter() - t0, 3)
        for problem in scan.problems:
            log.warning("%s", problem)
        return report

    def _parse(self, rel: str, res: ReadResult) -> Card:
        return parse_card(
            rel,
            res.text,
            decoded_with_replacement=res.replaced_invalid_utf8,
            title_source=self.settings.title_source,
        )

    def _skip(self, rel: str, res: ReadResult, report: SyncReport) -> None:
        reason = "; ".join(res.problems) or res.status.value
        report.skipped[rel] = reason
        if self.state.skipped.get(rel) != reason:
            log.warning("%s", reason)  # new or different: say it (not at every reconcile)
        self.state.skipped[rel] = reason

    def _write_batch(
        self,
        batch: list[str],
        cards: dict[str, tuple[Card, str, int, int]],
        renames: dict[str, str],
        gone: set[str],
        report: SyncReport,
        uncertain: set[str],
    ) -> list[EmbedItem]:
        """Store one batch of cards (and deletions); returns the chunks that need vectors.

        A changed card's points are overwritten in place (same ids), and only the ids past
        its new chunk count are deleted: the shard's BM25 counts deleted points in its
        document frequencies until it is reloaded, so deleting a card's points before writing
        them again made every edit count its words once more (measured: after 50 saves of a
        note, its own rare word scored half and a two-word query lost it). ``uncertain``
        cards (pending when a previous run stopped) are deleted whole first: their points
        in the store are not known."""
        self._state_changed()  # a status asked during a long sync sees each batch
        state = self.state
        to_chunk = [cards[p][0] for p in batch if p in cards]
        chunked = chunk_cards(to_chunk, self.embedder.count_tokens, self.settings.chunk_tokens)
        if state.bm25_avg_len <= 0 and to_chunk:
            # BM25 document weights depend on it, so it is fixed once, from the first chunks
            lengths = [len(c.embed_text.split()) for chunks in chunked for c in chunks]
            state.bm25_avg_len = max(1.0, sum(lengths) / max(1, len(lengths)))
            self.store.set_bm25_avg_len(state.bm25_avg_len)
        points: list[ChunkPoint] = []
        dense_items: dict[str, list[EmbedItem]] = {}
        langs: dict[str, tuple[str, bool]] = {}  # path -> (language, all multilingual reused)
        for card, chunks in zip(to_chunk, chunked, strict=True):
            rel = card.path
            source = renames.get(rel, rel)
            reuse = self._old_vectors(source, chunks)
            reuse_ml = self._old_vectors(source, chunks, DENSE_ML) if state.ml_model else {}
            lang = card_language(card)
            langs[rel] = (lang, bool(chunks) and len(reuse_ml) == len(chunks))
            gen = self._generation.get(rel, 0) + 1
            self._generation[rel] = gen
            missing: list[EmbedItem] = []
            for chunk in chunks:
                pid = point_id(rel, chunk.index)
                vec = reuse.get(chunk.index)
                payload = chunk_payload(rel, card.title, chunk, lang)
                points.append(
                    ChunkPoint(pid, payload, chunk.embed_text, vec, reuse_ml.get(chunk.index))
                )
                if vec is None:
                    missing.append(EmbedItem(rel, gen, pid, chunk.embed_text))
                else:
                    report.reused_vectors += 1
            dense_items[rel] = missing

        removed = [p for p in batch if p in gone] + [renames[p] for p in batch if p in renames]
        replaced = {p for p in batch if p in cards and p in state.files and p not in uncertain}
        deleted = [p for p in batch if p in cards and p not in replaced] + removed
        surplus = [
            point_id(card.path, i)
            for card, chunks in zip(to_chunk, chunked, strict=True)
            if card.path in replaced
            for i in range(len(chunks), state.files[card.path].chunks)
        ]
        self.store.delete_paths(deleted)
        self.store.delete_ids(surplus)
        for start in range(0, len(points), 256):
            self.store.upsert(points[start : start + 256])
        self.store.flush()
        files = state.files
        state.uncompacted += (
            len(points) + len(surplus) + sum(files[p].chunks for p in deleted if p in files)
        )

        for p in removed:
            state.files.pop(p, None)
            self._forget_dense(p)
            report.paths_removed.append(p)
        report.deleted += sum(1 for p in batch if p in gone)
        report.renamed += sum(1 for p in batch if p in renames)
        for p in batch:
            if p in cards and p not in renames:
                old = state.files.get(p)
                if old is None:
                    report.new += 1
                elif old.sha256 != cards[p][1]:
                    report.changed += 1
        for card, chunks in zip(to_chunk, chunked, strict=True):
            rel = card.path
            _, sha, size, mtime = cards[rel]
            missing = dense_items[rel]
            lang, ml = langs[rel]
            state.files[rel] = FileState(
                size, mtime, sha, len(chunks), dense=not missing, lang=lang, ml=ml
            )
            self._forget_dense(rel)
            if missing:
                self.dense_queue.expect(rel, len(missing))
            report.cards_changed.append(card)
        report.indexed += len(to_chunk)
        self._languages = None
        return [it for items in dense_items.values() for it in items]

    def _old_vectors(
        self, path: str, chunks: Sequence[Chunk], using: str = DENSE
    ) -> dict[int, list[float]]:
        """Dense vectors of the card's stored chunks, by new chunk index, for the chunks whose
        embedded text (title and heading prefix included) is exactly the text embedded before.

        Only that text decides: a rename that changes the title, or chunks cut from one long
        line (same lines, different text), get new vectors."""
        old = self.state.files.get(path)
        if old is None or not chunks:
            return {}
        ids = [point_id(path, i) for i in range(old.chunks)]
        stored: dict[str, list[float]] = {}
        for _, payload, vec in self.store.retrieve(ids, with_dense=True, using=using):
            if vec is not None and payload.get("embed_hash"):
                stored[str(payload["embed_hash"])] = list(vec)
        out: dict[int, list[float]] = {}
        for chunk in chunks:
            h = text_hash(chunk.embed_text)
            if h in stored:
                out[chunk.index] = stored[h]
        return out

    # ------------------------------------------------------------------ dense phase

    def _queue_missing_dense(self, should_stop: Callable[[], bool] | None = None) -> bool:
        """After a full reconcile: queue every card whose vectors are not all there (an
        interrupted run, a model change), as one length-sorted bulk job. Read and chunked
        again a slice of cards per lock hold, and counted outside it: after an interrupted
        first index these are most of the vault, and a search or an edit's sync must not
        wait for them all (issue #18: the first answer took 7 s after such a start).
        ``should_stop`` is asked between slices (a server that closes while 100k cards are
        queued waited 13 s for them); False: stopped, nothing queued."""
        with self._lock:
            queued = set(self.dense_queue.left)
            todo = [p for p, f in self.state.files.items() if not f.dense and p not in queued]
        if not todo:
            return True
        items = self._missing_in_slices(
            todo,
            DENSE,
            lambda p: not self.state.files[p].dense and p not in self.dense_queue.left,
            should_stop,
        )
        if items is None:
            return False
        if items:
            if not count_tokens(items, self.embedder, should_stop):  # no lock
                with self._lock:
                    self.dense_queue.uncount(items)  # not queued after all
                return False
            with self._lock:
                self.dense_queue.push(items)
        return True

    def _queue_missing_ml(self, should_stop: Callable[[], bool] | None = None) -> bool:
        """Queue the chunks of the cards in the multilingual scope that lack their vector, a
        slice of cards per lock hold (reading and chunking thousands of cards must not hold up
        an edit's sync). Creates the store's vector on first use. False: nothing to do, or
        ``should_stop`` said so between slices (a server closing: it waited 11 s at 100k)."""
        emb = self.ml_embedder
        if emb is None:
            return False
        with self._lock:
            queued = set(self.ml_queue.left)
            todo = [
                p
                for p, f in self.state.files.items()
                if not f.ml and p not in queued and self.in_ml_scope(f)
            ]
            if not todo:
                return False
            if self.state.ml_model != emb.model_id:
                if not self.store.ensure_vector(DENSE_ML, emb.dim):
                    self.ml_off_reason = "the Qdrant server collection has no multilingual vector"
                    log.warning("multilingual search is off: %s", self.ml_off_reason)
                    return False
                self.state.ml_model = emb.model_id
                self.saved.save(self.state)
        items = self._missing_in_slices(todo, DENSE_ML, lambda p: True, should_stop) or []
        if not items:
            return False
        if not count_tokens(items, emb, should_stop):  # its tokenizer: outside the lock
            with self._lock:
                self.ml_queue.uncount(items)
            return False
        with self._lock:
            self.ml_queue.push(items)
        return True

    def _missing_in_slices(
        self,
        todo: list[str],
        using: str,
        still: Callable[[str], bool],
        should_stop: Callable[[], bool] | None = None,
    ) -> list[EmbedItem] | None:
        """:meth:`_missing_items` of the cards of ``todo`` still indexed (and ``still`` wanted),
        :data:`ML_QUEUE_CARDS` per lock hold: reading and chunking thousands of cards must not
        hold up a search or an edit's sync. Nothing once the indexer is closed; None when
        ``should_stop`` said so between slices (what was counted is counted back)."""
        items: list[EmbedItem] = []
        for start in range(0, len(todo), ML_QUEUE_CARDS):
            if should_stop is not None and should_stop():
                with self._lock:
                    self._queue(using).uncount(items)
                return None
            with self._lock:
                if self._closed:
                    return []
                part = [
                    p
                    for p in todo[start : start + ML_QUEUE_CARDS]
                    if p in self.state.files and still(p)
                ]
                items.extend(self._missing_items(part, using))
        return items

    def _missing_items(self, todo: list[str], using: str) -> list[EmbedItem]:
        """The chunks of these cards without their ``using`` vector (read, parsed and chunked
        again: the same chunks as stored), counted in the matching ``_left`` map."""
        queue = self._queue(using)
        cards = []
        for rel in todo:
            res = read_note(self.vault / rel, self.settings.max_file_bytes)
            if not res.ok:
                continue
            if text_sha256(res.text) != self.state.files[rel].sha256:
                # changed since it was chunked: its points hold the old text, so embedding the
                # new text would store vectors that do not match them; the next sync redoes it
                self.state.pending.append(rel)
                continue
            cards.append(self._parse(rel, res))
        items: list[EmbedItem] = []
        for card, chunks in zip(
            cards,
            chunk_cards(cards, self.embedder.count_tokens, self.settings.chunk_tokens),
            strict=True,
        ):
            f = self.state.files[card.path]
            if len(chunks) != f.chunks:
                self.state.pending.append(card.path)  # changed under us; next sync redoes it
                continue
            # chunks that got their vector before an interruption keep it (same embedded text)
            have = self._points_with_vectors(card.path, chunks, using)
            missing = [c for c in chunks if c.index not in have]
            if not missing:
                if using == DENSE:
                    f.dense = True
                else:
                    self._mark_ml(f)
                self._state_changed()
                continue
            gen = self._generation.get(card.path, 0)
            queue.expect(card.path, len(missing))
            items.extend(
                EmbedItem(card.path, gen, point_id(card.path, c.index), c.embed_text)
                for c in missing
            )
        return items

    def _points_with_vectors(
        self, path: str, chunks: Sequence[Chunk], using: str = DENSE
    ) -> set[int]:
        """Indexes of the card's chunks whose own point already holds the ``using`` vector of
        exactly their embedded text (embedded before an interruption)."""
        want = {point_id(path, c.index): (c.index, text_hash(c.embed_text)) for c in chunks}
        out: set[int] = set()
        for pid, payload, vec in self.store.retrieve(list(want), with_dense=True, using=using):
            index, h = want[pid]
            if vec is not None and payload.get("embed_hash") == h:
                out.add(index)
        return out

    def _queue(self, using: str) -> EmbedQueue:
        return self.dense_queue if using == DENSE else self.ml_queue

    def _live(self, it: EmbedItem) -> bool:
        """Whether a queued chunk is of the card's current version (not superseded or gone)."""
        return self._generation.get(it.path, 0) == it.generation and it.path in self.state.files

    def _forget_dense(self, path: str) -> None:
        self.dense_queue.forget(path)  # queued items of older generations are skipped
        self.ml_queue.forget(path)

    def _commit_dense(self, finished: set[str], using: str = DENSE) -> None:
        if not finished:
            return
        self.store.flush()
        for p in finished:
            f = self.state.files.get(p)
            if f is not None:
                if using == DENSE:
                    f.dense = True
                else:
                    self._mark_ml(f)
        self._state_changed()
        self.saved.save(self.state)

    def stored_ids(self, using: str = DENSE) -> Iterator[int]:
        """The point ids of the chunks whose vectors ``using`` are stored, by the state (made
        lazily: 200k ids take 0.19 s, which a caller may want to spread)."""
        for path, f in self.card_items():
            if f.dense if using == DENSE else f.ml:
                for i in range(f.chunks):
                    yield point_id(path, i)

    def ml_presence(self) -> tuple[bool, bool]:
        """(some card has multilingual vectors, some non-English card has): every search asks
        (whether the multilingual leg can run), so the cards are looked at once per opening
        and the answer then kept up to date as cards get their vectors (a scan per search cost
        36 ms at 100k cards). It may stay true after a card lost its vectors: that card is
        embedded again by the phase that follows."""
        if self._ml_presence is None:
            files = self.card_states()
            self._ml_presence = (
                any(f.ml for f in files),
                any(f.ml and f.lang != EN for f in files),
            )
        return self._ml_presence

    def _mark_ml(self, f: FileState) -> None:
        f.ml = True
        if self._ml_presence is not None:
            self._ml_presence = (True, self._ml_presence[1] or f.lang != EN)


def _outside(link: Path, target: str) -> ReadResult:
    """A symlink leaving the vault, as a skipped read (``followExternalSymlinks`` is off)."""
    return ReadResult(ReadStatus.OUTSIDE_VAULT, problems=[external_link_problem(str(link), target)])
