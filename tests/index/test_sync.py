"""Reconcile: cold index, edits, renames, deletes, bad files, model changes, a second process,
and SIGKILL mid-run. Real model, real Edge shard, real files in temp folders."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder, folder_cards
from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.state import load_state
from zettel_lsp.index.store_api import IndexLockedError
from zettel_lsp.index.sync import Indexer, IndexSettings, point_id
from zettel_lsp.notes.parser import parse_card


def index_cmd(vault: Path, index_dir: Path, cache_dir: Path) -> list[str]:
    """The `zettel-lsp index` command line, as a user would run it."""
    return [sys.executable, "-m", "zettel_lsp", "index", str(vault),
            "--index-dir", str(index_dir), "--cache-dir", str(cache_dir)]  # fmt: skip


def open_indexer(vault: Path, index_dir: Path, cache_dir: Path, **settings: object) -> Indexer:
    return Indexer(vault, index_dir, IndexSettings(**settings), cache_dir=cache_dir)  # type: ignore[arg-type]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dst = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, dst)
    return dst


def test_cold_index_then_warm_start_does_nothing(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert (r.indexed, r.cards, r.deleted, r.renamed) == (45, 45, 0, 0)
        assert r.chunks == ix.store.count() > 45
        assert_index_matches_folder(ix, dense=False)  # lexical first
        assert ix.store.bm25_search("autolyse", 3)[0].path == "baking/Autolyse.md"
        assert ix.embed_pending() == r.chunks
        assert_index_matches_folder(ix)
        # every vector sits on its own point: a chunk's own text finds that very point first
        chunks = chunk_cards(
            [
                parse_card(p, (vault / p).read_text())
                for p in ("baking/Autolyse.md", "retrieval/BM25.md")
            ],
            ix.embedder.count_tokens,
        )
        for chunk in [c for cs in chunks for c in cs]:
            top = ix.store.dense_search(ix.embedder.embed_query(chunk.embed_text), 1)[0]
            assert top.id == point_id(chunk.card_path, chunk.index) and top.score > 0.99
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (0, 45) and ix.dense_pending == 0
        assert_index_matches_folder(ix)


def test_edit_reembeds_only_changed_chunks(vault: Path, tmp_path: Path, cache_dir: Path) -> None:
    card = vault / "retrieval" / "BM25.md"
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        n_chunks = ix.state.files["retrieval/BM25.md"].chunks
        assert n_chunks > 2
        card.write_text(card.read_text() + "\nA new closing paragraph about zebrafish.\n")
        r = ix.sync(["retrieval/BM25.md"])
        assert r.indexed == 1 and r.reused_vectors == n_chunks - 1
        assert ix.embed_pending() == 1
        assert ix.store.keyword_search("zebrafish", 5)[0].path == "retrieval/BM25.md"
        assert_index_matches_folder(ix)


def test_touch_without_change_is_not_reindexed(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        os.utime(vault / "baking" / "Levain.md")
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (0, 45)


def test_rename_and_move_reuse_vectors(vault: Path, tmp_path: Path, cache_dir: Path) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        chunks = ix.state.files["baking/Levain.md"].chunks
        (vault / "archive").mkdir()
        (vault / "baking" / "Levain.md").rename(vault / "archive" / "Leaven build.md")
        r = ix.sync()
        assert (r.renamed, r.deleted, r.indexed) == (1, 0, 1)
        assert r.reused_vectors == chunks and ix.dense_pending == 0
        assert ix.store.count("baking/Levain.md") == 0
        assert_index_matches_folder(ix)


def test_delete_and_create(vault: Path, tmp_path: Path, cache_dir: Path) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        (vault / "baking" / "Scoring.md").unlink()
        shutil.rmtree(vault / "method")
        (vault / "New card.md").write_text("# New card\nAbout quokkas.\n")
        r = ix.sync()
        assert r.deleted == 1 + 11 and r.indexed == 1
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert ix.store.bm25_search("quokkas", 1)[0].path == "New card.md"


def test_bad_files_are_skipped_with_a_logged_reason(
    vault: Path, tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (vault / "latin1.md").write_bytes(b"caf\xe9 au lait, r\xe9sum\xe9 ")
    (vault / "binary.md").write_bytes(bytes(range(256)) * 40)
    (vault / "huge.md").write_text("word " * 5000)
    (vault / "loop.md").symlink_to(vault / "loop.md")
    caplog.set_level(logging.WARNING)
    with open_indexer(vault, tmp_path / "idx", cache_dir, max_file_bytes=20_000) as ix:
        r = ix.sync()
        ix.embed_pending()
        assert set(r.skipped) == {"binary.md", "huge.md", "loop.md"}
        assert "binary" in r.skipped["binary.md"] and "max_file_bytes" in r.skipped["huge.md"]
        assert "symlink loop" in r.skipped["loop.md"]
        assert "latin1.md" in ix.state.files and r.indexed == 46
        assert_index_matches_folder(ix)
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    for name in ("binary.md", "huge.md", "loop.md", "latin1.md: invalid UTF-8"):
        assert name in logged


def test_model_change_reembeds_while_lexical_keeps_working(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        old_model = ix.state.model
    # a different truncation length is a different model id: every vector is redone
    with open_indexer(vault, tmp_path / "idx", cache_dir, chunk_tokens=128) as ix:
        assert ix.state.model != old_model and ix.state.dense_done == 0
        r = ix.sync()
        assert ix.store.bm25_search("autolyse", 1)[0].path == "baking/Autolyse.md"
        assert ix.store.dense_search(ix.embedder.embed_query("autolyse"), 5) == []
        assert ix.embed_pending() == ix.store.count() == r.chunks
        assert_index_matches_folder(ix)
        assert load_state(tmp_path / "idx").model == ix.embedder.model_id  # type: ignore[union-attr]


def test_second_process_gets_a_clear_locked_message(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        with pytest.raises(
            IndexLockedError, match=rf"in use by another zettel-lsp \(pid {os.getpid()}\)"
        ):
            open_indexer(vault, tmp_path / "idx", cache_dir)
        out = subprocess.run(
            index_cmd(vault, tmp_path / "idx", cache_dir),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 1 and "in use by another zettel-lsp" in out.stderr
        assert ix.store.count() > 0  # untouched


def test_damaged_shard_is_rebuilt_from_the_notes(
    vault: Path, tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
    wal = tmp_path / "idx" / "shard" / "wal"
    shutil.rmtree(wal)
    wal.write_bytes(b"\x00garbage")  # what a crash mid-create or a bad disk can leave
    caplog.set_level(logging.WARNING)
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert r.indexed == 45
        assert_index_matches_folder(ix, dense=False)
    assert "rebuilding the index from the notes" in caplog.text


def test_shard_killed_before_its_payload_indexes_existed(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    from qdrant_edge import (
        Distance,
        EdgeConfig,
        EdgeShard,
        EdgeSparseVectorParams,
        EdgeVectorParams,
        Modifier,
    )

    shard_dir = tmp_path / "idx" / "shard"
    shard_dir.mkdir(parents=True)
    config = EdgeConfig(
        vectors={"dense": EdgeVectorParams(size=384, distance=Distance.Cosine)},
        sparse_vectors={"bm25": EdgeSparseVectorParams(modifier=Modifier.Idf)},
    )
    EdgeShard.create(str(shard_dir), config).close()  # the state a kill after create leaves
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        assert ix.sync().indexed == 45
        assert_index_matches_folder(ix, dense=False)
        assert ix.store.keyword_search("autolyse", 3)[0].path == "baking/Autolyse.md"


def make_big_vault(root: Path, n: int) -> Path:
    """n cards of real prose (paragraphs of the example vault, under new names)."""
    paras = [
        para
        for p in sorted(EXAMPLE_VAULT.rglob("*.md"))
        for para in p.read_text().split("\n\n")
        if len(para) > 200
    ]
    root.mkdir()
    for i in range(n):
        text = f"# Card {i}\n\n{paras[i % len(paras)]}\n\nSerial {i}.\n"
        (root / f"card {i:04d}.md").write_text(text)
    return root


# 400 one-chunk cards take ~10 s to embed here: the first kill lands while the model loads or
# the lexical phase runs, the others during embedding.
@pytest.mark.parametrize("kill_after", [0.5, 2.5, 5.0])
def test_sigkill_mid_run_then_reconcile_converges(
    tmp_path: Path, cache_dir: Path, kill_after: float
) -> None:
    vault = make_big_vault(tmp_path / "vault", 400)
    idx = tmp_path / "idx"
    proc = subprocess.Popen(
        index_cmd(vault, idx, cache_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL  # killed mid-run, not finished
    before = load_state(idx)
    if before is not None:  # killed after the shard existed: the state never claims too much
        assert before.dense_done <= len(before.files) <= 400
    # the folder changes while nobody watches
    for i in range(0, 400, 7):
        (vault / f"card {i:04d}.md").unlink()
    (vault / "card 0001.md").write_text("# Rewritten\nCompletely new text about axolotls.\n")
    (vault / "late arrival.md").write_text("# Late\nArrived after the crash.\n")
    with open_indexer(vault, idx, cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert len(ix.state.files) == len(folder_cards(vault)) == 400 - 58 + 1
        assert ix.store.keyword_search("axolotls", 5)[0].path == "card 0001.md"
