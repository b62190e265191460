"""Copying index folders without filling their holes.

Qdrant Edge sizes its mapped files ahead (vector chunks, payload pages, deleted flags): an
index takes far more bytes by ``st_size`` than on disk, all of which ``shutil.copytree`` would
write. :func:`copy_tree` copies only the files' data extents
(``SEEK_DATA`` / ``SEEK_HOLE``) and sets their length, so the copy keeps the holes.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterable

_CHUNK = 1 << 20


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The data extents of an open file as ``(start, end)``; the whole file where the file
    system cannot tell holes (``lseek`` then reports one extent, or fails with EINVAL)."""
    out: list[tuple[int, int]] = []
    pos = 0
    try:
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole from pos to the end
                    break
                raise
            end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
            out.append((start, end))
            pos = end
    except (OSError, AttributeError):
        return [(0, size)] if size else []
    return out


def _copy_range(src: int, dst: int, start: int, end: int) -> None:
    pos = start
    while pos < end:
        want = min(_CHUNK * 64, end - pos)
        try:
            done = os.copy_file_range(src, dst, want, pos, pos)
        except (OSError, AttributeError):
            done = 0
        if done <= 0:
            data = os.pread(src, min(_CHUNK, end - pos), pos)
            if not data:
                raise OSError(errno.EIO, "file shrank while it was copied")
            view = memoryview(data)
            while view:
                n = os.pwrite(dst, view, pos)
                view = view[n:]
                pos += n
            continue
        pos += done


def copy_file(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> str:
    """Copy one file's bytes, holes kept as holes, and its metadata (as ``shutil.copy2``).
    Usable as ``copy_function`` of ``shutil.copytree``."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        for start, end in _extents(fin.fileno(), size):
            _copy_range(fin.fileno(), fout.fileno(), start, end)
        fout.truncate(size)
    shutil.copystat(src, dst)
    return os.fspath(dst)


def copy_tree(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    ignore: Callable[[str, list[str]], Iterable[str]] | None = None,
) -> None:
    """``shutil.copytree`` with :func:`copy_file`: an index folder's copy takes the disk space
    of its data, not of its preallocated length."""
    shutil.copytree(src, dst, ignore=ignore, symlinks=True, copy_function=copy_file)
