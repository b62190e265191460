"""Pause Python's cyclic garbage collector while a large structure is built.

Building a vault's graph allocates millions of objects that all survive (cards, links, the
title index); every 700 allocations CPython runs a collection, and each full one walks every
object built so far, so the collector's cost grows with the square of the build. Measured at
25k generated cards: ``Vault.load_graph`` 16-18 s with the collector, 4.5-8.9 s without it (a
busy machine). Nothing built there is garbage, so pausing it frees nothing later than it would
have been; the server then collects once and freezes the survivors
(:func:`zettel_lsp.server.heap.settle`).

The collector is one switch for the process: the pause nests and is thread-safe (the last one
out turns it back on, if it was on before the first one came in).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (reference counting still frees)."""
    global _depth, _was_enabled
    with _LOCK:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
