"""The index folder's database: what the index knows of the notes, except the vectors.

One SQLite file per index folder (:data:`DB_FILE`, write-ahead log), opened by the process
holding the folder's lock (and by the compactor it starts, after it closed). Each change is
one transaction, so a crash leaves the state before it or after it, never a mix.

Tables (the schema is :data:`_SCHEMA`; its version is SQLite's ``user_version``):

- ``meta``: one JSON value per key: the index's vault, model, chunker, dimensions, BM25 mean
  length, backend, and small documents such as the suggestions' calibration;
- ``files``: per card path, the file version indexed (size, mtime, content hash), its chunk
  count, language, and whether its dense and multilingual vectors are stored;
- ``pending``: paths a pass is about to write to the shard, committed before it writes them;
  a start redoes them (see :mod:`zettel_lsp.index.state`);
- ``skipped``: files not indexed, with the reason;
- ``cards`` and ``mentions``: the link graph's parsed cards and unlinked mentions, written and
  read by :mod:`zettel_lsp.graph.rows`.

A database of an earlier schema version with an entry in :data:`_UPGRADES` is upgraded in
place; one of any other version is removed and started again: the notes are the truth.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DB_FILE = "index.db"
DB_FILES = (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm", DB_FILE + "-journal")
SCHEMA_VERSION = 2

# version -> the script that makes it the next version (run in one transaction)
_UPGRADES = {
    1: "ALTER TABLE files RENAME COLUMN ml TO multilingual;"
    "UPDATE meta SET key = 'multilingual' || substr(key, 3) WHERE key IN ('ml_model', 'ml_all');",
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    dense INTEGER NOT NULL,
    lang TEXT NOT NULL,
    multilingual INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending (path TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cards (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    parsed_as TEXT NOT NULL,
    title TEXT NOT NULL,
    card_id TEXT,
    text BLOB NOT NULL,
    details TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS mentions (
    path TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    spans BLOB NOT NULL,
    targets TEXT NOT NULL
);
"""


class IndexDB:
    """The connection to an index folder's database, shared by the threads of one process
    (one lock: SQLite serialises writers anyway). Use :meth:`transaction` for every change."""

    def __init__(self, folder: Path, *, readonly: bool = False) -> None:
        self.folder = folder
        self.path = folder / DB_FILE
        self._lock = threading.RLock()
        if readonly:  # another process's index (verify, a seed): never written
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()

    @classmethod
    def existing(cls, folder: Path) -> IndexDB | None:
        """The database of ``folder`` opened read-only; None when there is none or it cannot
        be opened."""
        if not (folder / DB_FILE).is_file():
            return None
        try:
            return cls(folder, readonly=True)
        except sqlite3.Error:
            return None

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = self._open()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                self._create(conn)
            while version in _UPGRADES:
                version += 1
                conn.executescript(
                    f"BEGIN; {_UPGRADES[version - 1]} PRAGMA user_version={version}; COMMIT;"
                )
            if version in (0, SCHEMA_VERSION):
                return conn
            conn.close()
            log.info(
                "%s has schema %d, not %d: starting it again", self.path, version, SCHEMA_VERSION
            )
        except sqlite3.OperationalError:  # locked, or cannot be opened: not ours to remove
            raise
        except sqlite3.DatabaseError as exc:  # not a database, or damaged
            log.warning("%s is unreadable (%s): starting it again", self.path, exc)
        remove_db(self.folder)
        conn = self._open()
        self._create(conn)
        return conn

    def _open(self) -> sqlite3.Connection:
        # autocommit mode: transactions are explicit (``transaction``)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the process
        return conn

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        conn.executescript(_SCHEMA)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one write transaction, committed when the block ends and
        rolled back when it raises."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection for reads (not across a write of another thread)."""
        with self._lock:
            yield self._conn

    def get(self, key: str) -> Any:
        """The JSON value kept under ``key`` in ``meta``; None when there is none."""
        with self.reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` (JSON) under ``key`` in ``meta``, in a transaction of its own."""
        with self.transaction() as conn:
            put_meta(conn, {key: value})

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def put_meta(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [(k, json.dumps(v, separators=(",", ":"))) for k, v in values.items()],
    )


def remove_db(folder: Path) -> None:
    """Delete the database of ``folder`` with its log files (call with it closed)."""
    for name in DB_FILES:
        (folder / name).unlink(missing_ok=True)


def copy_db(source: Path, target: Path) -> None:
    """Copy the database of the index folder ``source`` into ``target`` (a consistent copy,
    through SQLite's backup; the source is only read)."""
    with contextlib.closing(IndexDB(source, readonly=True)) as src:
        remove_db(target)
        target.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(target / DB_FILE)) as dst, src.reading() as conn:
            conn.backup(dst)
