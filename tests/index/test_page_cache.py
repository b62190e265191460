"""The page-cache check that lets the read-ahead skip files already cached (Linux)."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from pathlib import Path

import pytest

from zettel_lsp.index.page_cache import cached, release_mapped

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore: Linux")


def test_a_file_is_cached_after_a_read_and_not_after_eviction(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(os.urandom(3 << 20))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        assert not cached(str(path))
        os.pread(fd, 4096, 1 << 20)  # one page (and the kernel's read-ahead around it)
        assert not cached(str(path))  # not every page
        while os.read(fd, 1 << 20):
            pass
        assert cached(str(path))
    finally:
        os.close(fd)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert cached(str(tmp_path / "empty"))
    assert not cached(str(tmp_path / "missing"))


def _mapped_rss(addr: int) -> int:
    """Resident bytes of this process's mapping that starts at ``addr`` (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps", encoding="utf-8") as fh:
        for line in fh:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                inside = int(head.split("-")[0], 16) == addr
            elif inside and head == "Rss:":
                return int(line.split()[1]) * 1024
    raise AssertionError("mapping not found")


def _address(m: mmap.mmap) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


def test_release_mapped_gives_back_shared_pages_and_keeps_their_data(tmp_path: Path) -> None:
    folder = tmp_path / "shard"
    folder.mkdir()
    path = folder / "seg.dat"
    path.write_bytes(b"\0" * (8 << 20))
    with path.open("r+b") as fh:
        m = mmap.mmap(fh.fileno(), 0, mmap.MAP_SHARED)
    try:
        m[:5] = b"hello"  # written through the mapping, never flushed by hand
        for off in range(0, len(m), mmap.PAGESIZE):
            m[off + 100] = 7
        addr = _address(m)
        assert _mapped_rss(addr) >= 8 << 20
        assert release_mapped(folder, lambda rel: rel == "seg.dat") >= 8 << 20
        assert _mapped_rss(addr) < 1 << 20
        assert m[:5] == b"hello" and m[(4 << 20) + 100] == 7  # mapped back, unchanged
        assert path.read_bytes()[:5] == b"hello"
    finally:
        m.close()


def test_release_mapped_leaves_private_mappings_and_other_folders(tmp_path: Path) -> None:
    (tmp_path / "shard").mkdir()
    (tmp_path / "other").mkdir()
    private, elsewhere = tmp_path / "shard" / "p.dat", tmp_path / "other" / "o.dat"
    for p in (private, elsewhere):
        p.write_bytes(b"\0" * (2 << 20))
    with private.open("r+b") as f1, elsewhere.open("r+b") as f2:
        mp = mmap.mmap(f1.fileno(), 0, mmap.MAP_PRIVATE)
        mo = mmap.mmap(f2.fileno(), 0, mmap.MAP_SHARED)
    try:
        mp[:4] = b"mine"  # a private copy: MADV_DONTNEED would throw it away
        for off in range(0, len(mo), mmap.PAGESIZE):
            mo[off] = 1
        assert release_mapped(tmp_path / "shard", lambda rel: True) == 0
        assert mp[:4] == b"mine"
        assert _mapped_rss(_address(mo)) >= 2 << 20
    finally:
        mp.close()
        mo.close()


def test_release_mapped_of_a_folder_without_mappings(tmp_path: Path) -> None:
    assert release_mapped(tmp_path, lambda rel: True) == 0


def test_release_mapped_takes_only_the_files_it_is_asked_for(tmp_path: Path) -> None:
    (tmp_path / "wal").mkdir()
    keep, drop = tmp_path / "keep.dat", tmp_path / "wal" / "open-1"
    maps = []
    for p in (keep, drop):
        p.write_bytes(b"\0" * (2 << 20))
        with p.open("r+b") as fh:
            maps.append(mmap.mmap(fh.fileno(), 0, mmap.MAP_SHARED))
    try:
        for m in maps:
            for off in range(0, len(m), mmap.PAGESIZE):
                m[off] = 1
        asked: list[str] = []

        def which(rel: str) -> bool:
            asked.append(rel)
            return rel.startswith("wal/")

        assert release_mapped(tmp_path, which) == 2 << 20
        assert sorted(asked) == ["keep.dat", "wal/open-1"]
        assert _mapped_rss(_address(maps[0])) >= 2 << 20
        assert _mapped_rss(_address(maps[1])) < 1 << 20
        assert maps[1][4096] == 1
    finally:
        for m in maps:
            m.close()


def test_the_advice_loses_nothing_on_memory_it_was_not_meant_for() -> None:
    """What makes the release safe when another thread remaps an address it read: paging out
    anonymous or private memory keeps its contents (MADV_DONTNEED would zero them)."""
    from zettel_lsp.index import page_cache

    if page_cache._MADVISE is None:
        pytest.skip("no madvise here")
    m = mmap.mmap(-1, 4 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m[:] = bytes(range(256)) * (len(m) // 256)
        addr = _address(m)
        page_cache._MADVISE(addr, len(m), page_cache._MADV_PAGEOUT)
        assert m[:256] == bytes(range(256)) and m[-256:] == bytes(range(256))
    finally:
        m.close()
