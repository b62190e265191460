"""Forward Python ``logging`` records to the editor as ``window/logMessage``.

stdout is the protocol channel: the server never prints. Records are forwarded once a client is
connected; before that (and if sending fails) they go nowhere but stderr via the root handler.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

_LEVELS = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


class LspLogHandler(logging.Handler):
    def __init__(self, server: LanguageServer, level: int = logging.INFO) -> None:
        super().__init__(level)
        self._server = server
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg_type = next(
                (t for lvl, t in _LEVELS if record.levelno >= lvl), types.MessageType.Log
            )
            self._server.window_log_message(
                types.LogMessageParams(type=msg_type, message=self.format(record))
            )
        except Exception:  # noqa: BLE001 - logging must never take the server down
            self.handleError(record)
