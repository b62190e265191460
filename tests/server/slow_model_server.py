"""The real zettel-lsp server, with one change: a query embedding of a text holding
:data:`SLOW_MARK` blocks for :data:`SLOW_SECONDS` (a slow model: a cold load, or an ``ollama:``
model over a slow network). It logs "slow model call: start" when the block begins (the client
sees it as window/logMessage). Used by tests/server/test_no_model_call_under_the_lock.py."""

from __future__ import annotations

import logging
import time
from typing import Any

import zettel_lsp.vault as vault_module
from zettel_lsp.server.app import serve_stdio

SLOW_MARK = "zzslowmodel"
SLOW_SECONDS = 2.0

log = logging.getLogger("zettel_lsp")


class SlowQueries:
    """The vault's embedder, with slow query embeddings for marked texts."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def embed_query(self, text: str) -> Any:
        if SLOW_MARK in text:
            log.info("slow model call: start")
            time.sleep(SLOW_SECONDS)
            log.info("slow model call: end")
        return self._real.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


_real_init = vault_module.Vault.__init__


def _init(self: vault_module.Vault, *args: Any, **kwargs: Any) -> None:
    _real_init(self, *args, **kwargs)
    self.indexer.embedder = SlowQueries(self.indexer.embedder)  # type: ignore[assignment]
    self.engine.embedder = self.indexer.embedder  # later engines take the indexer's


vault_module.Vault.__init__ = _init  # type: ignore[method-assign]

if __name__ == "__main__":
    serve_stdio()
