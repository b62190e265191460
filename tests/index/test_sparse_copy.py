"""copy_tree keeps an index folder's holes: the copy takes the disk space of its data."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.conftest import copy_index
from zettel_lsp.index.sparse_copy import copy_file, copy_tree


def _allocated(path: Path) -> int:
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def _sparse_file(path: Path, size: int, pieces: dict[int, bytes]) -> None:
    with open(path, "wb") as f:
        f.truncate(size)
        for offset, data in pieces.items():
            f.seek(offset)
            f.write(data)


def test_a_sparse_file_is_copied_byte_for_byte_without_its_holes(tmp_path: Path) -> None:
    src = tmp_path / "chunk.mmap"
    size = 64 << 20
    pieces = {0: b"head" * 1000, 20 << 20: os.urandom(300_000), size - 5: b"tail!"}
    _sparse_file(src, size, pieces)
    if _allocated(src) > 8 << 20:
        import pytest

        pytest.skip("this file system does not keep holes")
    copy_file(src, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == src.read_bytes()
    assert _allocated(tmp_path / "copy") < 8 << 20
    # shutil's copy fills the holes: the reason for copy_file
    shutil.copyfile(src, tmp_path / "dense")
    assert _allocated(tmp_path / "dense") >= size - (1 << 20)


def test_files_without_holes_and_empty_files_copy_whole(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    data = os.urandom(3 << 20)
    (tmp_path / "a" / "full.bin").write_bytes(data)
    (tmp_path / "a" / "empty").write_bytes(b"")
    _sparse_file(tmp_path / "a" / "all-hole", 5 << 20, {})
    (tmp_path / "a" / "sub").mkdir()
    (tmp_path / "a" / "sub" / "x.json").write_text('{"k": 1}')
    copy_tree(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "b" / "full.bin").read_bytes() == data
    assert (tmp_path / "b" / "empty").read_bytes() == b""
    assert (tmp_path / "b" / "all-hole").stat().st_size == 5 << 20
    assert (tmp_path / "b" / "all-hole").read_bytes() == bytes(5 << 20)
    assert (tmp_path / "b" / "sub" / "x.json").read_text() == '{"k": 1}'


def test_a_copied_index_takes_its_data_size_and_opens(
    indexed_example: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(indexed_example / "vault", vault)
    copy_index(indexed_example, vault, tmp_path / "index")
    src = indexed_example / "index"
    apparent = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    assert apparent > 20 * _allocated(src), "the index no longer preallocates: test is moot"
    assert _allocated(tmp_path / "index") <= 2 * _allocated(src) + (1 << 20)

    from zettel_lsp.vault import Vault

    v = Vault(vault, tmp_path / "index", cache_dir=tmp_path / "cache")
    try:
        report = v.open()
        assert report.sync.cards > 0
        assert report.sync.indexed == 0 and report.embedded == 0  # opened warm, nothing redone
    finally:
        v.close()
