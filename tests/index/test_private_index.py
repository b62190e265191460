"""The index holds the notes' text (issue #44): no other user of the machine may read it. A new
index folder (and each parent zettel-lsp makes for it) is 0700; in a folder the user made, its
mode is left as it is and zettel-lsp's own entries are made private (files 0600, the shard
folder 0700: the shard's own files, which Qdrant Edge writes 0644, are out of reach)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from zettel_lsp.index.sync import Indexer, IndexSettings


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The usual umask (022), which leaves new files readable by all."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def open_and_close(vault: Path, index_dir: Path, cache_dir: Path) -> None:
    ix = Indexer(vault, index_dir, IndexSettings(), cache_dir=cache_dir)
    try:
        ix.sync()
    finally:
        ix.close()


def assert_entries_private(index_dir: Path) -> None:
    entries = {p.name: mode(p) for p in index_dir.iterdir()}
    assert {"index.db", "lock", "shard"} <= set(entries), entries
    assert all(m & 0o077 == 0 for m in entries.values()), {n: oct(m) for n, m in entries.items()}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "secret.md").write_text("# Secret\n\nsalary negotiation notes\n")
    return tmp_path / "vault"


def test_a_new_index_folder_and_its_new_parents_are_private(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    index_dir = home / "cache" / "indexes" / "vault-0123"
    open_and_close(vault, index_dir, cache_dir)
    assert mode(home) == 0o755  # the folder that was there keeps its mode
    for folder in (home / "cache", home / "cache" / "indexes", index_dir):
        assert mode(folder) == 0o700, (folder, oct(mode(folder)))
    assert_entries_private(index_dir)


def test_in_a_users_folder_only_zettel_lsps_own_entries_are_made_private(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    index_dir = tmp_path / "mine"
    index_dir.mkdir(mode=0o755)
    open_and_close(vault, index_dir, cache_dir)
    assert mode(index_dir) == 0o755  # the user's folder: the user's mode
    assert_entries_private(index_dir)
    # an index an older version left readable by all is made private when it is opened
    for entry in index_dir.iterdir():
        entry.chmod(0o755 if entry.is_dir() else 0o644)
    open_and_close(vault, index_dir, cache_dir)
    assert_entries_private(index_dir)
    assert mode(index_dir) == 0o755
