"""The server's background threads: one helper names each, keeps a reference until it ends, and
logs its failure with the traceback through :mod:`logging` (the editor's log), never stdout."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_running: set[threading.Thread] = set()
_running_lock = threading.Lock()


def logged(name: str, fn: Callable[..., object], /, *args: Any) -> Callable[[], None]:
    """``fn(*args)`` as a task whose exception is logged (``"<name> failed"`` and the
    traceback) instead of reaching :func:`threading.excepthook` or a forgotten future."""

    def task() -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("%s failed", name)

    return task


def in_background(name: str, fn: Callable[..., object], /, *args: Any) -> threading.Thread:
    """Run ``fn(*args)`` in a daemon thread called ``name`` (see :func:`logged`)."""
    task = logged(name, fn, *args)

    def run() -> None:
        try:
            task()
        finally:
            with _running_lock:
                _running.discard(thread)

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _running_lock:
        _running.add(thread)
    thread.start()
    return thread


def running() -> list[threading.Thread]:
    """The background threads that have not ended yet."""
    with _running_lock:
        return list(_running)
