"""Compaction (issue #18): the shard is optimized where no one waits, keeps every point and every
answer, and never stands in the way of an editor that opens the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tests.index.conftest import assert_index_matches_folder
from tests.index.test_sync import index_cmd, make_big_vault
from zettel_lsp.index.compact import (
    COMPACT_AFTER_ENV,
    COMPACT_AFTER_POINTS,
    COMPACT_LOG,
    CompactionPolicy,
    compact,
    spawn_compactor,
)
from zettel_lsp.index.folder_lock import LOCK_FILE
from zettel_lsp.index.state import IndexState, read_state
from zettel_lsp.index.store import SHARD_DIR, STORE_LAYOUT
from zettel_lsp.index.store_api import IndexLockedError, point_id
from zettel_lsp.index.sync import Indexer


def random_vectors(ix: Indexer, rng: np.random.Generator) -> None:
    """Index the vault lexically and give every card's first chunk a random vector (no model:
    seconds, not minutes)."""
    ix.sync()
    ids = [point_id(p, 0) for p in ix.state.files]
    vectors = rng.normal(size=(len(ids), ix.embedder.dim)).astype("float32")
    for start in range(0, len(ids), 1000):
        ix.store.set_dense(ids[start : start + 1000], vectors[start : start + 1000].tolist())


def answers(ix: Indexer, vec: list[float]) -> dict[str, list[object]]:
    """Each leg's hits, as (point id, rounded score): the dense leg's top 20 (random vectors:
    no ties), BM25's best for a word only one card has, and the keyword leg's cards for it
    (the cards share their paragraphs, so longer lists would be full of ties)."""
    out: dict[str, list[object]] = {
        "dense": [(h.id, round(h.score, 4)) for h in ix.store.dense_search(vec, 20)]
    }
    for serial in ("17", "4321", "6998"):
        out[f"bm25 {serial}"] = [(h.id, round(h.score, 4)) for h in ix.store.bm25_search(serial, 1)]
        out[f"keyword {serial}"] = sorted(
            h.id for h in ix.store.keyword_search(f"Serial {serial}", 5, phrase=True)
        )
    # the keyword leg's every match with its score (none left out: the count's), a phrase too
    for q, phrase in (("Serial 17", False), ("zyxwv", False), ("graph", False), ("of the", True)):
        n = ix.store.keyword_count(q, phrase=phrase)
        hits = ix.store.keyword_search(q, n + 5, phrase=phrase)
        out[f"keyword all {q}"] = [n, sorted((h.id, round(h.score, 4)) for h in hits)]
        assert len(hits) == n, q
    return out


def test_writes_are_counted_and_a_compaction_resets_the_count(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault, index_dir = example
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        written = ix.state.uncompacted
        (vault / "New card.md").write_text("# New card\n\nA fresh thought about wikilinks.\n")
        ix.sync()
        ix.embed_pending()
        assert ix.state.uncompacted == written + 2  # one chunk: its point, then its vector
        (vault / "New card.md").unlink()
        ix.sync()
        assert ix.state.uncompacted == written + 3  # and its deletion
    assert written > 0  # the example index was written and never compacted
    result = compact(index_dir)
    assert result.points == written + 3
    state = read_state(index_dir)
    assert state is not None and state.uncompacted == 0
    assert (index_dir / LOCK_FILE).read_text() == ""  # released


def test_compaction_keeps_every_point_and_answer(tmp_path: Path, cache_dir: Path) -> None:
    # 7,000 points with dense vectors: the least that makes Edge's optimizer rewrite the
    # segment (measured: 3,000 do not). The vectors are random (no model: seconds, not minutes).
    vault = make_big_vault(tmp_path / "vault", 7000)
    index_dir = tmp_path / "index"
    rng = np.random.default_rng(0)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        random_vectors(ix, rng)
        query = rng.normal(size=ix.embedder.dim).astype("float32").tolist()
        before = answers(ix, query)
        points = ix.store.paths()
    assert all(before.values())
    result = compact(index_dir)
    assert result.changed  # the optimizer did rewrite it
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert ix.store.paths() == points
        assert answers(ix, query) == before
        assert ix.sync().indexed == 0  # the state still matches the shard: nothing to redo
    assert compact(index_dir).changed is False  # already optimal


def test_compaction_is_wanted_past_the_threshold_only(
    example: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index_dir = example

    def due(state: IndexState | None, index_dir: Path) -> int:
        return CompactionPolicy.current().due(state, index_dir)

    state = read_state(index_dir)
    assert state is not None
    monkeypatch.delenv(COMPACT_AFTER_ENV, raising=False)
    state.uncompacted = COMPACT_AFTER_POINTS - 1
    assert due(state, index_dir) == 0
    assert spawn_compactor(index_dir, state) is None
    state.uncompacted = COMPACT_AFTER_POINTS
    assert due(state, index_dir) == COMPACT_AFTER_POINTS
    monkeypatch.setenv(COMPACT_AFTER_ENV, "10")
    state.uncompacted = 10
    assert due(state, index_dir) == 10
    policy = CompactionPolicy.current()
    assert policy.due_before_embedding(state, index_dir, 10) == 10
    assert policy.due_before_embedding(state, index_dir, 9) == 0  # a short dense phase
    assert due(state, index_dir.parent / "no index here") == 0
    assert due(None, index_dir) == 0
    state.backend = "qdrant:http://localhost:6333"  # a server optimizes its own segments
    assert due(state, index_dir) == 0


def test_the_detached_compactor_compacts_and_logs(
    example: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index_dir = example
    monkeypatch.setenv(COMPACT_AFTER_ENV, "1")
    proc = spawn_compactor(index_dir, read_state(index_dir))  # type: ignore[arg-type]
    assert proc is not None
    assert proc.wait(timeout=120) == 0
    state = read_state(index_dir)
    assert state is not None and state.uncompacted == 0
    assert "compacted" in (index_dir / COMPACT_LOG).read_text()
    assert spawn_compactor(index_dir, state) is None  # nothing left to do


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from zettel_lsp.index.folder_lock import FolderLock
    lock = FolderLock(Path(sys.argv[1]), purpose=sys.argv[2])
    print("held", flush=True)
    time.sleep(120)
    """
)


def hold_lock(index_dir: Path, purpose: str) -> subprocess.Popen[str]:
    """A process that holds the folder's lock as a compactor (``compacting``) or as an indexer."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(index_dir), purpose],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_an_editor_opening_the_index_stops_a_running_compactor(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault, index_dir = example
    holder = hold_lock(index_dir, "compacting")
    try:
        t0 = time.monotonic()
        with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
            assert ix.state.files
            assert holder.wait(timeout=5) != 0  # stopped (SIGTERM), not finished
            assert (index_dir / LOCK_FILE).read_text().strip() == str(os.getpid())
        assert time.monotonic() - t0 < 60
    finally:
        holder.kill()
        holder.wait()


def test_another_indexer_is_never_stopped(example: tuple[Path, Path], cache_dir: Path) -> None:
    vault, index_dir = example
    holder = hold_lock(index_dir, "")
    try:
        with pytest.raises(IndexLockedError, match=rf"pid {holder.pid}\)"):
            Indexer(vault, index_dir, cache_dir=cache_dir)
        assert holder.poll() is None  # still running
        with pytest.raises(IndexLockedError, match="in use"):
            compact(index_dir)
    finally:
        holder.kill()
        holder.wait()


def test_cli_index_compacts_at_the_end(tmp_path: Path, cache_dir: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(5):
        (vault / f"Note {i}.md").write_text(
            f"# Note {i}\n\nAbout topic {i} and [[Note {i + 1}]].\n"
        )
    cmd = [sys.executable, "-m", "zettel_lsp", "index", str(vault), "--json"]
    cmd += ["--index-dir", str(tmp_path / "index"), "--cache-dir", str(cache_dir)]
    env = {**os.environ, COMPACT_AFTER_ENV: "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=300)
    summary = json.loads(out.stdout)
    # 5 chunks written and compacted before embedding (as many to embed), then their 5 vectors
    assert summary["compacted_before_embedding"]["points"] == 5
    assert summary["compacted"]["points"] == 5
    assert "compacting the index" in out.stderr
    state = read_state(tmp_path / "index")
    assert state is not None and state.uncompacted == 0
    # below the threshold (the default): no compaction
    again = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(again.stdout)["compacted"] is None


def field_memory(index_dir: Path) -> dict[str, str]:
    from qdrant_edge import EdgeShard

    shard = EdgeShard.load(str(index_dir / SHARD_DIR))
    try:
        schema = shard.info().payload_schema
        return {name: str(getattr(info.params, "memory", None)) for name, info in schema.items()}
    finally:
        shard.close()


def vector_memory(index_dir: Path) -> dict[str, object]:
    """What Edge records for each vector (its own configuration file)."""
    config = json.loads((index_dir / SHARD_DIR / "edge_config.json").read_text())
    out = {name: v.get("memory") for name, v in config["vectors"].items()}
    out.update({name: v.get("memory") for name, v in config["sparse_vectors"].items()})
    return out


def test_a_new_shard_keeps_everything_cold(tmp_path: Path, cache_dir: Path) -> None:

    vault = make_big_vault(tmp_path / "vault", 20)
    with Indexer(vault, tmp_path / "index", cache_dir=cache_dir) as ix:
        ix.sync()
        assert ix.state.store_layout == STORE_LAYOUT
    assert set(field_memory(tmp_path / "index").values()) == {"Memory.Cold"}
    assert vector_memory(tmp_path / "index") == {"dense": "cold", "bm25": "cold"}
    state = read_state(tmp_path / "index")
    assert state is not None and state.store_layout == STORE_LAYOUT
    assert CompactionPolicy.current().due(state, tmp_path / "index") == 0  # 20 points: nothing due


def test_a_shard_in_the_older_layout_is_moved_by_its_next_compaction(
    tmp_path: Path, cache_dir: Path
) -> None:
    from qdrant_edge import (
        EdgeShard,
        PayloadSchemaType,
        TextIndexParams,
        TokenizerType,
        UpdateOperation,
    )

    vault = make_big_vault(tmp_path / "vault", 7000)  # enough for the optimizer to rewrite
    index_dir = tmp_path / "index"
    rng = np.random.default_rng(1)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        random_vectors(ix, rng)
        ix.state.store_layout = 1
        ix.state.uncompacted = 0
    # what an older version wrote: the text index in memory, the vectors without a placement
    shard = EdgeShard.load(str(index_dir / SHARD_DIR))
    shard.update(UpdateOperation.delete_field_index("text"))
    shard.update(
        UpdateOperation.create_field_index(
            "text",
            TextIndexParams(tokenizer=TokenizerType.Word, lowercase=True, phrase_matching=True),
        )
    )
    shard.update(UpdateOperation.delete_field_index("path"))
    shard.update(UpdateOperation.create_field_index("path", PayloadSchemaType.Keyword))
    shard.close()
    config_file = index_dir / SHARD_DIR / "edge_config.json"
    config = json.loads(config_file.read_text())
    for v in [*config["vectors"].values(), *config["sparse_vectors"].values()]:
        v.pop("memory", None)
    config_file.write_text(json.dumps(config))
    memory = field_memory(index_dir)
    assert memory["text"] != "Memory.Cold" and memory["path"] != "Memory.Cold"
    query = rng.normal(size=384).astype("float32").tolist()
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        before = answers(ix, query)
    state = read_state(index_dir)
    assert state is not None and state.uncompacted == 0
    assert CompactionPolicy.current().due(state, index_dir) == 1  # due: the layout, not the points
    result = compact(index_dir)
    assert result.changed
    assert set(field_memory(index_dir).values()) == {"Memory.Cold"}
    assert vector_memory(index_dir) == {"dense": "cold", "bm25": "cold"}
    state = read_state(index_dir)
    assert state is not None and state.store_layout == STORE_LAYOUT
    assert CompactionPolicy.current().due(state, index_dir) == 0
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert answers(ix, query) == before
        assert ix.sync().indexed == 0


def test_a_vector_added_later_is_made_cold_by_the_next_compaction(
    tmp_path: Path, cache_dir: Path
) -> None:
    """Edge gives a vector added to an existing shard (the multilingual one, or the dense one
    after a model change) its default placement, read into memory at every open. The next
    compaction declares it cold, without losing a value."""
    vault = make_big_vault(tmp_path / "vault", 300)
    index_dir = tmp_path / "index"
    rng = np.random.default_rng(3)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        random_vectors(ix, rng)
    assert compact(index_dir).points > 0
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert ix.store.ensure_vector("dense_ml", 16)
        ids = [point_id(p, 0) for p in sorted(ix.state.files)][:100]
        ix.store.set_dense(ids, rng.normal(size=(100, 16)).tolist(), using="dense_ml")
        query = rng.normal(size=16).tolist()
        before = [
            (h.id, round(h.score, 4)) for h in ix.store.dense_search(query, 10, using="dense_ml")
        ]
    assert vector_memory(index_dir)["dense_ml"] is None  # Edge's default
    compact(index_dir)
    assert vector_memory(index_dir) == {"dense": "cold", "dense_ml": "cold", "bm25": "cold"}
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        after = [
            (h.id, round(h.score, 4)) for h in ix.store.dense_search(query, 10, using="dense_ml")
        ]
    assert after == before and len(after) == 10


def test_past_the_exact_limit_search_uses_the_int8_copy_and_keeps_its_recall(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layout 3: a compacted shard keeps an int8 copy of the dense vectors in memory. Past
    EXACT_DENSE_POINTS (lowered here: 7,000 points instead of 100,000) search walks the HNSW
    graph over that copy and rescores on the originals: nearly the exact answers, and nothing
    is searched ahead. At or below it, search stays exact on the originals, as before."""
    from zettel_lsp.index import store as store_module

    vault = make_big_vault(tmp_path / "vault", 7000)
    index_dir = tmp_path / "index"
    rng = np.random.default_rng(5)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        random_vectors(ix, rng)
        queries = rng.normal(size=(20, ix.embedder.dim)).astype("float32").tolist()
        exact = [[h.id for h in ix.store.dense_search(q, 10)] for q in queries]
    assert compact(index_dir).changed
    segments = list((index_dir / SHARD_DIR / "segments").glob("*/segment.json"))
    dense = [json.loads(p.read_text())["config"]["vector_data"]["dense"] for p in segments]
    assert any(d["index"]["type"] == "hnsw" and d["quantization_config"] for d in dense)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ids = [point_id(p, 0) for p in ix.state.files]  # the points random_vectors set
        # at the limit: exact on the originals, the answers of the uncompacted shard
        assert [[h.id for h in ix.store.dense_search(q, 10)] for q in queries] == exact
        assert ix.store.warm(ids, ix.embedder.dim) == len(ids) == 7000
        monkeypatch.setattr(store_module, "EXACT_DENSE_POINTS", 100)
        found = [[h.id for h in ix.store.dense_search(q, 10)] for q in queries]
        assert ix.store.warm(ids, ix.embedder.dim) == 0  # nothing to search ahead
        # the same graph walked on the originals (layout 2's search)
        monkeypatch.setattr(store_module, "_RESCORED", store_module._ORIGINALS)
        originals = [[h.id for h in ix.store.dense_search(q, 10)] for q in queries]

    def recall(got: list[list[int]]) -> float:
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, exact, strict=True)]))

    # random vectors are the graph's worst case (all distances alike): what matters is that
    # the int8 copy loses nothing against the graph on the originals
    assert recall(found) >= recall(originals) - 0.02, (recall(found), recall(originals))
    assert recall(found) >= 0.85


def int8_graphs(index_dir: Path) -> list[bool]:
    """Per segment with an HNSW graph of ``dense``: whether it has the int8 copy (Edge's
    segment files: the only place that tells)."""
    segments = (index_dir / SHARD_DIR / "segments").glob("*/segment.json")
    dense = [json.loads(p.read_text())["config"]["vector_data"]["dense"] for p in segments]
    return [bool(d.get("quantization_config")) for d in dense if d["index"]["type"] == "hnsw"]


def test_a_graph_without_the_int8_copy_gets_it_at_the_next_compaction(
    tmp_path: Path, cache_dir: Path
) -> None:
    """A shard compacted in layout 2 has an HNSW graph and no int8 copy; the state's older
    layout makes its next compaction due, which adds the copy."""
    from qdrant_edge import Distance, EdgeConfig, EdgeShard, EdgeVectorParams, Memory

    vault = make_big_vault(tmp_path / "vault", 7000)
    index_dir = tmp_path / "index"
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        random_vectors(ix, np.random.default_rng(6))
        ix.state.store_layout = 2
    # compacted as layout 2 did: cold vectors without an int8 copy
    shard = EdgeShard.load(
        str(index_dir / SHARD_DIR),
        EdgeConfig(
            vectors={
                "dense": EdgeVectorParams(size=384, distance=Distance.Cosine, memory=Memory.Cold)
            }
        ),
    )
    assert shard.optimize()
    shard.close()
    assert int8_graphs(index_dir) == [False]
    state = read_state(index_dir)
    assert state is not None
    state.uncompacted = 0
    assert CompactionPolicy.current().due(state, index_dir) == 1  # the layout is due
    assert compact(index_dir).changed
    assert int8_graphs(index_dir) == [True]


# ------------------------------------------- the compaction between the CLI's two phases


def test_index_compacts_between_its_phases_when_both_are_large(
    example: tuple[Path, Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from zettel_lsp.cli.index import _compact_before_embedding
    from zettel_lsp.progress import TerminalProgress

    vault, index_dir = example
    quiet = TerminalProgress(io.StringIO())
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.state.uncompacted = 0
        (vault / "Fresh.md").write_text("# Fresh\n\nA note about quokkas and their islands.\n")
        ix.sync()
        assert ix.dense_pending == ix.state.uncompacted == 1
        monkeypatch.setenv(COMPACT_AFTER_ENV, "2")
        assert _compact_before_embedding(ix, quiet) is None  # nothing worth it yet
        for i in range(4):
            (vault / f"More {i}.md").write_text(f"# More {i}\n\nQuokkas, part {i}.\n")
        ix.sync()
        assert ix.dense_pending == ix.state.uncompacted == 5
        monkeypatch.setenv(COMPACT_AFTER_ENV, "6")
        assert _compact_before_embedding(ix, quiet) is None  # both below the threshold
        monkeypatch.setenv(COMPACT_AFTER_ENV, "5")
        written = ix.state.uncompacted
        ix.state.uncompacted = 0
        assert _compact_before_embedding(ix, quiet) is None  # a long dense phase, few points
        ix.state.uncompacted = written
        before = sorted(h.path for h in ix.store.keyword_search("quokkas", 10))
        assert len(before) == 5
        done = _compact_before_embedding(ix, quiet)
        assert done is not None and done["points"] == 5
        assert ix.state.uncompacted == 0
        # the shard was closed and opened again in place: it answers and takes writes
        assert sorted(h.path for h in ix.store.keyword_search("quokkas", 10)) == before
        (vault / "Later.md").write_text("# Later\n\nWombats dig burrows.\n")
        ix.sync()
        ix.embed_pending()
        assert ix.store.keyword_search("wombats", 5)[0].path == "Later.md"
        assert_index_matches_folder(ix)
    state = read_state(index_dir)
    assert state is not None and state.store_layout == STORE_LAYOUT


def test_the_cli_compacts_before_embedding_and_ends_with_a_whole_index(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = make_big_vault(tmp_path / "vault", 60)
    index_dir = tmp_path / "index"
    env = {**os.environ, COMPACT_AFTER_ENV: "30"}
    out = subprocess.run(
        [*index_cmd(vault, index_dir, cache_dir), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    summary = json.loads(out.stdout)
    assert summary["compacted_before_embedding"]["points"] == summary["chunks"] == 60
    assert "compacting the lexical index (60 points) before embedding" in out.stderr
    assert summary["embedded"] == 60
    assert summary["compacted"]["points"] == 60  # the vectors written since
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert ix.sync().indexed == 0
        assert_index_matches_folder(ix)
        assert ix.store.keyword_search("Serial 17", 3, phrase=True)[0].path == "card 0017.md"


@pytest.mark.parametrize("after", [0.0, 1.5])
def test_killed_during_or_after_the_compaction_between_phases_the_index_converges(
    tmp_path: Path, cache_dir: Path, after: float
) -> None:
    vault = make_big_vault(tmp_path / "vault", 400)
    index_dir = tmp_path / "index"
    env = {**os.environ, COMPACT_AFTER_ENV: "100"}
    proc = subprocess.Popen(
        index_cmd(vault, index_dir, cache_dir),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "compacting the lexical index" in line:
            break
    else:
        pytest.fail("the index ended without compacting between its phases")
    time.sleep(after)
    proc.kill()
    proc.wait(timeout=30)
    assert proc.returncode == -9
    (vault / "card 0003.md").unlink()
    (vault / "card 0001.md").write_text("# Rewritten\nCompletely new text about axolotls.\n")
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert len(ix.state.files) == 399
        assert ix.store.keyword_search("axolotls", 5)[0].path == "card 0001.md"


def test_a_failed_compaction_between_phases_leaves_the_shard_open_and_the_run_going(
    example: tuple[Path, Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from zettel_lsp.cli.index import _compact_before_embedding
    from zettel_lsp.index.store import EdgeStore
    from zettel_lsp.progress import TerminalProgress

    vault, index_dir = example
    for i in range(3):
        (vault / f"Extra {i}.md").write_text(f"# Extra {i}\n\nPangolins, part {i}.\n")
    monkeypatch.setenv(COMPACT_AFTER_ENV, "3")

    def full_disk(path: Path) -> object:
        raise OSError(28, "No space left on device")

    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.state.uncompacted = 0
        ix.sync()
        written = ix.state.uncompacted
        monkeypatch.setattr(EdgeStore, "load_for_compaction", staticmethod(full_disk))
        with pytest.raises(OSError, match="No space left"):
            ix.compact()
        # the shard was opened again: it answers and takes writes; nothing counted as compacted
        assert ix.state.uncompacted == written
        assert len(ix.store.keyword_search("pangolins", 10)) == 3
        err = io.StringIO()
        monkeypatch.setattr("sys.stderr", err)
        assert _compact_before_embedding(ix, TerminalProgress(io.StringIO())) is None
        assert "compacting failed" in err.getvalue() and "embedding goes on" in err.getvalue()
        monkeypatch.undo()
        ix.embed_pending()
        assert_index_matches_folder(ix)


# ------------------------------------------- the compaction in a child (the language server's)


def test_compact_in_child_keeps_every_answer_and_a_stopped_one_loses_nothing(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's compaction between its phases: the optimizer in a child process, the shard
    closed meanwhile and open again after, with the same answers; stopped at once, the child is
    ended and the shard opens with every point, still uncompacted."""
    vault = make_big_vault(tmp_path / "vault", 300)
    monkeypatch.setenv(COMPACT_AFTER_ENV, "100")
    rng = np.random.default_rng(7)
    with Indexer(vault, tmp_path / "index", cache_dir=cache_dir) as ix:
        random_vectors(ix, rng)
        vec = rng.normal(size=ix.embedder.dim).tolist()
        before = answers(ix, vec)
        written = ix.state.uncompacted
        assert written >= 300
        assert ix.compact(in_child=True, should_stop=lambda: True) is None  # stopped: nothing done
        assert ix.state.uncompacted == written
        assert answers(ix, vec) == before
        done = ix.compact(in_child=True)
        assert done is not None and done.points == written
        assert ix.state.uncompacted == 0 and ix.state.store_layout == STORE_LAYOUT
        assert answers(ix, vec) == before
        (vault / "Later.md").write_text("# Later\n\nWombats dig burrows.\n")
        ix.sync()  # it takes writes again
        assert ix.store.keyword_search("wombats", 5)[0].path == "Later.md"
    state = read_state(tmp_path / "index")
    assert state is not None and state.uncompacted == 1
