"""A vault's long operations as the user sees them (LSP work-done progress): start-up, a
reindex, the multilingual phase; counts reported at most every :data:`REPORT_EVERY_SECONDS`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from zettel_lsp.index.status import Progress

REPORT_EVERY_SECONDS = 0.25

_LABELS = {
    "scan": "scanned",
    "lexical": "indexed",
    "dense": "embedded",
    "multilingual": "embedded (multilingual)",
}


class Operation(Protocol):
    """One long operation shown to the user (LSP work-done progress)."""

    def report(self, message: str, percentage: int | None = None) -> None: ...
    def end(self, message: str) -> None: ...


OperationFactory = Callable[[str, str], Operation]  # (title, first message) -> begun operation


class _NoOperation:
    def report(self, message: str, percentage: int | None = None) -> None:
        pass

    def end(self, message: str) -> None:
        pass


class VaultProgress:
    """The vault's current operation (one at a time) and the index's progress counts."""

    def __init__(
        self, name: str, operation: OperationFactory | None, multilingual_done: Callable[[], bool]
    ) -> None:
        self._name = name
        # a new operation of its own (self-tuning runs beside the current one)
        self.operation: OperationFactory = operation or (lambda title, msg: _NoOperation())
        self._multilingual_done = multilingual_done  # every card has its multilingual vectors
        self._op: Operation | None = None
        self._last_report = 0.0
        self.dense: tuple[int, int] = (0, 0)  # (embedded, to embed) chunks

    @property
    def running(self) -> bool:
        return self._op is not None

    def begin(self, title: str, message: str) -> None:
        self._op = self.operation(title, message)

    def report(self, message: str, percentage: int | None = None) -> None:
        op = self._op
        if op is not None:
            op.report(message, percentage)

    def end(self, message: str) -> None:
        op, self._op = self._op, None
        if op is not None:
            op.end(message)

    def on_progress(self, p: Progress) -> None:
        """The index's progress callback."""
        if p.phase == "dense":
            self.dense = (p.done, p.total)  # one tuple, replaced whole
        now = time.monotonic()
        final = p.total and p.done >= p.total
        if p.phase == "multilingual":
            # its own operation: it runs after "ready", in the background
            if self._op is None and not final:
                self.begin(
                    f"Multilingual search for {self._name}", "embedding with the second model"
                )
            if final and self._multilingual_done():
                self.end(f"{self._name}: multilingual search ready")
                return
        if not final and now - self._last_report < REPORT_EVERY_SECONDS:
            return
        self._last_report = now
        pct = int(100 * p.done / p.total) if p.total else None
        label = _LABELS.get(p.phase, p.phase)
        self.report(f"{label} {p.done:,}/{p.total:,}" + (f" ({p.detail})" if p.detail else ""), pct)
