"""An indexer's dense and multilingual phases: its two queues (:mod:`embed_queue`), the loop
that embeds them with the model outside the indexer's lock, and the queueing of the cards
found without their vectors (an interrupted run, a model change, the multilingual scope).

Crash safety: a card's vectors are recorded done (its row's ``dense`` / ``multilingual``)
only in a state save after the shard is flushed; a crash redoes what was embedded since.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from zettel_lsp.index.chunker import Chunk, chunk_cards
from zettel_lsp.index.embed_queue import EmbedItem, EmbedQueue, count_tokens
from zettel_lsp.index.embedders import Embedder
from zettel_lsp.index.lexical import parse_note
from zettel_lsp.index.state import FileState, text_sha256
from zettel_lsp.index.status import Progress
from zettel_lsp.index.store import DENSE, DENSE_ML
from zettel_lsp.index.store_api import point_id, text_hash
from zettel_lsp.notes.language import EN
from zettel_lsp.notes.reader import read_note

if TYPE_CHECKING:
    from zettel_lsp.index.sync import Indexer

log = logging.getLogger(__name__)

# how often the dense phase flushes and records finished cards (a crash redoes what was
# embedded since), and the share of its time those saves may take at most (a save compares
# every card's row with the one saved before)
DENSE_SAVE_SECONDS = 15.0
DENSE_SAVE_SHARE = 0.01
# cards read and chunked per lock hold when a dense or multilingual queue fills
ML_QUEUE_CARDS = 256

StopFn = Callable[[], bool]


class Embedding:
    """The embedding side of ``ix``: it works on the indexer's state and store under the
    indexer's lock, which it holds only between model calls."""

    def __init__(self, ix: Indexer) -> None:
        self.ix = ix
        self.generation: dict[str, int] = {}  # card -> its version (see EmbedItem.generation)
        self.dense_queue = EmbedQueue()
        self.multilingual_queue = EmbedQueue()
        # cards without vectors that a full sync found but no job holds yet: queued by the
        # next embed_pending (the embedding thread), not by the sync (see queue_missing_dense)
        self.unqueued = False
        self.embed_seconds = 0.0  # time inside the model (for throughput figures)
        self.multilingual_embed_seconds = 0.0

    @property
    def dense_pending(self) -> int:
        """Chunks waiting for vectors: queued, and (until the embedding thread queues them)
        those of the cards a sync found without vectors."""
        queued = len(self.dense_queue)
        if not self.unqueued:
            return queued
        left = self.dense_queue.left
        return queued + sum(
            f.chunks for p, f in self.ix.card_items() if not f.dense and p not in left
        )

    def embed_pending(self, max_seconds: float | None, should_stop: StopFn | None) -> int:
        """See :meth:`Indexer.embed_pending`."""
        if self.unqueued:
            self.unqueued = False
            if not self.queue_missing_dense(should_stop):
                self.unqueued = True  # stopped while queueing: the next call queues them
                return 0
        return self._embed_jobs(self.ix.embedder, DENSE, max_seconds, should_stop)

    def embed_multilingual(
        self, embedder: Embedder, max_seconds: float | None, should_stop: StopFn | None
    ) -> int:
        """See :meth:`Indexer.embed_multilingual`."""

        def stop() -> bool:
            return (
                bool(self.dense_queue.jobs)
                or self.unqueued
                or (should_stop is not None and should_stop())
            )

        done = 0
        started = time.monotonic()
        while not stop():
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                break
            if not self.multilingual_queue.jobs and not self._queue_missing_multilingual(
                embedder, should_stop
            ):
                break
            left = None if max_seconds is None else max_seconds - (time.monotonic() - started)
            done += self._embed_jobs(embedder, DENSE_ML, left, stop)
        return done

    def _embed_jobs(
        self,
        embedder: Embedder,
        using: str,
        max_seconds: float | None,
        should_stop: StopFn | None,
    ) -> int:
        ix, queue = self.ix, self._queue(using)
        done = tokens = 0
        started = last_save = time.monotonic()
        every = DENSE_SAVE_SECONDS
        finished: set[str] = set()
        phase = "dense" if using == DENSE else "multilingual"
        while True:
            if should_stop is not None and should_stop():
                break
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                break
            with ix.lock:
                batch = queue.next_batch(embedder, self.live)
            if not batch:
                break
            t_embed = time.perf_counter()
            vectors = embedder.embed([it.text for it in batch])
            if using == DENSE:
                self.embed_seconds += time.perf_counter() - t_embed
            else:
                self.multilingual_embed_seconds += time.perf_counter() - t_embed
            with ix.lock:
                if ix.closed:
                    break
                live = [i for i, it in enumerate(batch) if self.live(it)]
                ix.store.set_dense(
                    [batch[i].point for i in live], [vectors[i] for i in live], using=using
                )
                ix.state.uncompacted += len(live)
                finished.update(batch[i].path for i in live if queue.embedded(batch[i].path))
                done += len(live)
                tokens += sum(batch[i].tokens for i in live)
                now = time.monotonic()
                if now - last_save >= every or not queue.jobs:
                    self._commit(finished, using)
                    finished = set()
                    last_save = time.monotonic()
                    # the saves take at most DENSE_SAVE_SHARE of the time
                    every = max(DENSE_SAVE_SECONDS, (last_save - now) / DENSE_SAVE_SHARE)
            left = len(queue), queue.tokens
            ix.progress(Progress(phase, done, done + left[0], "", tokens, tokens + left[1]))
        with ix.lock:
            if not ix.closed:
                self._commit(finished, using)
        return done

    def _commit(self, finished: set[str], using: str = DENSE) -> None:
        if not finished:
            return
        ix = self.ix
        ix.store.flush()
        for p in finished:
            f = ix.state.files.get(p)
            if f is not None:
                self._mark_done(f, using)
        ix.status.changed()
        ix.saved.save(ix.state)

    def _mark_done(self, f: FileState, using: str) -> None:
        """The card got all its ``using`` vectors."""
        if using == DENSE:
            f.dense = True
        else:
            self.ix.status.mark_multilingual(f)

    def live(self, it: EmbedItem) -> bool:
        """Whether a queued chunk is of the card's current version (not superseded or gone)."""
        return self.generation.get(it.path, 0) == it.generation and it.path in self.ix.state.files

    def _queue(self, using: str) -> EmbedQueue:
        return self.dense_queue if using == DENSE else self.multilingual_queue

    # ------------------------------------------------------------------ cards without vectors

    def queue_missing_dense(self, should_stop: StopFn | None = None) -> bool:
        """After a full reconcile: queue every card whose vectors are not all there (an
        interrupted run, a model change), as one length-sorted bulk job, read and chunked again
        by :meth:`_missing_in_slices` (a search or an edit's sync must not wait for them all,
        issue #18). False: ``should_stop`` said so, nothing queued."""
        ix = self.ix
        with ix.lock:
            queued = set(self.dense_queue.left)
            todo = [p for p, f in ix.state.files.items() if not f.dense and p not in queued]
        if not todo:
            return True
        items = self._missing_in_slices(
            todo,
            DENSE,
            lambda p: not ix.state.files[p].dense and p not in self.dense_queue.left,
            should_stop,
        )
        if items is None:
            return False
        return not items or self._push(items, ix.embedder, DENSE, should_stop)

    def _queue_missing_multilingual(self, emb: Embedder, should_stop: StopFn | None = None) -> bool:
        """Queue the chunks of the cards in the multilingual scope that lack their vector
        (:meth:`_missing_in_slices`). Creates the store's vector on first use. False: nothing
        to do, or ``should_stop`` said so."""
        ix = self.ix
        with ix.lock:
            queued = set(self.multilingual_queue.left)
            scope = ix.multilingual_scope()
            todo = [
                p
                for p, f in ix.state.files.items()
                if not f.multilingual
                and p not in queued
                and (scope == "all" or (scope == "foreign" and f.lang != EN))
            ]
            if not todo:
                return False
            if ix.state.multilingual_model != emb.model_id:
                if not ix.store.ensure_vector(DENSE_ML, emb.dim):
                    ix.multilingual_off_reason = (
                        "the Qdrant server collection has no multilingual vector"
                    )
                    log.warning("multilingual search is off: %s", ix.multilingual_off_reason)
                    return False
                ix.state.multilingual_model = emb.model_id
                ix.saved.save(ix.state)
        items = self._missing_in_slices(todo, DENSE_ML, lambda p: True, should_stop)
        if not items:
            return False
        return self._push(items, emb, DENSE_ML, should_stop)

    def _push(
        self, items: list[EmbedItem], emb: Embedder, using: str, should_stop: StopFn | None
    ) -> bool:
        """Count the items' tokens with ``emb``'s tokenizer (outside the lock) and queue them
        as one job; False (nothing queued) when ``should_stop`` said so meanwhile."""
        queue = self._queue(using)
        if not count_tokens(items, emb, should_stop):
            with self.ix.lock:
                queue.uncount(items)  # not queued after all
            return False
        with self.ix.lock:
            queue.push(items)
        return True

    def _missing_in_slices(
        self,
        todo: list[str],
        using: str,
        still: Callable[[str], bool],
        should_stop: StopFn | None = None,
    ) -> list[EmbedItem] | None:
        """:meth:`_missing_items` of the cards of ``todo`` still indexed (and ``still`` wanted),
        :data:`ML_QUEUE_CARDS` per lock hold: reading and chunking thousands of cards must not
        hold up a search or an edit's sync. Nothing once the indexer is closed; None when
        ``should_stop`` said so between slices (what was counted is counted back)."""
        ix = self.ix
        items: list[EmbedItem] = []
        for start in range(0, len(todo), ML_QUEUE_CARDS):
            if should_stop is not None and should_stop():
                with ix.lock:
                    self._queue(using).uncount(items)
                return None
            with ix.lock:
                if ix.closed:
                    return []
                part = [
                    p
                    for p in todo[start : start + ML_QUEUE_CARDS]
                    if p in ix.state.files and still(p)
                ]
                items.extend(self._missing_items(part, using))
        return items

    def _missing_items(self, todo: list[str], using: str) -> list[EmbedItem]:
        """The chunks of these cards without their ``using`` vector (read, parsed and chunked
        again: the same chunks as stored), counted in the matching ``_left`` map."""
        ix = self.ix
        state, settings = ix.state, ix.settings
        queue = self._queue(using)
        cards = []
        for rel in todo:
            res = read_note(ix.vault / rel, settings.max_file_bytes)
            if not res.ok:
                continue
            if text_sha256(res.text) != state.files[rel].sha256:
                # changed since it was chunked: its points hold the old text, so embedding the
                # new text would store vectors that do not match them; the next sync redoes it
                state.pending.append(rel)
                continue
            cards.append(parse_note(rel, res, settings.title_source))
        items: list[EmbedItem] = []
        for card, chunks in zip(
            cards,
            chunk_cards(cards, ix.embedder.count_tokens, settings.chunk_tokens),
            strict=True,
        ):
            f = state.files[card.path]
            if len(chunks) != f.chunks:
                state.pending.append(card.path)  # changed under us; next sync redoes it
                continue
            # chunks that got their vector before an interruption keep it (same embedded text)
            have = self._points_with_vectors(card.path, chunks, using)
            missing = [c for c in chunks if c.index not in have]
            if not missing:
                self._mark_done(f, using)
                ix.status.changed()
                continue
            gen = self.generation.get(card.path, 0)
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
        for pid, payload, vec in self.ix.store.retrieve(list(want), with_dense=True, using=using):
            index, h = want[pid]
            if vec is not None and payload.get("embed_hash") == h:
                out.add(index)
        return out
