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


def create_server() -> ZettelLanguageServer:
    server = ZettelLanguageServer()
    register_all(server)
    return server


def serve_stdio() -> None:
    """Serve on stdin/stdout. ``exit`` raises ``SystemExit`` (0 after ``shutdown``, else 1), as do
    the end of input before ``shutdown`` and broken framing (1), so an editor sees that the
    server died and can restart it; the end of input after ``shutdown`` returns."""
    server = create_server()
    handler = LspLogHandler(server)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        stdin = functools.partial(os.read, sys.stdin.buffer.fileno())
        code = serve(server.protocol, stdin, sys.stdout.buffer)
    finally:
        log.removeHandler(handler)
        server.cancel_all()
        server.stop_requests()
        server.stop_vaults(compact=True)
        server.vault_tasks.shutdown(wait=False, cancel_futures=True)
    if code:
        raise SystemExit(code)
