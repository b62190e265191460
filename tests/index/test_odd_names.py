"""Odd note names (issue #44): dots, spaces and dashes where names rarely have them. A name that
starts with a dot is a hidden file, skipped by rule and reported like any other skipped file;
every other name is a note like any other."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.index.conftest import assert_index_matches_folder
from zettel_lsp.index.sync import Indexer, IndexSettings

INDEXED = {"a..b.md", " lead.md", "trail .md", "-dash.md", "sub/x..y.md"}
HIDDEN = {"..dots.md", ".md", "...md", ".draft.md", "sub/..x.markdown"}
# in dot-folders (one named like a note), or not named like a note: not listed, not reported
SILENT = {".obsidian/app.md", "..folder/n.md", "sub/..x.md/in.md", "trail.md ", "..x"}


def test_odd_names_are_indexed_and_dot_files_reported_once(
    tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault = tmp_path / "vault"
    for i, rel in enumerate(sorted(INDEXED | HIDDEN | SILENT)):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# Note {i}\n\nword{i} in an oddly named file\n")
    caplog.set_level(logging.WARNING)
    ix = Indexer(vault, tmp_path / "idx", IndexSettings(), cache_dir=cache_dir)
    try:
        r = ix.sync()
        assert set(ix.state.files) == INDEXED
        assert set(r.skipped) == set(ix.state.skipped) == HIDDEN
        for rel in HIDDEN:
            assert "hidden file" in r.skipped[rel] and str(vault / rel) in r.skipped[rel]
        logged = "\n".join(rec.getMessage() for rec in caplog.records)
        assert all(f"{vault / rel}: hidden file" in logged for rel in HIDDEN), logged
        caplog.clear()
        r = ix.sync()  # still there: still reported, not said again
        assert set(r.skipped) == HIDDEN and not caplog.records
        (vault / "..dots.md").rename(vault / "dots.md")  # renamed: indexed, no longer skipped
        r = ix.sync()
        assert set(r.skipped) == set(ix.state.skipped) == HIDDEN - {"..dots.md"}
        assert set(ix.state.files) == INDEXED | {"dots.md"}
        assert_index_matches_folder(ix, dense=False)
    finally:
        ix.close()
