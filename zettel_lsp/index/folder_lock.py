"""The index folder's lock: one process at a time uses an index folder.

``<folder>/lock`` is held with ``flock`` (exclusive, non-blocking; the kernel releases it when
the holder dies, however it dies). The holder writes its pid into the file, followed by what it
is doing when that is not indexing: ``"4242 compacting"``. A second process that finds the folder
locked gets :class:`IndexLockedError` with the holder's pid, except when the holder is a
*compactor* (:mod:`zettel_lsp.index.compact`, started when the previous session closed): that
one only makes the shard faster to open, and stopping it loses nothing (the shard keeps every
point), so the newcomer stops it and takes the folder. The holder's pid is safe to signal: only
the process that holds the lock writes the file, and the lock dies with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from pathlib import Path
from typing import IO

from zettel_lsp.index.store_api import IndexLockedError

log = logging.getLogger(__name__)

LOCK_FILE = "lock"  # beside the shard: held (flock) by the one process using the folder
COMPACTING = "compacting"  # what a compactor writes after its pid
STOP_WAIT_SECONDS = 10.0  # how long a newcomer waits for a stopped compactor to let go


class FolderLock:
    """An exclusive, non-blocking lock on ``<folder>/lock`` (released when the process dies),
    holding the owner's pid (and ``purpose``, when given) for the message a second process
    gets. Raises :class:`IndexLockedError` when another process holds it, after stopping that
    process first if it is a compactor."""

    def __init__(self, folder: Path, *, purpose: str = "") -> None:
        import fcntl

        folder.mkdir(parents=True, exist_ok=True)
        fh = (folder / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid, what = _holder(fh)
            if what != COMPACTING or pid is None or not _stop_compactor(fh, pid):
                fh.close()
                who = f" (pid {pid}{', compacting it' if what == COMPACTING else ''})"
                raise IndexLockedError(
                    f"index folder {folder} is in use by another zettel-lsp"
                    f"{who if pid is not None else ''}; close the other editor window or pass "
                    "a different --index-dir"
                ) from exc
        with contextlib.suppress(OSError):
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()} {purpose}".strip())
            fh.flush()
        self._fh = fh
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        with contextlib.suppress(OSError):
            self._fh.seek(0)
            self._fh.truncate()
        self._fh.close()


def is_free(folder: Path) -> bool:
    """Whether a :class:`FolderLock` on ``folder`` would be taken now: nobody holds it, or a
    compactor does (the newcomer stops it). Takes nothing: a read-only server asks this while
    it waits for the holder to exit."""
    import fcntl

    try:
        fh = (folder / LOCK_FILE).open("a+", encoding="utf-8")
    except FileNotFoundError:
        return True  # no folder: the newcomer makes it
    except OSError:
        return False
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return _holder(fh)[1] == COMPACTING
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return True


def holder_pid(folder: Path) -> int | None:
    """The pid of the process holding ``folder``'s lock, as it wrote it (None: unreadable)."""
    try:
        with (folder / LOCK_FILE).open(encoding="utf-8") as fh:
            return _holder(fh)[0]
    except OSError:
        return None


def _holder(fh: IO[str]) -> tuple[int | None, str]:
    """The pid and purpose the lock's holder wrote (None, "" when unreadable)."""
    with contextlib.suppress(OSError):
        fh.seek(0)
        words = fh.read(64).split()
        if words and words[0].isdigit():
            return int(words[0]), " ".join(words[1:])
    return None, ""


def _stop_compactor(fh: IO[str], pid: int) -> bool:
    """Stop the compactor ``pid`` and take the lock on ``fh`` once it is gone: True when taken
    within :data:`STOP_WAIT_SECONDS`."""
    import fcntl

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)  # the compactor has no handler: SIGTERM ends it at once
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
            continue
        log.info(
            "stopped the index compaction the previous session left running (pid %d); "
            "it runs again when this session closes",
            pid,
        )
        return True
