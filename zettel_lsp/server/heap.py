"""Keep Python's cyclic garbage collector off the vault's long-lived objects.

A vault's cards, link graph, title index and caches are hundreds of thousands of objects
(716,000 for zettelkasten-13k) that live as long as the server. CPython's full (generation 2)
collection walks every one of them: 450 ms on that vault, on whichever thread allocated last,
holding the interpreter lock, so any request in flight waits (measured as the multi-hundred
millisecond maxima of ``benchmarks/lsp_latency.py``). :func:`settle` collects once and then
*freezes* what survived (``gc.freeze``): later collections skip it. Objects that become
garbage later are still freed by reference counting; only reference cycles among frozen
objects would wait for the next ``settle(full=True)``, which unfreezes first (after a graph
is built anew, when the old one is dropped).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
_LOCK = threading.Lock()


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        fn = ctypes.CDLL(None).malloc_trim  # glibc only
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_TRIM = _malloc_trim()


def release(reason: str) -> float:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere). Freed memory otherwise stays in the process, above all in the arena of a
    thread that is done allocating: the embedding model's load leaves ~50 MB free in the
    model thread's arena (measured in-process: RSS 245 -> 193 MB after the trim), which the
    other threads' allocations never reuse. Returns the milliseconds it took."""
    if _TRIM is None:
        return 0.0
    t0 = time.perf_counter()
    _TRIM(0)
    ms = (time.perf_counter() - t0) * 1000
    log.info("%s: free heap pages returned to the system (%.0f ms)", reason, ms)
    return ms


def settle(
    reason: str, *, full: bool = False, collect: bool = True, young_only: bool = False
) -> float:
    """Collect garbage and freeze the survivors; ``full`` first unfreezes everything (a full
    pass over the heap); without ``collect``, only freeze; with ``young_only``, collect the
    young generations only (a pass over what was allocated since the last collections, not
    over every object not yet frozen). Returns the milliseconds it took."""
    with _LOCK:
        t0 = time.perf_counter()
        if full:
            gc.unfreeze()
        if collect:
            gc.collect(1 if young_only else 2)
        gc.freeze()
        ms = (time.perf_counter() - t0) * 1000
    release(reason)  # what the collection (and the work before it) left free in the C heap
    log.info(
        "%s: %d long-lived objects set aside from garbage collection (%.0f ms)",
        reason,
        gc.get_freeze_count(),
        ms,
    )
    return ms


def settle_ready(reason: str) -> float:
    """:func:`settle` once the vault is ready (after the client heard it): the objects made
    since the graph (the names for completion and diagnostics, 740,000 objects at 100k cards)
    are frozen after a collection of the young generations only. A full collection there took
    657 ms at 100k cards, holding the interpreter lock while the first requests came in, and
    found nothing to free (measured at 25k cards: 0 objects, 133 ms): the names hold no
    reference cycles."""
    return settle(reason, young_only=True)


def settle_graph(reason: str) -> float:
    """:func:`settle` after a graph was built. The process's first graph is only frozen: a
    collection right after building one finds no garbage (measured: 0 objects at 25k cards)
    and walks the whole heap (0.5 s at 25k cards, 3.4 s at 100k). A later graph (the previous
    one dropped, its objects frozen) unfreezes and collects everything first."""
    first = gc.get_freeze_count() == 0
    return settle(reason, full=not first, collect=not first)
