"""The index folder's database: the state round-trips, a save writes only what changed, a
killed writer leaves the state before its transaction, and an index folder of the layout
before the database is rebuilt with one line saying so."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.index.db import DB_FILE, IndexDB
from zettel_lsp.index.state import FileState, IndexState, SavedState, read_state, write_state
from zettel_lsp.index.sync import Indexer, IndexSettings


def a_state() -> IndexState:
    files = {
        "a.md": FileState(10, 1_700_000_000_123_456_789, "0" * 64, 3, dense=True),
        "sub/b.md": FileState(20, 2, "1" * 64, 1, dense=False, lang="de", multilingual=True),
        "ç/d.md": FileState(5, 4, "3" * 64, 2, dense=False, multilingual=True),
    }
    return IndexState(
        "/vault", "model", "chunker", dim=384, bm25_avg_len=71.5, files=files,
        skipped={"big.md": "too large"}, multilingual_model="use", uncompacted=7, store_layout=3,
    )  # fmt: skip


def test_the_state_round_trips_through_the_database(tmp_path: Path) -> None:
    state = a_state()
    write_state(tmp_path, state)
    assert read_state(tmp_path) == state
    assert read_state(tmp_path / "none") is None
    assert not (tmp_path / "none").exists()  # reading never creates a folder or a database


def test_a_save_writes_the_rows_that_changed(tmp_path: Path) -> None:
    db = IndexDB(tmp_path)
    try:
        saved = SavedState(db)
        state = a_state()
        saved.save(state)
        writes: list[str] = []
        db._conn.set_trace_callback(writes.append)
        state.files["a.md"].dense = False
        del state.files["sub/b.md"]
        state.skipped.clear()
        saved.save(state)
        db._conn.set_trace_callback(None)
    finally:
        db.close()
    files = [w for w in writes if "files" in w]
    assert len(files) == 2 and "'a.md'" in files[1] and "'sub/b.md'" in files[0]
    assert not any("ç/d.md" in w for w in writes)
    assert read_state(tmp_path) == state


_WRITER = """
import os, sys
from pathlib import Path
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.state import FileState, SavedState
db = IndexDB(Path(sys.argv[1]))
saved = SavedState(db)
state = saved.load()
for i in range(200_000):
    state.files[f"new/{i}.md"] = FileState(i, i, "f" * 64, 1)
state.uncompacted = 12345
print("saving", flush=True)
saved.save(state)
print("saved", flush=True)
"""


def test_a_kill_during_a_save_leaves_the_state_before_it(tmp_path: Path) -> None:
    state = a_state()
    write_state(tmp_path, state)
    for _ in range(3):  # killed at some moment of the transaction, or after it
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline() == "saving\n"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        got = read_state(tmp_path)
        assert got is not None
        new = [p for p in got.files if p.startswith("new/")]
        if new:  # the whole transaction, never a part of it
            assert len(new) == 200_000 and got.uncompacted == 12345
            return
        assert got == state


def test_an_index_folder_of_the_older_layout_is_rebuilt(
    tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    idx = tmp_path / "idx"
    (idx / "shard").mkdir(parents=True)
    (idx / "shard" / "segment").write_text("from an older version")
    (idx / "state.json").write_text('{"format": 2}')
    (idx / "pending.json").write_text('{"format": 2, "pending": []}')
    (idx / "closed-cleanly").write_text("1 2 3")
    with caplog.at_level(logging.INFO):
        ix = Indexer(EXAMPLE_VAULT, idx, IndexSettings(), cache_dir=cache_dir)
    try:
        lines = [r.getMessage() for r in caplog.records if "older layout" in r.getMessage()]
        assert lines == [f"{idx} holds an index of an older layout: rebuilding it from the notes"]
        assert ix.sync().indexed == 45
    finally:
        ix.close()
    assert sorted(p.name for p in idx.iterdir()) == [DB_FILE, "lock", "shard"]


def test_a_schema_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    """Schema 1 named the multilingual column and meta keys ``ml``: they are renamed and
    every row is kept (no re-embedding after an upgrade)."""
    import sqlite3

    conn = sqlite3.connect(tmp_path / DB_FILE)
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER NOT NULL,"
        " mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, chunks INTEGER NOT NULL,"
        " dense INTEGER NOT NULL, lang TEXT NOT NULL, ml INTEGER NOT NULL);"
        "CREATE TABLE pending (path TEXT PRIMARY KEY);"
        "CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);"
        """INSERT INTO meta VALUES ('vault', '"/vault"'), ('model', '"m"'),"""
        """ ('chunker', '"c"'), ('ml_model', '"use"'), ('ml_all', 'true');"""
        "INSERT INTO files VALUES ('a.md', 1, 2, 'h', 3, 1, 'de', 1);"
        "PRAGMA user_version=1;"
    )
    conn.commit()
    conn.close()
    db = IndexDB(tmp_path)
    try:
        state = SavedState(db).load()
    finally:
        db.close()
    assert state is not None
    assert (state.multilingual_model, state.multilingual_all) == ("use", True)
    assert state.files == {"a.md": FileState(1, 2, "h", 3, True, "de", multilingual=True)}
