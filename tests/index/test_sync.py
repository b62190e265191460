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

from tests.conftest import EXAMPLE_VAULT, copy_indexed
from tests.index.conftest import assert_index_matches_folder, folder_cards
from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.db import DB_FILE, IndexDB
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.index.state import FileState, IndexState, SavedState, read_state, write_state
from zettel_lsp.index.status import SyncReport
from zettel_lsp.index.store_api import IndexLockedError, point_id
from zettel_lsp.index.sync import Indexer, IndexSettings
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


@pytest.fixture
def embedded(tmp_path: Path, indexed_example: Path) -> Path:
    """A copy of examples/vault with a copy of its complete index (lexical and dense) at
    ``tmp_path / "idx"``: the state the cold index of the test above leaves, without embedding
    the vault again."""
    dst = tmp_path / "vault"
    copy_indexed(indexed_example, dst, tmp_path / "idx")
    return dst


def open_embedded(vault: Path, index_dir: Path, cache_dir: Path) -> Indexer:
    """The indexer on an index that is up to date with ``vault`` (nothing to sync or embed)."""
    ix = open_indexer(vault, index_dir, cache_dir)
    try:
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (0, 45) and ix.dense_pending == 0
    except BaseException:
        ix.close()
        raise
    return ix


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


def test_closing_the_index_releases_its_model(
    embedded: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """What runs after a close (``zettel-lsp index`` compacts then) does not hold the model."""
    ix = open_indexer(embedded, tmp_path / "idx", cache_dir)
    ix.embedder.embed_query("a query loads the model")
    assert ix.embedder.loaded
    ix.close()
    assert not ix.embedder.loaded


def test_edit_reembeds_only_changed_chunks(embedded: Path, tmp_path: Path, cache_dir: Path) -> None:
    vault = embedded
    card = vault / "retrieval" / "BM25.md"
    with open_embedded(vault, tmp_path / "idx", cache_dir) as ix:
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


def test_move_reuses_vectors_and_rename_reembeds(
    embedded: Path, tmp_path: Path, cache_dir: Path
) -> None:
    vault = embedded
    with open_embedded(vault, tmp_path / "idx", cache_dir) as ix:
        chunks = ix.state.files["baking/Levain.md"].chunks
        (vault / "archive").mkdir()
        # a move keeps the title (the file name), so every embedded text is unchanged
        (vault / "baking" / "Levain.md").rename(vault / "archive" / "Levain.md")
        r = ix.sync()
        assert (r.renamed, r.deleted, r.indexed) == (1, 0, 1)
        assert r.reused_vectors == chunks and ix.dense_pending == 0
        assert ix.store.count("baking/Levain.md") == 0
        assert_index_matches_folder(ix)
        # a rename changes the title that every chunk embeds: new vectors
        (vault / "archive" / "Levain.md").rename(vault / "archive" / "Leaven build.md")
        r = ix.sync()
        assert (r.renamed, r.deleted, r.indexed, r.reused_vectors) == (1, 0, 1, 0)
        assert ix.dense_pending == chunks
        ix.embed_pending()
        assert_index_matches_folder(ix)


def test_delete_and_create(embedded: Path, tmp_path: Path, cache_dir: Path) -> None:
    vault = embedded
    with open_embedded(vault, tmp_path / "idx", cache_dir) as ix:
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
    embedded: Path, tmp_path: Path, cache_dir: Path
) -> None:
    vault = embedded
    with open_embedded(vault, tmp_path / "idx", cache_dir) as ix:
        old_model = ix.state.model
    # a different truncation length is a different model id: every vector is redone
    with open_indexer(vault, tmp_path / "idx", cache_dir, chunk_tokens=128) as ix:
        assert ix.state.model != old_model and ix.state.dense_done == 0
        r = ix.sync()
        assert ix.store.bm25_search("autolyse", 1)[0].path == "baking/Autolyse.md"
        assert ix.store.dense_search(ix.embedder.embed_query("autolyse"), 5) == []
        assert ix.embed_pending() == ix.store.count() == r.chunks
        assert_index_matches_folder(ix)
        assert read_state(tmp_path / "idx").model == ix.embedder.model_id  # type: ignore[union-attr]


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
    before = read_state(idx)
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


# ---------------------------------------------------------------- issue #12: honest counts


def make_folder_vault(root: Path, n: int = 100, sections: int = 1) -> Path:
    """``n`` notes in ``projects/`` (two empty ones and two made from the same template, as
    real vaults have) plus one note beside the folder; ``sections`` > 1 makes notes of
    several chunks."""
    folder = root / "projects"
    folder.mkdir(parents=True)
    for i in range(n - 4):
        body = "".join(
            f"\n## Part {j}\n" + f"Part {j} of note {i} on topic {i}. " * 40
            for j in range(1, sections)
        )
        (folder / f"Note {i:03d}.md").write_text(
            f"# Note {i:03d}\nAbout topic {i} and [[Note {i + 1:03d}]].\n{body}", encoding="utf-8"
        )
    for name in ("Empty A.md", "Empty B.md"):
        (folder / name).write_text("", encoding="utf-8")
    for name in ("Daily 2024-01-01.md", "Daily 2024-01-02.md"):
        (folder / name).write_text("## Tasks\n- [ ] \n## Log\n", encoding="utf-8")
    (root / "Index.md").write_text("# Index\n[[Note 000]]\n", encoding="utf-8")
    return root


def counts(r: SyncReport) -> tuple[int, int, int, int]:
    return (r.new, r.changed, r.renamed, r.deleted)


def test_folder_rename_counts_each_card_once(tmp_path: Path, cache_dir: Path) -> None:
    vault = make_folder_vault(tmp_path / "vault", sections=3)
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert counts(r) == (101, 0, 0, 0) and r.indexed == 101
        assert r.chunks > 200  # several chunks a card (the facet's limit is the point count)
        (vault / "projects").rename(vault / "archive")
        r = ix.sync()
        # every card renamed once, duplicates of content included; nothing deleted or new
        assert counts(r) == (0, 0, 100, 0) and r.unchanged == 1
        assert len(r.paths_removed) == 100
        assert r.summary() == "100 renamed"
        # nothing changed since: nothing to count (before the fix, each later full reconcile
        # counted the 100 old paths "deleted" again: the shard's path facet still listed them,
        # with 0 points, up to its limit of one hit per point)
        for _ in range(2):
            r = ix.sync()
            assert counts(r) == (0, 0, 0, 0) and r.unchanged == 101 and r.paths_removed == []
            assert r.summary() == "no changes"
        for i in range(5):
            (vault / "archive" / f"Note {i:03d}.md").unlink()
        for i in (10, 11):
            (vault / "archive" / f"Note {i:03d}.md").write_text(f"# Note {i}\nRewritten.\n")
        for i in range(3):
            (vault / f"Fresh {i}.md").write_text(f"# Fresh {i}\nAbout quolls {i}.\n")
        r = ix.sync()
        assert counts(r) == (3, 2, 0, 5) and r.indexed == 5
        assert r.summary() == "3 new, 2 changed, 5 deleted"
        assert_index_matches_folder(ix, dense=False)


def test_folder_rename_as_the_server_reports_it(
    tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same rename through the server: its watcher's sync and a later 'Reindex'."""
    from zettel_lsp.server.service import Phase, VaultService
    from zettel_lsp.server.settings import ServerSettings

    vault = make_folder_vault(tmp_path / "vault")
    settings = ServerSettings(
        index_dir=str(tmp_path / "idx"), cache_dir=str(cache_dir), watch=True, debounce_ms=100
    )
    caplog.set_level(logging.INFO, logger="zettel_lsp.server.service")
    service = VaultService(vault, settings)
    service.start()
    try:
        assert service.done.wait(300)
        deadline = time.monotonic() + 120
        while service.phase != Phase.READY and time.monotonic() < deadline:
            time.sleep(0.1)
        assert service.vault is not None and service.phase == Phase.READY
        ix = service.vault.indexer
        time.sleep(0.3)  # let the OS watch register
        caplog.clear()
        (vault / "projects").rename(vault / "archive")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with ix.lock:
                if sum(p.startswith("archive/") for p in ix.state.files) == 100:
                    break
            time.sleep(0.1)
        time.sleep(0.5)  # a second batch of events, if any, is synced too
        assert not any(p.startswith("projects/") for p in ix.state.files)
        service._reconcile()  # 'zettel.reindex'
    finally:
        service.close()
    logged = [rec.getMessage() for rec in caplog.records]
    updates = [m for m in logged if m.startswith("vault updated:")]
    assert updates == ["vault updated: 100 renamed"], logged
    reindex = [m for m in logged if m.startswith("reindex of vault:")]
    assert reindex == ["reindex of vault: no changes, 101 unchanged"], logged
    assert not any("deleted" in m or "removed" in m for m in logged), logged


# ---------------------------------------------------------------- issue #12: FIFOs, dangling links


def test_fifos_and_dangling_symlinks_are_skipped_with_a_reason_said_once(
    vault: Path, tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    os.mkfifo(vault / "pipe.md")
    (vault / "dangling.md").symlink_to(tmp_path / "nowhere" / "note.md")
    caplog.set_level(logging.WARNING)
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert set(r.skipped) == {"pipe.md", "dangling.md"}
        assert "FIFO" in r.skipped["pipe.md"]
        assert "dangling symlink" in r.skipped["dangling.md"]
        assert "nowhere/note.md" in r.skipped["dangling.md"]
        logged = "\n".join(rec.getMessage() for rec in caplog.records)
        assert "pipe.md" in logged and "dangling.md" in logged
        caplog.clear()
        r = ix.sync()  # still there: still skipped, not said again
        assert set(r.skipped) == {"pipe.md", "dangling.md"}
        assert not any("pipe.md" in rec.getMessage() for rec in caplog.records)
        assert not any("dangling.md" in rec.getMessage() for rec in caplog.records)
        # an update of just these paths (as the watcher sends) reports them too
        os.mkfifo(vault / "pipe2.md")
        r = ix.sync(["pipe2.md", "dangling.md"])
        assert "FIFO" in r.skipped["pipe2.md"] and "dangling symlink" in r.skipped["dangling.md"]
        assert ix.state.skipped.keys() >= {"pipe.md", "pipe2.md", "dangling.md"}
        # gone: forgotten
        (vault / "pipe.md").unlink()
        r = ix.sync()
        assert "pipe.md" not in ix.state.skipped and set(r.skipped) == {"pipe2.md", "dangling.md"}
        assert r.deleted == 0
        assert_index_matches_folder(ix, dense=False)


def test_an_update_of_a_note_that_became_a_folder_deletes_it_and_skips_nothing(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """Issue #44, 4: an update of a path that is now a folder (a watcher's event for it) drops
    the note; the folder is not a note to skip, and the notes in it have their own paths."""
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        (vault / "Related reading.md").unlink()
        (vault / "Related reading.md").mkdir()
        (vault / "Related reading.md" / "child.md").write_text("# Child\n\nAn okapi.\n")
        r = ix.sync(["Related reading.md"])
        assert r.deleted == 1 and r.skipped == {} and ix.state.skipped == {}
        assert "Related reading.md" not in ix.state.files
        ix.sync(["Related reading.md/child.md"])
        assert_index_matches_folder(ix, dense=False)


# ---------------------------------------------------------------- issue #12: links out of the vault


def add_links(vault: Path, outside: Path) -> None:
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.md").write_text("root:x:0:0:quokka:/root:/bin/bash\n")
    (outside / "folder" / "private.md").write_text("# Private\nAbout wallabies.\n")
    (vault / "passwd.md").symlink_to(outside / "secret.md")
    (vault / "external").symlink_to(outside / "folder")
    (vault / "Levain alias.md").symlink_to(vault / "baking" / "Levain.md")  # inside


def test_symlinks_leaving_the_vault_are_not_indexed_by_default(
    vault: Path, tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside"
    add_links(vault, outside)
    caplog.set_level(logging.WARNING)
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert "Levain alias.md" in ix.state.files  # a link inside the vault works
        assert not any(p == "passwd.md" or p.startswith("external/") for p in ix.state.files)
        assert ix.store.keyword_search("quokka", 5) == []
        assert ix.store.keyword_search("wallabies", 5) == []
        assert set(r.skipped) == {"passwd.md", "external"}
        assert str((outside / "secret.md").resolve()) in r.skipped["passwd.md"]
        assert str((outside / "folder").resolve()) in r.skipped["external"]
        assert "followExternalSymlinks" in r.skipped["passwd.md"]
        said = [rec.getMessage() for rec in caplog.records if "passwd.md" in rec.getMessage()]
        assert len(said) == 1 and "outside the vault" in said[0]
        caplog.clear()
        r = ix.sync()  # reported once, not at every reconcile
        assert set(r.skipped) == {"passwd.md", "external"} and r.deleted == 0
        assert not any("passwd.md" in rec.getMessage() for rec in caplog.records)
        r = ix.sync(["passwd.md", "external/private.md"])  # as the watcher would send them
        assert "passwd.md" not in ix.state.files and "external/private.md" not in ix.state.files
        assert ix.store.keyword_search("quokka", 5) == []
        assert_index_matches_folder(ix, dense=False)


def test_symlinks_leaving_the_vault_are_indexed_when_allowed_and_removed_when_not(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    add_links(vault, tmp_path / "outside")
    idx = tmp_path / "idx"
    with open_indexer(vault, idx, cache_dir, follow_external_symlinks=True) as ix:
        r = ix.sync()
        assert {"passwd.md", "external/private.md", "Levain alias.md"} <= set(ix.state.files)
        assert r.skipped == {}
        assert ix.store.keyword_search("quokka", 5)[0].path == "passwd.md"
    with open_indexer(vault, idx, cache_dir) as ix:  # the setting turned off again
        r = ix.sync()
        assert r.deleted == 2 and set(r.skipped) == {"passwd.md", "external"}
        assert ix.store.keyword_search("quokka", 5) == []
        assert ix.store.count("external/private.md") == 0
        assert_index_matches_folder(ix, dense=False)


def test_follow_external_symlinks_setting_reaches_the_indexer(tmp_path: Path) -> None:
    from zettel_lsp.cli import build_parser
    from zettel_lsp.cli.common import _index_settings
    from zettel_lsp.server.settings import parse_settings

    assert IndexSettings().follow_external_symlinks is False
    settings, problems = parse_settings({"zettel": {"followExternalSymlinks": True}})
    assert problems == [] and settings.index_settings().follow_external_symlinks is True
    _, problems = parse_settings({"followExternalSymlinks": "yes"})
    assert problems and "followExternalSymlinks" in problems[0]
    args = build_parser().parse_args(["index", str(tmp_path), "--follow-external-symlinks"])
    assert _index_settings(args).follow_external_symlinks is True
    args = build_parser().parse_args(["index", str(tmp_path)])
    assert _index_settings(args).follow_external_symlinks is False


def test_saving_a_note_many_times_keeps_its_bm25_weight(tmp_path: Path, cache_dir: Path) -> None:
    """Issue #18: each save of a note re-indexes it. Its points are overwritten in place; were
    they deleted and written again, the shard would count the deleted copies in its document
    frequencies (until reloaded) and the note's own rare words would score less at every save.
    Also a note that shrinks keeps no points past its new chunks."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    note = vault / "Draft.md"
    long_text = "\n\n".join(
        f"## Part {i}\n" + "Sourdough words repeat here. " * 60 for i in range(4)
    )
    note.write_text(f"# Draft\nThe zyzzyva beetle.\n\n{long_text}\n", encoding="utf-8")
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        fresh = ix.store.bm25_search("zyzzyva", 1)
        assert fresh and fresh[0].path == "Draft.md"
        assert ix.store.count("Draft.md") > 1
        for i in range(30):  # the editor saves as the user types
            note.write_text(f"# Draft\nThe zyzzyva beetle, take {i}.\n", encoding="utf-8")
            ix.sync()
        again = ix.store.bm25_search("zyzzyva", 1)
        assert ix.store.count("Draft.md") == 1  # the shorter note left no stale chunk
        assert_index_matches_folder(ix, dense=False)
    # a fresh index of the same folder scores it the same (the saves left no trace)
    with open_indexer(vault, tmp_path / "idx2", cache_dir) as ix2:
        ix2.sync()
        ref = ix2.store.bm25_search("zyzzyva", 1)
    assert again[0].path == ref[0].path == "Draft.md"
    assert again[0].score == pytest.approx(ref[0].score, rel=0.02)


def test_a_stop_while_the_missing_vectors_are_queued_loses_nothing(
    tmp_path: Path, cache_dir: Path
) -> None:
    """A server that closes while it reads back the cards an interrupted index left without
    vectors stops between slices (it waited 13 s at 100k cards), and the next run queues them."""
    vault = make_big_vault(tmp_path / "vault", 300)
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()  # lexical only: closed before any vector, like an editor closed early
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        missing = ix.dense_pending
        assert missing >= 300
        asked: list[int] = []

        def stop_after_one_slice() -> bool:
            asked.append(1)
            return len(asked) > 1

        assert ix.embed_pending(should_stop=stop_after_one_slice) == 0
        assert len(asked) == 2  # stopped between slices, before the model ran
        assert ix.dense_pending == missing
        assert ix.embed_pending() == missing
        assert ix.dense_pending == 0
        assert_index_matches_folder(ix)


def test_an_edit_records_its_paths_as_pending_without_rewriting_the_state(
    embedded: Path, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before an edit's chunks reach the shard, its path is committed as pending (the other
    rows are not written). Stopped right after the shard write, the saved state still
    describes the old text; a later start redoes the pending card even when its text went
    back to what the state describes (the case that pending exists for), and the next state
    save clears it."""
    vault, idx, rel = embedded, tmp_path / "idx", "retrieval/BM25.md"
    card = vault / rel
    original = card.read_text()
    with open_embedded(vault, idx, cache_dir) as ix:
        saved = read_state(idx).files[rel]  # type: ignore[union-attr]
        card.write_text(original + "\nA new closing paragraph about zebrafish.\n")
        real_upsert = ix.store.upsert

        def upsert_then_stop(points: object) -> None:
            real_upsert(points)  # type: ignore[arg-type]
            raise RuntimeError("stopped after the shard write")

        monkeypatch.setattr(ix.store, "upsert", upsert_then_stop)
        with pytest.raises(RuntimeError, match="stopped after the shard write"):
            ix.sync([rel])
        ix.store.flush()
        assert ix.store.keyword_search("zebrafish", 5)[0].path == rel  # it reached the shard
        assert read_state(idx).files[rel] == saved  # type: ignore[union-attr]  # not written
        assert read_state(idx).pending == [rel]  # type: ignore[union-attr]
        # what a process killed here leaves behind (the folder's lock aside)
        copy_tree(idx, tmp_path / "crashed", ignore=shutil.ignore_patterns("lock"))
        monkeypatch.undo()
    card.write_text(original)  # back to the text the saved state describes
    with open_indexer(vault, tmp_path / "crashed", cache_dir) as ix:
        r = ix.sync()
        assert r.indexed == 1  # the pending card, though its file matches the state
        assert ix.store.keyword_search("zebrafish", 5) == []
        ix.embed_pending()  # its old vectors, found by text hash
        assert_index_matches_folder(ix)
        assert read_state(tmp_path / "crashed").pending == []  # type: ignore[union-attr]


def test_pending_paths_are_kept_until_a_state_save_clears_them(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    state = IndexState(vault=str(tmp_path), model="m", chunker="c")
    state.files["a.md"] = FileState(1, 2, "h", 1)
    write_state(folder, state)
    db = IndexDB(folder)
    try:
        saved = SavedState(db)
        assert saved.load() == state
        saved.save_pending(["b.md", "a.md", "b.md"])
        got = read_state(folder)
        assert got is not None and got.pending == ["a.md", "b.md"] and "a.md" in got.files
        state.files["c.md"] = FileState(3, 4, "i", 2)
        del state.files["a.md"]
        saved.save(state)  # the state's own (empty) pending list replaces the recorded one
    finally:
        db.close()
    assert read_state(folder) == state


def test_a_damaged_database_is_started_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "idx"
    write_state(folder, IndexState(vault=str(tmp_path), model="m", chunker="c"))
    assert read_state(folder) is not None
    (folder / DB_FILE).write_bytes(b"not a database, but as long as a few pages of one" * 200)
    assert read_state(folder) is None  # read-only: judged unreadable, left as it is
    with caplog.at_level(logging.WARNING):
        IndexDB(folder).close()
    assert "is unreadable" in caplog.text
    assert read_state(folder) is None  # an empty database now: a full reconcile
    assert (folder / DB_FILE).is_file()
