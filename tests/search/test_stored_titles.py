"""Titles from the last session's database: what a start answers before its index is open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import copy_indexed
from zettel_lsp.graph.rows import save_cards
from zettel_lsp.index.db import DB_FILE, IndexDB
from zettel_lsp.index.state import text_sha256
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.fallback import stored_title_search
from zettel_lsp.search.query import parse_query
from zettel_lsp.server.service import Phase, VaultService
from zettel_lsp.server.settings import ServerSettings


def _db(folder: Path, notes: dict[str, str]) -> IndexDB:
    db = IndexDB(folder)
    cards = [parse_card(path, text) for path, text in notes.items()]
    save_cards(db, [(c, text_sha256(c.text)) for c in cards], TitleSource.AUTO)
    return db


def test_every_word_in_the_title_the_name_itself_first(tmp_path: Path) -> None:
    db = _db(
        tmp_path,
        {
            "Rank fusion in practice.md": "text\n",
            "Reciprocal rank fusion.md": "text\n",
            "Rank fusion.md": "text\n",
            "Fusion cuisine.md": "text\n",  # one word of two: not found
            "Straße der Rangfusion.md": "text\n",
            "ПРИВЕТ мир.md": "text\n",
        },
    )
    try:
        found = [r.path for r in stored_title_search(db, parse_query("rank fusion"))]
        # the name, then one starting with it, then the others
        assert found == [
            "Rank fusion.md",
            "Rank fusion in practice.md",
            "Reciprocal rank fusion.md",
        ]
        # SQLite folds ASCII letters; other letters are found as typed, capitalised or in capitals
        for query in ("straße", "STRAßE", "привет", "Привет"):
            assert len(stored_title_search(db, parse_query(query))) == 1, query
        two = stored_title_search(db, parse_query("rank"), limit=2)
        assert [r.path for r in two] == ["Rank fusion.md", "Rank fusion in practice.md"]
        assert stored_title_search(db, parse_query("")) == []
    finally:
        db.close()


def test_a_database_without_cards_answers_nothing(tmp_path: Path) -> None:
    """Another program's file, or a database of another version: no answer, no error."""
    with sqlite3.connect(tmp_path / DB_FILE) as conn:
        conn.execute("CREATE TABLE other (x)")
    db = IndexDB.existing(tmp_path)
    assert db is not None
    try:
        assert stored_title_search(db, parse_query("anything")) == []
    finally:
        db.close()
    assert IndexDB.existing(tmp_path / "none") is None


def test_a_starting_server_answers_from_the_last_sessions_titles(
    tmp_path: Path, indexed_example: Path
) -> None:
    vault, idx = tmp_path / "vault", tmp_path / "idx"
    copy_indexed(indexed_example, vault, idx)
    settings = ServerSettings(index_dir=str(idx), cache_dir=str(tmp_path / "cache"), watch=False)
    service = VaultService(vault, settings)
    assert service.search("autolyse", SearchOptions(limit=5)).results == []  # nothing opened yet
    service.open_stored()  # the start's first step
    answer = service.search("autolyse", SearchOptions(limit=5))
    assert service.phase == Phase.STARTING and not answer.complete
    assert [r.path for r in answer.results] == ["baking/Autolyse.md"]
    service.close()
