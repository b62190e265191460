"""The pygls language server: built from the feature modules, served over stdio.

Every request runs in a small thread pool (``await loop.run_in_executor``), so the event loop
keeps reading messages (cancellations, edits) while a search or a hover is computed, and no
handler's exception reaches the client as anything worse than an empty answer and a log line.
Long work (indexing, embedding, reindex) reports ``$/progress`` with a fresh token each time.
See :mod:`zettel_lsp.server.features` for what is answered where.
"""

from __future__ import annotations

import functools
import logging
import os
import sys

from zettel_lsp.server.features import register_all
from zettel_lsp.server.logging_bridge import LspLogHandler
from zettel_lsp.server.protocol import serve
from zettel_lsp.server.server import ZettelLanguageServer

log = logging.getLogger("zettel_lsp")

# the zettel.* API the editor plugins use (docs/server.md); each is registered by a feature
COMMANDS = (
    "zettel.search",
    "zettel.related",
    "zettel.suggestLinks",
    "zettel.reindex",
    "zettel.status",
    "zettel.ask",
)


# How long a thread may hold the interpreter lock while another waits for it (Python's default
# is 5 ms). Requests run beside CPU-bound background work (start-up, graph updates, warm-ups);
# a request thread, or a thread that does many short system calls (the folder scan), waits up
# to this long each time it needs the lock back. Measured at 100k generated cards (2 cores,
# benchmarks/lsp_latency.py, 2 runs each): with 1 ms the p95 of hover 32-37 ms (39 at 5 ms),
# codeAction/resolve 45-61 (64-77), completion 36 (41-44); the start-up about the same.
SWITCH_INTERVAL = 0.001


def create_server() -> ZettelLanguageServer:
    server = ZettelLanguageServer()
    register_all(server)
    return server


def serve_stdio() -> None:
    """Serve on stdin/stdout. Returns after ``shutdown`` + ``exit``; otherwise (``exit`` without
    ``shutdown``, end of input, broken framing) raises ``SystemExit`` with a non-zero code, so
    an editor sees that the server died and can restart it."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    server = create_server()
    handler = LspLogHandler(server)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        code = serve(
            server, functools.partial(os.read, sys.stdin.buffer.fileno()), sys.stdout.buffer
        )
    finally:
        log.removeHandler(handler)
        server.cancel_all()
        server.requests.shutdown(wait=False, cancel_futures=True)
        server.stop_vaults(compact=True)
        server.vault_tasks.shutdown(wait=False, cancel_futures=True)
    if code:
        raise SystemExit(code)
