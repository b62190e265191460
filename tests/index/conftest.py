"""Index test fixtures: a shared model cache, and a check that the index equals the folder."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import copy_indexed
from zettel_lsp.graph.rows import parsed_as
from zettel_lsp.index.db import DB_FILE
from zettel_lsp.index.store_api import point_id
from zettel_lsp.index.sync import Indexer
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES, read_note
from zettel_lsp.notes.scan import iter_note_paths
from zettel_lsp.notes.title_rule import TitleSource


@pytest.fixture
def example(tmp_path: Path, indexed_example: Path) -> tuple[Path, Path]:
    """A private copy of the indexed example vault: ``(vault, index folder)``."""
    copy_indexed(indexed_example, tmp_path / "vault", tmp_path / "index")
    return tmp_path / "vault", tmp_path / "index"


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model cache for the whole run (assembling the model folder copies 23 MB)."""
    return tmp_path_factory.mktemp("cache")


def folder_cards(vault: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> set[str]:
    """Readable notes in the folder: what the index must hold."""
    return {rel for rel in iter_note_paths(vault) if read_note(vault / rel, max_bytes).ok}


def assert_index_matches_folder(ix: Indexer, *, dense: bool = True) -> None:
    expected = folder_cards(ix.vault, ix.settings.max_file_bytes)
    in_shard = {p for p, n in ix.store.paths().items() if n > 0}
    assert set(ix.state.files) == expected
    assert in_shard == expected, (sorted(in_shard - expected), sorted(expected - in_shard))
    assert ix.state.pending == []
    for path, f in ix.state.files.items():
        assert ix.store.count(path) == f.chunks, path
        assert (f.sha256 and f.chunks > 0) or not (ix.vault / path).read_text(
            errors="replace"
        ).strip()
        if dense:
            assert f.dense, path
            got = ix.store.retrieve([point_id(path, i) for i in range(f.chunks)], with_dense=True)
            assert len(got) == f.chunks and all(vec is not None for _, _, vec in got), path


def card_rows(index_dir: Path, title_source: TitleSource = TitleSource.AUTO) -> int:
    """How many parsed cards the index database holds for ``title_source``."""
    with closing(sqlite3.connect(index_dir / DB_FILE)) as conn:
        n = conn.execute(
            "SELECT count(*) FROM cards WHERE parsed_as = ?", (parsed_as(title_source),)
        ).fetchone()
    return int(n[0])


def mention_rows(index_dir: Path) -> int:
    """How many cards' mentions the index database holds."""
    with closing(sqlite3.connect(index_dir / DB_FILE)) as conn:
        return int(conn.execute("SELECT count(*) FROM mentions").fetchone()[0])
