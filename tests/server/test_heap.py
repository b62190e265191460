"""Giving the C heap's free pages back (server/heap.py, ``release``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from zettel_lsp.server import heap

pytestmark = pytest.mark.skipif(heap._TRIM is None, reason="malloc_trim is glibc's; not here")

_CHILD = textwrap.dedent(
    """
    import threading
    from zettel_lsp.server import heap

    def anon_mb():
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("RssAnon"):
                    return int(line.split()[1]) // 1024

    def churn():  # a thread's C heap: 4 KB blocks, freed but the last, as a model load leaves
        blocks = [bytes(4096) for _ in range(50_000)]
        keep.append(blocks[-1])
        del blocks

    keep = []
    t = threading.Thread(target=churn)
    t.start()
    t.join()
    before = anon_mb()
    heap.release("test")
    print(before, anon_mb())
    """
)


def test_release_returns_what_a_finished_thread_left_free() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    before, after = int(out[0]), int(out[1])
    # 200 MB were freed in the thread's arena: without the trim most of it stays resident
    assert before - after >= 100, (before, after)
