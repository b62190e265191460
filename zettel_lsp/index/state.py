"""The index's own bookkeeping: what is indexed, for which file version, with which model.

Kept in the index folder's database (:mod:`zettel_lsp.index.db`): per card path its size,
mtime, content hash, chunk count and whether its vectors are done; the index's model, chunker
and counters in ``meta``. A save writes, in one transaction, the rows that changed since the
last save.

Crash safety: before a pass writes to the shard, the paths it will touch are committed as
``pending`` (:meth:`SavedState.save_pending`); a save after the shard is flushed clears them.
On the next start a pending path whose row does not match its file is indexed again, and one
that no longer exists has its points deleted: a crash at any moment leads to redone work,
never to phantom or missing cards.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from zettel_lsp.index.db import IndexDB, put_meta


def text_sha256(text: str) -> str:
    """The content hash a note's row records: SHA-256 of its decoded text as UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class FileState:
    size: int
    mtime_ns: int
    sha256: str
    chunks: int
    dense: bool = False  # dense vectors stored for every chunk with the index's model
    lang: str = "en"  # the card's language (notes/language.py): its BM25 stemmer
    multilingual: bool = False  # multilingual vectors stored for every chunk (issue #17)

    def row(self) -> tuple[int, int, str, int, bool, str, bool]:
        """The columns of its ``files`` row after the path."""
        return (
            self.size,
            self.mtime_ns,
            self.sha256,
            self.chunks,
            self.dense,
            self.lang,
            self.multilingual,
        )


@dataclass(slots=True)
class IndexState:
    vault: str
    model: str
    chunker: str
    dim: int = 0
    bm25_avg_len: float = 0.0  # fixed when the shard is first filled (BM25 weights depend on it)
    backend: str = "edge"  # "edge", or "qdrant:<url>" for a Qdrant server
    files: dict[str, FileState] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason (binary, too large...)
    multilingual_model: str = ""  # the model of the multilingual vectors stored ("": none yet)
    multilingual_all: bool = False  # every card gets multilingual vectors (a query was not English)
    # points written to the shard (upserts, vector updates, deletes) since it was last compacted
    # (index/compact.py): a large appendable segment makes every later start slow
    uncompacted: int = 0
    # how the shard keeps its data (store.STORE_LAYOUT); an older layout is moved by the next
    # compaction
    store_layout: int = 1

    @property
    def dense_done(self) -> int:
        return sum(1 for f in self.files.values() if f.dense)


# IndexState's fields kept in ``meta`` (the others have tables of their own)
_META = tuple(f.name for f in fields(IndexState) if f.name not in ("files", "pending", "skipped"))


class SavedState:
    """An :class:`IndexState` kept in an :class:`IndexDB`. It remembers the rows it last read
    or wrote, so that a save writes only the cards that changed."""

    def __init__(self, db: IndexDB) -> None:
        self.db = db
        self._files: dict[str, tuple[Any, ...]] = {}
        self._skipped: dict[str, str] = {}

    def load(self) -> IndexState | None:
        """The saved state, or None if there is none (then: a full reconcile)."""
        with self.db.reading() as conn:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if "vault" not in meta:
                return None
            files = conn.execute(
                "SELECT path, size, mtime_ns, sha256, chunks, dense, lang, multilingual FROM files"
            ).fetchall()
            pending = [p for (p,) in conn.execute("SELECT path FROM pending ORDER BY path")]
            skipped = dict(conn.execute("SELECT path, reason FROM skipped").fetchall())
        values = {k: json.loads(meta[k]) for k in _META if k in meta}
        state = IndexState(**values)
        state.files = {
            p: FileState(size, mtime, sha, chunks, bool(dense), lang, bool(multilingual))
            for p, size, mtime, sha, chunks, dense, lang, multilingual in files
        }
        state.pending = pending
        state.skipped = skipped
        self._files = {p: f.row() for p, f in state.files.items()}
        self._skipped = dict(skipped)
        return state

    def save(self, state: IndexState) -> None:
        """Write ``state`` in one transaction: its meta values, the cards and skipped files
        that changed since the last load or save, and its ``pending`` list (replacing what
        :meth:`save_pending` recorded)."""
        rows = {p: f.row() for p, f in state.files.items()}
        changed = [(p, *r) for p, r in rows.items() if self._files.get(p) != r]
        gone = [(p,) for p in self._files if p not in rows]
        skipped_changed = [(p, r) for p, r in state.skipped.items() if self._skipped.get(p) != r]
        skipped_gone = [(p,) for p in self._skipped if p not in state.skipped]
        with self.db.transaction() as conn:
            put_meta(conn, {k: getattr(state, k) for k in _META})
            conn.executemany("DELETE FROM files WHERE path = ?", gone)
            conn.executemany(
                "INSERT OR REPLACE INTO files "
                "(path, size, mtime_ns, sha256, chunks, dense, lang, multilingual) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                changed,
            )
            conn.executemany("DELETE FROM skipped WHERE path = ?", skipped_gone)
            conn.executemany(
                "INSERT OR REPLACE INTO skipped (path, reason) VALUES (?, ?)", skipped_changed
            )
            _replace_pending(conn, state.pending)
        self._files = rows
        self._skipped = dict(state.skipped)

    def save_pending(self, pending: list[str]) -> None:
        """Commit that these paths are about to be written to the shard (before writing)."""
        with self.db.transaction() as conn:
            _replace_pending(conn, pending)


def _replace_pending(conn: Any, pending: list[str]) -> None:
    conn.execute("DELETE FROM pending")
    conn.executemany("INSERT OR IGNORE INTO pending (path) VALUES (?)", [(p,) for p in pending])


def read_state(folder: Path) -> IndexState | None:
    """The state kept in ``folder``'s database, read without writing to the folder; None when
    there is none or it cannot be read."""
    db = IndexDB.existing(folder)
    if db is None:
        return None
    try:
        return SavedState(db).load()
    except sqlite3.Error:
        return None
    finally:
        db.close()


def write_state(folder: Path, state: IndexState) -> None:
    """Save ``state`` as the whole state of ``folder``'s database (a new index's, a copy's)."""
    with contextlib.closing(IndexDB(folder)) as db:
        saved = SavedState(db)
        saved.load()  # its rows, so that those ``state`` lacks are deleted
        saved.save(state)
