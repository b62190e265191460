"""The index verifier (issue #12): a consistent index verifies clean, and each kind of damage
(lost points, a wrong vector, phantom points, an edit or a rename never synced) is found and
named. Real model, real Edge shard, a copy of examples/vault."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import copy_indexed
from zettel_lsp.cli import main
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store_api import ChunkPoint, point_id
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.index.verify import VerifyReport, quick_check, verify, verify_folder

CARD = "baking/Autolyse.md"
OTHER = "baking/Gluten.md"


@pytest.fixture
def indexed(indexed_example: Path) -> Path:
    """examples/vault indexed once (lexical and dense), closed: tests copy it."""
    return indexed_example


@pytest.fixture
def ix(indexed: Path, tmp_path: Path, cache_dir: Path) -> Iterator[Indexer]:
    """An open indexer on a private copy of the indexed vault and its index folder."""
    copy_indexed(indexed, tmp_path / "vault", tmp_path / "index")
    with Indexer(tmp_path / "vault", tmp_path / "index", IndexSettings(), cache_dir=cache_dir) as i:
        yield i


def kinds(report: VerifyReport) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in report.mismatches:
        out.setdefault(m.kind, set()).add(m.path)
    return out


def test_a_consistent_index_verifies_clean(ix: Indexer) -> None:
    report = verify(ix, sample=None)
    assert report.ok, report.format()
    assert report.cards_on_disk == report.cards_in_state == report.cards_in_shard == 45
    assert (
        report.points_checked
        == report.chunks_expected
        == sum(f.chunks for f in ix.state.files.values())
    )
    assert report.keyword_probes == 45
    assert report.vectors_checked == report.chunks_expected
    assert report.min_cosine is not None and report.min_cosine > 0.999
    data = report.to_json()
    assert data["ok"] is True and data["mismatches"] == []
    json.dumps(data)  # serialisable as is


def test_a_sample_checks_fewer_cards_but_always_the_focus_cards(ix: Indexer) -> None:
    report = verify(ix, sample=3, seed=1, focus=[CARD])
    assert report.ok, report.format()
    assert report.keyword_probes == 4 and report.vector_cards == 4
    assert report.points_checked == report.chunks_expected  # chunks: always every card


def test_lost_points_are_found(ix: Indexer) -> None:
    ix.store.delete_paths([CARD])
    ix.store.flush()
    found = kinds(verify(ix, sample=None))
    assert CARD in found["missing"]  # no points in the shard
    assert CARD in found["chunk"]  # each chunk: no point with its id
    assert set().union(*found.values()) == {CARD}


def test_a_vector_of_another_chunk_is_drift(ix: Indexer) -> None:
    [(_, _, other_vec)] = ix.store.retrieve([point_id(OTHER, 0)], with_dense=True)
    ix.store.set_dense([point_id(CARD, 0)], [other_vec])
    ix.store.flush()
    report = verify(ix, sample=0, focus=[CARD])  # no random sample: the focus card only
    assert kinds(report) == {"drift": {CARD}}, report.format()
    assert report.min_cosine is not None and report.min_cosine < 0.99
    assert "chunk 0" in report.mismatches[0].reason
    # with the other card re-embedded too, the report names whose vector it is
    report = verify(ix, sample=0, focus=[CARD, OTHER])
    assert kinds(report) == {"drift": {CARD}}, report.format()
    assert f"it is the embedding of {OTHER} chunk 0" in report.mismatches[0].reason


def test_phantom_points_are_found(ix: Indexer) -> None:
    [(_, payload, vec)] = ix.store.retrieve([point_id(CARD, 0)], with_dense=True)
    ghost = dict(payload, path="ghost.md")
    extra = dict(payload, chunk=99)
    ix.store.upsert(
        [
            ChunkPoint(point_id("ghost.md", 0), ghost, "ghost text", vec),
            ChunkPoint(point_id(CARD, 99), extra, "extra text", vec),
        ]
    )
    ix.store.flush()
    found = kinds(verify(ix, sample=None))
    assert found["phantom"] == {"ghost.md"}
    assert found["miscounted"] == {CARD}  # one point more than its chunks


def test_a_changed_payload_is_found(ix: Indexer) -> None:
    [(pid, payload, vec)] = ix.store.retrieve([point_id(CARD, 0)], with_dense=True)
    ix.store.upsert([ChunkPoint(pid, dict(payload, line_end=9999), "x", vec)])
    ix.store.flush()
    report = verify(ix, sample=0)
    assert kinds(report) == {"chunk": {CARD}}
    assert "line_end '9999' != '6'" in report.mismatches[0].reason


def test_edits_and_renames_not_synced_are_found(ix: Indexer) -> None:
    card = ix.vault / CARD
    card.write_text(card.read_text(encoding="utf-8") + "\nA new line.\n", encoding="utf-8")
    (ix.vault / OTHER).rename(ix.vault / "baking/Gluten network.md")
    (ix.vault / "New card.md").write_text("# New card\nFresh words.\n", encoding="utf-8")
    found = kinds(verify(ix, sample=None))
    assert found["stale"] == {CARD}
    assert found["missing"] == {"baking/Gluten network.md", "New card.md"}
    assert found["phantom"] == {OTHER}
    ix.sync()
    ix.embed_pending()
    assert verify(ix, sample=None).ok  # and a sync repairs it all


def test_an_edit_that_keeps_size_and_mtime_is_stale(ix: Indexer) -> None:
    """The verifier hashes every file: an edit a size + mtime check cannot see is found."""
    path = ix.vault / CARD
    st = path.stat()
    data = bytearray(path.read_bytes())
    i = data.index(b"e")
    data[i] = ord("a")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert kinds(verify(ix, sample=0)) == {"stale": {CARD}}


def test_quick_check_compares_the_saved_state_with_the_folder(ix: Indexer) -> None:
    memo: dict[str, tuple[int, int, str | None]] = {}
    report = quick_check(ix.vault, ix.index_dir, memo=memo)
    assert report.ok and report.cards_on_disk == report.cards_in_state == 45, report.format()
    assert len(memo) == 45
    card = ix.vault / CARD
    card.write_text(card.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    (ix.vault / OTHER).unlink()
    (ix.vault / "New card.md").write_text("# New card\n", encoding="utf-8")
    report = quick_check(ix.vault, ix.index_dir, memo=memo)  # the memo sees the new size
    assert kinds(report) == {"stale": {CARD}, "phantom": {OTHER}, "missing": {"New card.md"}}
    ix.sync()  # saves the state, vectors still to come
    report = quick_check(ix.vault, ix.index_dir, memo=memo)
    assert kinds(report) == {"vector": {CARD, "New card.md"}}, report.format()
    assert quick_check(ix.vault, ix.index_dir, dense=False, memo=memo).ok
    ix.embed_pending()
    assert quick_check(ix.vault, ix.index_dir, memo=memo).ok


def test_verify_folder_leaves_an_index_of_another_vault_alone(
    indexed: Path, tmp_path: Path, cache_dir: Path
) -> None:
    shutil.copytree(indexed / "vault", tmp_path / "vault")
    shutil.copytree(indexed / "index", tmp_path / "index")  # its state names the other vault
    before = read_state(tmp_path / "index")
    report = verify_folder(tmp_path / "vault", tmp_path / "index", cache_dir=cache_dir)
    assert kinds(report) == {"index": {str(tmp_path / "index")}}
    assert "belongs to the vault" in report.mismatches[0].reason
    assert read_state(tmp_path / "index") == before  # not wiped
    empty = verify_folder(tmp_path / "vault", tmp_path / "nothing", cache_dir=cache_dir)
    assert "no index state" in empty.mismatches[0].reason
    assert not (tmp_path / "nothing").exists()


def test_cli_index_verify_exits_0_on_a_clean_index(
    indexed: Path, tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_indexed(indexed, tmp_path / "vault", tmp_path / "index")
    args = ["index", str(tmp_path / "vault"), "--index-dir", str(tmp_path / "index")]
    args += ["--cache-dir", str(cache_dir), "--verify", "--sample", "5", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verify"]["ok"] is True and out["verify"]["keyword_probes"] == 5
    # damage it: the same command now exits 1 and names the card
    with Indexer(
        tmp_path / "vault", tmp_path / "index", IndexSettings(), cache_dir=cache_dir
    ) as ix:
        [(_, _, other_vec)] = ix.store.retrieve([point_id(OTHER, 0)], with_dense=True)
        ix.store.set_dense([point_id(CARD, 0)], [other_vec])
    assert main([*args[:-3], "--sample", "-1"]) == 1
    assert f"drift: {CARD}" in capsys.readouterr().out
    # --verify-only checks the index as it is: with no vector re-embedded (sample 0) the
    # drift goes unseen; re-embedding every card finds it (no sync repaired it)
    assert main([*args[:-4], "--verify-only", "--sample", "0"]) == 0
    assert "Verify OK" in capsys.readouterr().out
    assert main([*args[:-4], "--verify-only", "--sample", "-1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verify"]["mismatch_counts"] == {"drift": 1}


def test_a_card_in_another_language_verifies_clean(ix: Indexer) -> None:
    """Its points carry its language (BM25 stemmer): the verifier expects the same one."""
    (ix.vault / "Levain en français.md").write_text(
        "# Levain en français\n\nLe levain est un mélange de farine et d'eau, fermenté par des "
        "levures sauvages et des bactéries lactiques. On le nourrit chaque jour avant de faire "
        "le pain, et on garde une partie pour la prochaine fois.\n",
        encoding="utf-8",
    )
    ix.sync()
    assert ix.state.files["Levain en français.md"].lang == "fr"
    report = verify(ix, sample=0, focus=["Levain en français.md"])
    assert report.ok, report.format()
