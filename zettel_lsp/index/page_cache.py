"""Whether a file is wholly in the operating system's page cache (Linux: ``mincore``), and
this process's mapped pages of a folder's files given back (``madvise``).

The shard's read-ahead (:func:`zettel_lsp.index.store.read_ahead`) reads every file before
Edge loads it, so that the load does not wait on a page fault at a time. A file already cached
gains nothing from that read and still costs it: 0.15-0.27 s of reading for the 392 MB of a
100k-card shard (0.01 s with this check). The first answer did not move with it, as the index
state's parse runs beside the read-ahead and takes as long (docs/performance.md, tenth pass);
what it saves is the work. Elsewhere than Linux (or if the check fails) every file counts as
not cached, so it is read as before.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from collections.abc import Callable
from typing import Any

_PAGE = mmap.PAGESIZE


def _libc() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        c_mmap, c_munmap, c_mincore = libc.mmap, libc.munmap, libc.mincore
    except (OSError, AttributeError):
        return None
    c_mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    c_mmap.restype = ctypes.c_void_p
    c_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    c_munmap.restype = ctypes.c_int
    c_mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    c_mincore.restype = ctypes.c_int
    return c_mmap, c_munmap, c_mincore


_LIBC = _libc()
_MADV_PAGEOUT = 21


def _madvise() -> Callable[..., Any] | None:
    if _LIBC is None:
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_MADVISE = _madvise()
_MAP_FAILED = ctypes.c_void_p(-1).value
_LOW_BIT = bytes(i & 1 for i in range(256))


def cached(path: str) -> bool:
    """Whether every page of the file at ``path`` is in the page cache (an empty file is).
    False when that cannot be told. Reads nothing: the file is mapped, asked about, unmapped."""
    if _LIBC is None:
        return False
    c_mmap, c_munmap, c_mincore = _LIBC
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return True
        addr = c_mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, _MAP_FAILED):
            return False
        try:
            pages = (size + _PAGE - 1) // _PAGE
            vec = ctypes.create_string_buffer(pages)
            if c_mincore(addr, size, vec) != 0:
                return False
            # the low bit of each byte: that page is resident
            return b"\x00" not in vec.raw.translate(_LOW_BIT)
        finally:
            c_munmap(addr, size)
    except OSError:
        return False
    finally:
        os.close(fd)


def release_mapped(folder: str | os.PathLike[str], which: Callable[[str], bool]) -> int:
    """Give back the pages of this process's shared mappings of the files under ``folder``
    that ``which`` (given the path relative to ``folder``, with ``/``) picks, with
    ``madvise(MADV_PAGEOUT)``; return how many bytes of mappings were advised.

    The pages leave this process's resident memory and, when nothing else maps them, the page
    cache (written back first if dirty): a later access reads them from the file again, so
    nothing written is lost.

    Not ``MADV_DONTNEED``, which keeps them in the page cache: the mappings are read from
    ``/proc/self/maps``, and Edge's own threads (its write-ahead log makes and drops segment
    files in the background) may unmap a range meanwhile, and another allocation may take its
    address; ``DONTNEED`` would zero that memory. Paging out any page, anonymous or private
    included, loses nothing (without swap it stays). With ``DONTNEED`` a process crashed with
    SIGSEGV in the test suite (two indexers opening a new folder at once). The price: the next
    start reads these pages from disk again (the shard's read-ahead does, in its own thread).

    Why: ``EdgeShard.load`` touches the whole write-ahead log (its segment files are 32 MB
    each) and the preallocated pages of the appendable segment's payload indexes (two
    full-text files of 32 MB), which a search of a compacted shard does not read again; each
    page it touched counted in the server's resident memory until it closed (117 MB of 100k
    cards' shard, docs/performance.md). Elsewhere than Linux (or before Linux 5.4) nothing
    happens."""
    if _MADVISE is None:
        return 0
    root = os.path.realpath(folder)
    prefix = os.path.join(root, "")
    advised = 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
    except OSError:
        return 0
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or "s" not in parts[1]:
            continue
        path = parts[5].rstrip("\n")
        if not path.startswith(prefix) or not which(path[len(prefix) :]):
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        if _MADVISE(start, end - start, _MADV_PAGEOUT) == 0:
            advised += end - start
    return advised
