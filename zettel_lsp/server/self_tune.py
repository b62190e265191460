"""The server chooses the related-card suggestions' weights on the vault's own links
(:meth:`Vault.calibrate`), in a thread of its own with its own ``$/progress``. It yields to the
editor (a card at a time, after :data:`~zettel_lsp.server.service.SELF_TUNE_QUIET` seconds
without a request); suggestions use the stored or default weights until it is done."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from zettel_lsp.server.progress import REPORT_EVERY_SECONDS

if TYPE_CHECKING:
    from zettel_lsp.server.service import VaultService
    from zettel_lsp.vault import Vault

log = logging.getLogger(__name__)

# above this many cards the server does not choose the suggestions' weights itself (it builds
# a second link graph for it, hundreds of MB for a while); `zettel-lsp index --self-tune` does
SELF_TUNE_MAX_CARDS = 20_000


class SelfTune:
    def __init__(self, service: VaultService) -> None:
        self._service = service
        self._running = threading.Lock()  # one calibration at a time
        self._skipped = False  # the vault is over SELF_TUNE_MAX_CARDS (logged)

    def start(self) -> None:
        """Choose the weights if :meth:`Vault.calibration_due` (checked in the thread)."""
        self._service.threads.start(f"zettel-self-tune-{self._service.root.name}", self._run)

    def _run(self) -> None:
        vault = self._service.vault
        if vault is None or not self._running.acquire(blocking=False):
            return
        try:
            if vault.self_tune and not self._too_big(vault):
                self._calibrate(vault)
        finally:
            self._running.release()

    def _too_big(self, vault: Vault) -> bool:
        cards = self._service.locked(lambda: len(vault.graph.cards))
        if cards <= SELF_TUNE_MAX_CARDS:  # before calibration_due: it walks every link
            return False
        if not self._skipped:
            self._skipped = True  # said once a session, not after every edit
            log.info(
                "%s: %d cards; the suggestions keep %s (the server chooses them on vaults "
                "of at most %d cards; `zettel-lsp index --self-tune` does it for any vault)",
                self._service.root.name,
                cards,
                "the weights chosen before" if vault.calibration else "the default weights",
                SELF_TUNE_MAX_CARDS,
            )
        return True

    def _calibrate(self, vault: Vault) -> None:
        service = self._service
        if not service.locked(vault.calibration_due) or service.stopping():
            return
        name = service.root.name
        op = service.progress.operation(
            f"Link suggestions for {name}", "choosing the weights on this vault's own links"
        )
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= REPORT_EVERY_SECONDS or done >= total:
                last[0] = now
                op.report(f"{done:,}/{total:,} cards", int(100 * done / total) if total else None)

        try:
            made = vault.calibrate(
                read=service.locked, progress=progress, should_stop=service.when_quiet
            )
        except Exception:
            if not service.stopping():  # else: the vault closed under it
                log.exception("%s: choosing the suggestions' weights failed", name)
                op.end("failed (see the log); the default weights serve")
                return
            made = None
        if made is None:
            op.end(
                "stopped"
                if service.stopping()
                else "too few links to learn from: the default weights serve"
            )
            return
        log.info(
            "%s: suggestion weights chosen on %d of its links in %.0f s (Recall@10 on "
            "them %.3f, default %.3f)",
            name,
            made.pairs,
            made.seconds,
            made.recall,
            made.default_recall,
        )
        op.end(
            f"weights chosen on {made.pairs} of its links (they find "
            f"{made.recall:.0%} of them in the top 10, the default {made.default_recall:.0%})"
        )
