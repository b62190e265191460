"""The pygls language server: built from the feature modules, served over stdio.

Every request runs in a small thread pool (``await loop.run_in_executor``), so the event loop
keeps reading messages (cancellations, edits) while a search or a hover is computed, and no
handler's exception reaches the client as anything worse than an empty answer and a log line.
Long work (indexing, embedding, reindex) reports ``$/progress`` with a fresh token each time.
See :mod:`zettel_lsp.server.features` for what is answered where.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys

from zettel_lsp.server.background import wait_for_threads
from zettel_lsp.server.features import register_all
from zettel_lsp.server.logging_bridge import LspLogHandler
from zettel_lsp.server.protocol import exit_line, serve
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

# at exit, the longest the process waits for threads still running once the vaults are closed
# (seconds); the stdin reader (protocol.serve) may stay blocked in a read
EXIT_SECONDS = 10.0
STDIN_THREAD = "zettel-stdin"


def create_server() -> ZettelLanguageServer:
    server = ZettelLanguageServer()
    register_all(server)
    return server


def serve_stdio() -> None:
    """Serve on stdin/stdout. ``exit`` raises ``SystemExit`` (0 after ``shutdown``, else 1), as do
    the end of input before ``shutdown`` and broken framing (1), so an editor sees that the
    server died and can restart it; the end of input after ``shutdown`` returns. Either way
    the vaults close and every thread ends first (:func:`end_process`)."""
    server = create_server()
    handler = LspLogHandler(server)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    code = 1
    try:
        stdin = functools.partial(os.read, sys.stdin.buffer.fileno())
        code = serve(server.protocol, stdin, sys.stdout.buffer)
    except SystemExit as exc:  # pygls' ``exit``
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        log.removeHandler(handler)
        server.cancel_all()
        server.stop_requests()
        server.stop_vaults(compact=True)
        server.vault_tasks.shutdown(wait=False, cancel_futures=True)
    end_process(code)


def end_process(code: int) -> None:
    """End with ``code`` once every thread ended (at most :data:`EXIT_SECONDS`): a thread still
    inside a native call (onnxruntime, Qdrant Edge) when the interpreter tears down aborts the
    process. If one is still running then, the process ends at once (``os._exit``, its output
    flushed), skipping the teardown, and says so on stderr."""
    left = wait_for_threads(EXIT_SECONDS, keep=(STDIN_THREAD,))
    if left:
        exit_line(f"threads still running at exit, not waited for: {', '.join(left)}")
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    if code:
        raise SystemExit(code)
