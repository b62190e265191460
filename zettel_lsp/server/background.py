"""The server's background threads: one helper names each, keeps a reference until it ends, and
logs its failure with the traceback through :mod:`logging` (the editor's log), never stdout.

Every thread ends before the process does: a vault joins its own (:class:`Threads`) when it
closes, and the server waits for the rest at exit (:func:`wait_for_threads`). A thread still
inside native code (an onnxruntime or Qdrant Edge call) when the interpreter tears down aborts
the process (``terminate called without an active exception``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
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


def join_until(threads: Callable[[], Iterable[threading.Thread]], deadline: float) -> list[str]:
    """Join the threads ``threads()`` names (asked again after each join: a thread may start
    another) until none runs or ``deadline`` (:func:`time.monotonic`) passes; the names of
    those still running. The calling thread is never waited for."""
    while True:
        me = threading.current_thread()
        alive = [t for t in threads() if t.is_alive() and t is not me]
        left = deadline - time.monotonic()
        if not alive or left <= 0:
            return sorted(t.name for t in alive)
        alive[0].join(left)


class Threads:
    """The background threads of one owner (a vault), joined when it closes."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, name: str, fn: Callable[..., object], /, *args: Any) -> threading.Thread:
        """:func:`in_background`, remembered until it ends."""
        thread = in_background(name, fn, *args)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        return thread

    def alive(self) -> list[threading.Thread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive()]

    def join(self, deadline: float) -> list[str]:
        """Wait until they all ended (or ``deadline``); the names of those still running."""
        return join_until(self.alive, deadline)


def wait_for_threads(seconds: float, keep: Iterable[str] = ()) -> list[str]:
    """At exit: wait up to ``seconds`` for every thread but the main one and those named in
    ``keep`` (one blocked reading stdin) to end; the names of those still running."""
    names = set(keep)

    def others() -> list[threading.Thread]:
        main = threading.main_thread()
        return [t for t in threading.enumerate() if t is not main and t.name not in names]

    return join_until(others, time.monotonic() + seconds)
