"""Reading the stored dense vectors once after start-up (issue #18): the vectors are
memory-mapped and read on demand, so a session's first dense searches paid for the reading
(32 ms median, 103 ms p95 at 100k cards, against 4-5 ms after). ``Vault.warm_store`` reads
them a slice at a time; it must read every stored vector once, stop when told, and leave the
answers as they were."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from zettel_lsp.index import page_cache
from zettel_lsp.index import store as store_module
from zettel_lsp.vault import Vault


def test_warming_reads_every_stored_vector_and_changes_no_answer(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault_dir, index_dir = example
    with Vault(vault_dir, index_dir, cache_dir=cache_dir) as vault:
        vault.open()
        chunks = sum(f.chunks for f in vault.indexer.state.files.values() if f.dense)
        assert chunks > 0
        before = [(r.path, r.score) for r in vault.engine.search("rising bread dough")]
        assert vault.warm_store() == chunks
        assert [(r.path, r.score) for r in vault.engine.search("rising bread dough")] == before


def test_warming_goes_a_slice_at_a_time_and_stops_when_told(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault_dir, index_dir = example
    old = store_module.WARM_SLICE
    store_module.WARM_SLICE = 5
    try:
        with Vault(vault_dir, index_dir, cache_dir=cache_dir) as vault:
            vault.open()
            chunks = sum(f.chunks for f in vault.indexer.state.files.values() if f.dense)
            assert chunks > 10
            asked: list[int] = []

            def stop_after_two() -> bool:
                asked.append(1)
                return len(asked) > 2

            assert vault.warm_store(stop_after_two) == 10  # two slices, then the stop
            assert vault.warm_store(lambda: True) == 0
            assert vault.warm_store() == chunks
    finally:
        store_module.WARM_SLICE = old


def test_the_shard_is_read_ahead_before_it_loads_except_its_vectors(
    example: tuple[Path, Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``EdgeShard.load`` faults in a little of many files while it holds the interpreter lock;
    the files are read first in plain reads (docs/performance.md: the first answer at 100k
    cards with the shard not cached, 2.2-2.7 s -> 0.9-1.5 s). Not the dense vectors' storage,
    which searches read on demand."""
    vault_dir, index_dir = example
    shard = index_dir / store_module.SHARD_DIR
    files = [p for p in shard.rglob("*") if p.is_file()]
    vectors = [p for p in files if p.name == "matrix.dat" or p.name.startswith("chunk_")]
    assert vectors and sum(p.stat().st_size for p in vectors) > 0
    on_demand = store_module._read_on_demand(shard)
    expected = sum(
        p.stat().st_size
        for p in files
        if p not in vectors and not on_demand(p.relative_to(shard).as_posix())
    )
    assert expected > 0
    for p in files:
        evict(p)
    assert store_module.read_ahead(shard) == expected
    # now every file is in the page cache: nothing to read (0.15 s at 100k cards otherwise)
    assert store_module.read_ahead(shard) == 0

    calls: list[Path] = []
    threads: list[str] = []
    real = store_module.read_ahead
    real_drop = store_module.drop_cached_originals
    loads: list[int] = []

    def recording(path: Path) -> int:
        threads.append(threading.current_thread().name)
        n = real(path)
        calls.append(path)
        return n

    def drop(path: Path, dim: int) -> int:  # the step right before EdgeShard.load
        loads.append(len(calls))  # how many read-aheads had finished by then
        return real_drop(path, dim)

    monkeypatch.setattr(store_module, "read_ahead", recording)
    monkeypatch.setattr(store_module, "drop_cached_originals", drop)
    with Vault(vault_dir, index_dir, cache_dir=cache_dir) as vault:
        vault.open()
        assert vault.engine.search("rising bread dough")
    assert calls == [shard]
    # on a thread of its own, beside the state's loading, and done before the shard loads
    assert threads == ["zettel-read-ahead"]
    assert loads and loads[0] == 1


def evict(path: Path) -> None:
    """Drop the file's pages from the page cache (written back first)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def fake_shard(root: Path, points: int, dim: int, *, int8: bool) -> Path:
    """A shard folder's dense storage only, as Edge lays it out (sparse files, no disk used)."""
    seg = root / "segments" / "0f0e" / "vector_storage-dense"
    seg.mkdir(parents=True)
    with (seg / "matrix.dat").open("wb") as fh:
        fh.truncate(points * 4 * dim)
    if int8:
        (seg / "quantized.data").write_bytes(b"\0" * 16)
    return seg / "matrix.dat"


def test_only_a_graph_searched_shards_originals_are_left_to_on_demand_reads(
    tmp_path: Path,
) -> None:
    """Past exact search, with an int8 copy to search on, the originals are dropped from the
    page cache and read a page at a time; below it (every vector read by warm_store) or
    without the int8 copy (a layout-2 shard) they are left alone."""
    big = store_module.EXACT_DENSE_POINTS + 1
    matrix = fake_shard(tmp_path / "a", big, 8, int8=True)
    assert store_module.searched_originals(tmp_path / "a", 8) == [matrix]
    assert store_module.drop_cached_originals(tmp_path / "a", 8) == big * 32
    fake_shard(tmp_path / "b", big - 1, 8, int8=True)
    assert store_module.searched_originals(tmp_path / "b", 8) == []
    assert store_module.drop_cached_originals(tmp_path / "b", 8) == 0
    fake_shard(tmp_path / "c", big, 8, int8=False)
    assert store_module.searched_originals(tmp_path / "c", 8) == []


def test_a_compacted_segments_search_files_are_read_after_the_open_may_go(
    tmp_path: Path,
) -> None:
    """What the open maps without reading (payloads, postings, the BM25 index and vectors,
    the path and language maps of a compacted segment) is not read before it: at 100k cards
    the open of a shard not in the page cache took 0.63 s with them, 0.33-0.40 s without. The
    read-ahead's thread reads them next, for the searches. An appendable segment's are read
    before the open: it builds its in-memory indexes from them."""
    shard = tmp_path / "shard"
    done = shard / "segments" / "compacted"
    live = shard / "segments" / "appendable"
    files = {
        "wal/open-1": False,
        "segments/compacted/id_tracker.mappings": False,
        "segments/compacted/vector_storage-dense/quantized.data": False,
        "segments/compacted/vector_index-dense/links_compressed.bin": False,
        "segments/compacted/payload_storage/page_0.dat": True,
        "segments/compacted/payload_index/f-text-text/postings.dat": True,
        "segments/compacted/payload_index/f-path-map/point_to_values.bin": True,
        "segments/compacted/vector_index-bm25/inverted_index.dat": True,
        "segments/compacted/vector_storage-bm25/store/page_0.dat": True,
        "segments/appendable/mutable_id_tracker.mappings": False,
        "segments/appendable/payload_storage/page_0.dat": False,
        "segments/appendable/vector_storage-bm25/store/page_0.dat": False,
    }
    for rel in files:
        (shard / rel).parent.mkdir(parents=True, exist_ok=True)
        (shard / rel).write_bytes(b"x" * 100)
    assert done.is_dir() and live.is_dir()
    which = store_module._read_on_demand(shard)
    assert {rel: which(rel) for rel in files} == files
    for rel in files:
        evict(shard / rel)
    assert store_module.read_ahead(shard) == 100 * sum(1 for v in files.values() if not v)
    # the searches' files are read too, after the open may go (ReadAhead's thread)
    assert not any(page_cache.cached(str(shard / rel)) for rel, v in files.items() if v)
    ahead = store_module.ReadAhead(tmp_path)
    ahead.wait_for_open()
    ahead.thread.join(timeout=30)
    assert all(page_cache.cached(str(shard / rel)) for rel in files)
