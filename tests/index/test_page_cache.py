"""The page-cache check that lets the read-ahead skip files already cached (Linux)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from zettel_lsp.index.page_cache import cached

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
