"""One sync's lexical pass: which notes are on disk, reading and parsing the ones to (re)index,
and writing their chunks (points with BM25 and keyword payload, dense vectors reused where the
embedded text is unchanged) and file rows, a batch at a time. The pass's order, its pending
paths and its saves are :meth:`Indexer.sync`'s (:mod:`zettel_lsp.index.sync`).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from zettel_lsp.index.chunker import Chunk, TokenCounter, chunk_cards
from zettel_lsp.index.embed_queue import EmbedItem, EmbedQueue
from zettel_lsp.index.plan import match_renames
from zettel_lsp.index.state import FileState, IndexState, text_sha256
from zettel_lsp.index.status import Status, SyncReport
from zettel_lsp.index.store import DENSE, DENSE_ML
from zettel_lsp.index.store_api import ChunkPoint, VectorStore, chunk_payload, point_id, text_hash
from zettel_lsp.notes.language import card_language
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import ReadResult, ReadStatus, read_note
from zettel_lsp.notes.scan import (
    ScanReport,
    external_link_problem,
    external_target,
    is_ignored,
    is_note_path,
    iter_note_paths,
)
from zettel_lsp.notes.title_rule import TitleSource

if TYPE_CHECKING:
    from zettel_lsp.index.sync import IndexSettings

log = logging.getLogger(__name__)

# a card read for (re)indexing: (card, content hash, size, mtime_ns)
ReadCard = tuple[Card, str, int, int]


def parse_note(rel: str, res: ReadResult, title_source: TitleSource) -> Card:
    return parse_card(
        rel,
        res.text,
        decoded_with_replacement=res.replaced_invalid_utf8,
        title_source=title_source,
    )


def _outside(link: Path, target: str) -> ReadResult:
    """A symlink leaving the vault, as a skipped read (``followExternalSymlinks`` is off)."""
    return ReadResult(ReadStatus.OUTSIDE_VAULT, problems=[external_link_problem(str(link), target)])


@dataclass(eq=False)
class LexicalPass:
    """The reading and writing of one :meth:`Indexer.sync`, under the indexer's lock. What it
    found (``cards``, ``gone``, ``renames``) is kept for its batches."""

    vault: Path
    settings: IndexSettings
    state: IndexState
    store: VectorStore
    report: SyncReport
    count_tokens: TokenCounter
    generation: dict[str, int]  # card -> its version (see EmbedItem.generation)
    dense_queue: EmbedQueue
    multilingual_queue: EmbedQueue
    status: Status
    scan: ScanReport = field(default_factory=ScanReport)
    cards: dict[str, ReadCard] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)  # new path -> old path

    def __post_init__(self) -> None:
        self.uncertain = set(self.state.pending)  # pending when a previous run stopped

    def skip(self, rel: str, res: ReadResult) -> None:
        reason = "; ".join(res.problems) or res.status.value
        self.report.skipped[rel] = reason
        if self.state.skipped.get(rel) != reason:
            log.warning("%s", reason)  # new or different: say it (not at every reconcile)
        self.state.skipped[rel] = reason

    # ------------------------------------------------------------------ scan and read

    def on_disk(self, scope: set[str] | None) -> dict[str, tuple[int, int]]:
        """The notes of ``scope`` (None: the vault) with their (size, mtime_ns); what cannot be
        indexed (a symlink leaving the vault, a FIFO, a loop) is skipped, said once."""
        present: dict[str, tuple[int, int]] = {}
        root = str(self.vault)  # os.path, not pathlib: 100k stats per full sync
        for rel in self._listed(scope):
            if scope is not None and not self.settings.follow_external_symlinks:
                leads_to = external_target(self.vault, rel)
                if leads_to is not None:  # the full scan does not list these
                    self.skip(rel, _outside(self.vault / rel, leads_to))
                    continue
            try:
                st = os.stat(os.path.join(root, rel))
            except FileNotFoundError:
                if os.path.islink(self.vault / rel):  # dangling symlink: say so, once
                    self.skip(rel, read_note(self.vault / rel))
                continue
            except OSError:  # a symlink loop, permissions: say why, once
                self.skip(rel, read_note(self.vault / rel))
                continue
            if stat.S_ISREG(st.st_mode):
                present[rel] = (st.st_size, st.st_mtime_ns)
            elif stat.S_ISDIR(st.st_mode):
                continue  # a folder named like a note: not a note (its notes have their paths)
            else:  # a FIFO, socket or device named like a note: say so, once
                self.skip(rel, read_note(self.vault / rel))
        return present

    def _listed(self, scope: set[str] | None) -> list[str]:
        settings = self.settings
        if scope is not None:
            return [
                p for p in scope if is_note_path(p) and not is_ignored(p, settings.ignore_globs)
            ]
        paths = list(
            iter_note_paths(
                self.vault,
                settings.ignore_globs,
                self.scan,
                follow_external_symlinks=settings.follow_external_symlinks,
            )
        )
        for rel, target in self.scan.external_links.items():  # said once, like other skips
            self.skip(rel, _outside(self.vault / rel, target))
        for shown, message in self.scan.bad_names.items():
            self.skip(shown, ReadResult(ReadStatus.UNREADABLE, problems=[message]))
        for rel, message in self.scan.hidden.items():
            self.skip(rel, ReadResult(ReadStatus.HIDDEN, problems=[message]))
        return paths

    def read(self, candidates: list[str], gone: set[str], *, rechunk_all: bool) -> None:
        """Read, hash and parse the candidates into ``cards`` (a touched but unchanged note
        only gets its row's size and mtime); ``gone`` gains the indexed cards that can no
        longer be read, and ``renames`` pairs new cards with gone ones of the same text."""
        state, report = self.state, self.report
        for rel in candidates:
            res = read_note(self.vault / rel, self.settings.max_file_bytes)
            if not res.ok:
                self.skip(rel, res)
                if rel in state.files:
                    gone.add(rel)
                continue
            state.skipped.pop(rel, None)
            sha = text_sha256(res.text)
            old = state.files.get(rel)
            if (
                old is not None
                and old.sha256 == sha
                and rel not in self.uncertain
                and not rechunk_all
            ):
                old.size, old.mtime_ns = res.size, res.mtime_ns  # touched, not changed
                report.unchanged += 1
                continue
            card = parse_note(rel, res, self.settings.title_source)
            for problem in res.problems + card.problems:
                log.warning("%s", problem)
            self.cards[rel] = (card, sha, res.size, res.mtime_ns)
        for rel in [p for p in gone if p in state.skipped and p not in state.files]:
            if rel not in report.skipped:  # gone; still skipped (FIFO, link...): keep the reason
                state.skipped.pop(rel, None)
            gone.discard(rel)
        self.gone = gone
        # new path -> old path: a vanished card whose content hash reappears
        self.renames = match_renames(gone, state.files, {r: c[1] for r, c in self.cards.items()})

    # ------------------------------------------------------------------ write

    def write(self, batch: list[str]) -> list[EmbedItem]:
        """Store one batch of cards (and deletions); returns the chunks that need vectors.

        A changed card's points are overwritten in place (same ids), and only the ids past
        its new chunk count are deleted: the shard's BM25 counts deleted points in its
        document frequencies until it is reloaded, so deleting and rewriting would count an
        edited card's words once more at every edit. ``uncertain`` cards (pending when a
        previous run stopped) are deleted whole first: their points in the store are not
        known."""
        self.status.changed()  # a status asked during a long sync sees each batch
        to_chunk = [self.cards[p][0] for p in batch if p in self.cards]
        chunked = chunk_cards(to_chunk, self.count_tokens, self.settings.chunk_tokens)
        if self.state.bm25_avg_len <= 0 and to_chunk:
            # BM25 document weights depend on it, so it is fixed once, from the first chunks
            lengths = [len(c.embed_text.split()) for chunks in chunked for c in chunks]
            self.state.bm25_avg_len = max(1.0, sum(lengths) / max(1, len(lengths)))
            self.store.set_bm25_avg_len(self.state.bm25_avg_len)
        cut = list(zip(to_chunk, chunked, strict=True))
        points: list[ChunkPoint] = []
        missing: dict[str, list[EmbedItem]] = {}  # path -> its chunks without vectors
        langs: dict[str, tuple[str, bool]] = {}  # path -> (language, all multilingual reused)
        for card, chunks in cut:
            missing[card.path] = self._card_points(card, chunks, points, langs)
        self._store(batch, cut, points)
        self._record(batch, cut, missing, langs)
        return [it for items in missing.values() for it in items]

    def _card_points(
        self,
        card: Card,
        chunks: list[Chunk],
        points: list[ChunkPoint],
        langs: dict[str, tuple[str, bool]],
    ) -> list[EmbedItem]:
        """Add the card's points to ``points``, with the vectors of its old version's chunks of
        the same text; returns its chunks without a vector (of its new generation)."""
        rel = card.path
        source = self.renames.get(rel, rel)
        reuse = self.old_vectors(source, chunks)
        reuse_multilingual = (
            self.old_vectors(source, chunks, DENSE_ML) if self.state.multilingual_model else {}
        )
        lang = card_language(card)
        langs[rel] = (lang, bool(chunks) and len(reuse_multilingual) == len(chunks))
        gen = self.generation.get(rel, 0) + 1
        self.generation[rel] = gen
        missing: list[EmbedItem] = []
        for chunk in chunks:
            pid = point_id(rel, chunk.index)
            vec = reuse.get(chunk.index)
            payload = chunk_payload(rel, card.title, chunk, lang)
            points.append(
                ChunkPoint(pid, payload, chunk.embed_text, vec, reuse_multilingual.get(chunk.index))
            )
            if vec is None:
                missing.append(EmbedItem(rel, gen, pid, chunk.embed_text))
            else:
                self.report.reused_vectors += 1
        return missing

    def _store(
        self, batch: list[str], cut: list[tuple[Card, list[Chunk]]], points: list[ChunkPoint]
    ) -> None:
        """Write the batch to the store and flush it: delete the points of the cards gone,
        renamed away or not known whole, then those past a changed card's new chunk count,
        then upsert the points."""
        state, cards, renames = self.state, self.cards, self.renames
        removed = [p for p in batch if p in self.gone] + [renames[p] for p in batch if p in renames]
        replaced = {p for p in batch if p in cards and p in state.files and p not in self.uncertain}
        deleted = [p for p in batch if p in cards and p not in replaced] + removed
        surplus = [
            point_id(card.path, i)
            for card, chunks in cut
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

    def _record(
        self,
        batch: list[str],
        cut: list[tuple[Card, list[Chunk]]],
        missing: dict[str, list[EmbedItem]],
        langs: dict[str, tuple[str, bool]],
    ) -> None:
        """The batch's file rows and counts, once its points are flushed."""
        state, report, cards, renames = self.state, self.report, self.cards, self.renames
        for p in [p for p in batch if p in self.gone] + [renames[p] for p in batch if p in renames]:
            state.files.pop(p, None)
            self._forget(p)
            report.paths_removed.append(p)
        report.deleted += sum(1 for p in batch if p in self.gone)
        report.renamed += sum(1 for p in batch if p in renames)
        for p in batch:
            if p in cards and p not in renames:
                old = state.files.get(p)
                if old is None:
                    report.new += 1
                elif old.sha256 != cards[p][1]:
                    report.changed += 1
        for card, chunks in cut:
            rel = card.path
            _, sha, size, mtime = cards[rel]
            lang, multilingual = langs[rel]
            todo = missing[rel]
            state.files[rel] = FileState(
                size, mtime, sha, len(chunks), dense=not todo, lang=lang, multilingual=multilingual
            )
            self._forget(rel)
            if todo:
                self.dense_queue.expect(rel, len(todo))
            report.cards_changed.append(card)
        report.indexed += len(cut)
        self.status.changed(languages=True)

    def _forget(self, path: str) -> None:
        self.dense_queue.forget(path)  # queued items of older generations are skipped
        self.multilingual_queue.forget(path)

    def old_vectors(
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
