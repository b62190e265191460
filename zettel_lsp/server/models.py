"""A vault's embedding models, loaded in threads of their own (the vault's :class:`Threads`,
joined when it closes): start-up goes on meanwhile (lexical search answers), and "ready" waits
for them (:meth:`Models.wait`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from zettel_lsp.server.background import Threads
from zettel_lsp.vault import Vault

log = logging.getLogger(__name__)


class Models:
    def __init__(self, name: str, should_stop: Callable[[], bool], threads: Threads) -> None:
        self._name = name
        self._should_stop = should_stop
        self._threads = threads
        self._thread: threading.Thread | None = None
        self._multilingual_loading = threading.Lock()  # one multilingual model load at a time

    def start(self, vault: Vault) -> None:
        """Load the model (and the multilingual one if the index has its vectors), then read
        the stored vectors ahead."""
        self._thread = self._threads.start(f"zettel-model-{self._name}", self._load, vault)

    def wait(self, report: Callable[[str], None]) -> None:
        if self._thread is not None:
            report("loading the embedding model")
            self._thread.join()  # "ready" means the dense leg answers too

    def load_multilingual_in_background(self, vault: Vault) -> None:
        name = f"zettel-multilingual-model-{self._name}"
        self._threads.start(name, self.load_multilingual, vault)

    def load_multilingual(self, vault: Vault) -> None:
        if self._should_stop() or not self._multilingual_loading.acquire(blocking=False):
            return  # the vault is closing, or another thread is loading it
        try:
            vault.load_multilingual_model()
        except Exception as exc:  # noqa: BLE001 - the other legs still work
            log.warning("the multilingual model did not load (%s); searching without it", exc)
        finally:
            self._multilingual_loading.release()

    def _load(self, vault: Vault) -> None:
        if self._should_stop():  # the vault closed before its model loaded
            return
        try:
            vault.load_model()
        except Exception as exc:  # noqa: BLE001 - lexical search still works
            log.warning("the embedding model did not load (%s); search stays lexical", exc)
        if vault.multilingual_status()[
            0
        ]:  # the index has multilingual vectors: queries will need it
            self.load_multilingual(vault)
        if vault.model_loaded:  # else no dense search will read the vectors
            self._warm_store(vault)

    def _warm_store(self, vault: Vault) -> None:
        """Once the model loaded and before "ready" (while start-up syncs and builds the
        graph): read the stored vectors a slice at a time (:meth:`Vault.warm_store`), so that
        the first searches after "ready" answer as fast as the later ones, and no search after
        "ready" waits for it."""
        t0 = time.perf_counter()
        try:
            n = vault.warm_store(should_stop=self._should_stop)
        except Exception as exc:  # noqa: BLE001 - only a speed-up: searches work without it
            log.warning("%s: reading the stored vectors ahead failed (%s)", self._name, exc)
            return
        seconds = time.perf_counter() - t0
        log.info("%s: %d stored vectors read ahead (%.1f s)", self._name, n, seconds)
