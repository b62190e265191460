"""The caches kept beside an index (parsed cards, mentions, the graph snapshot) as pickle
files: read tolerantly, written atomically. A cache is only a shortcut: a missing or damaged
file reads as nothing (the caller builds what it held again), a failed write costs time only,
and a crash leaves the old file or none, never half of one."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def read_pickle(path: Path, what: str) -> object | None:
    """The object in ``path``; None when there is none or it cannot be read (logged, naming
    ``what`` the caller does instead)."""
    try:
        with path.open("rb") as fh:
            data: object = pickle.load(fh)  # our own files, in our own index folder
            return data
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a damaged cache is only a slower start
        log.info("%s unreadable (%s); %s", path, exc, what)
        return None


def write_pickle(path: Path, data: object, what: str) -> None:
    """Write ``data`` to ``path`` atomically (a temp file beside it, then a rename); a failure
    is logged as ``what`` not saved."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = path.name.split(".", 1)[0]
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}-", suffix=".pickle", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(data, fh, protocol=5)
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - a shortcut: a failed write costs time only
        log.warning("%s not saved (%s: %s)", what, type(exc).__name__, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
