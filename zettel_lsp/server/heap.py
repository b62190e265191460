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

import gc
import logging
import threading
import time

log = logging.getLogger(__name__)
_LOCK = threading.Lock()


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
