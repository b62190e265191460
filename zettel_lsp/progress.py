"""Progress on a terminal: one updating line on stderr (nothing when stderr is not a TTY)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from zettel_lsp.index.sync import Progress

_LABELS = {
    "scan": "scanning",
    "lexical": "files indexed",
    "dense": "chunks embedded",
    "suggest": "cards evaluated",
}


class TerminalProgress:
    def __init__(self, stream: TextIO | None = None, min_interval: float = 0.2) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.min_interval = min_interval
        self._phase = ""
        self._phase_start = 0.0
        self._last = 0.0
        self._width = 0

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if p.phase != self._phase:
            if self._phase:
                self.stream.write("\n")
            self._phase, self._phase_start, self._width = p.phase, now, 0
        elif now - self._last < self.min_interval and p.done < p.total:
            return
        self._last = now
        elapsed = max(now - self._phase_start, 1e-6)
        rate = p.done / elapsed
        eta = (p.total - p.done) / rate if rate > 0 and p.total > p.done else 0.0
        pct = 100.0 * p.done / p.total if p.total else 100.0
        line = (
            f"  {_LABELS.get(p.phase, p.phase)}: {p.done:,}/{p.total:,} ({pct:5.1f}%)"
            f"  {rate:,.0f}/s  ETA {_fmt(eta)}"
        )
        if p.detail:
            line += f"  {p.detail}"
        self.stream.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self._phase:
            self.stream.write("\n")
            self.stream.flush()
            self._phase = ""


def _fmt(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"
