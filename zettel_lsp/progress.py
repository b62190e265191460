"""Progress on a terminal: one updating line on stderr (nothing when stderr is not a TTY), and
messages that always get a line of their own.

A rate and an ETA are shown only once a phase has run for :data:`MIN_RATE_SECONDS`: a phase
reported once at its end (a scan of unchanged files takes milliseconds) would otherwise show a
rate from a near-zero duration ("2,721,000,000/s")."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from zettel_lsp.index.status import Progress

_LABELS = {
    "scan": "scanning",
    "lexical": "files indexed",
    "graph": "cards in the link graph",
    "dense": "chunks embedded",
    "suggest": "cards evaluated",
}
MIN_RATE_SECONDS = 1.0
MIN_INTERVAL = 0.2  # seconds between two redraws of a phase's line


class TerminalProgress:
    """Callable as a :data:`~zettel_lsp.index.sync.ProgressFn`; safe to call from several
    threads (the watcher's sync and its embedder report at the same time)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._phase = ""
        self._phase_start = 0.0
        self._last = 0.0
        self._width = 0
        self._lock = threading.Lock()

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = time.monotonic()
            if p.phase != self._phase:
                self._end_line()
                self._phase, self._phase_start, self._width = p.phase, now, 0
            elif now - self._last < MIN_INTERVAL and p.done < p.total:
                return
            self._last = now
            text = "\r" + line(p, now - self._phase_start)
            self.stream.write(text.ljust(self._width + 1))  # blanks over a longer previous line
            self._width = len(text) - 1
            self.stream.flush()

    def message(self, text: str) -> None:
        """``text`` on a line of its own (also when progress is off): an active progress line
        is ended first, so the two never run together."""
        with self._lock:
            self._end_line()
            self.stream.write(text + "\n")
            self.stream.flush()

    def finish(self) -> None:
        with self._lock:
            self._end_line()

    def _end_line(self) -> None:
        if self.enabled and self._phase:
            self.stream.write("\n")
            self.stream.flush()
        self._phase, self._width = "", 0


def line(p: Progress, elapsed: float) -> str:
    """The progress line of ``p`` after ``elapsed`` seconds in its phase."""
    pct = 100.0 * p.done / p.total if p.total else 100.0
    out = f"  {_LABELS.get(p.phase, p.phase)}: {p.done:,}/{p.total:,} ({pct:5.1f}%)"
    if elapsed >= MIN_RATE_SECONDS and p.done > 0:
        rate = p.done / elapsed
        out += f"  {rate:,.0f}/s" if rate >= 10 else f"  {rate:,.1f}/s"
        if p.total > p.done:
            eta = round(eta_seconds(p, elapsed))
            out += f"  ETA {eta // 60}:{eta % 60:02d}"
    if p.detail:
        out += f"  {p.detail}"
    return out


def eta_seconds(p: Progress, elapsed: float) -> float:
    """The time ``p``'s phase still needs at its rate so far: measured in tokens when the phase
    reports them (items differ in cost), else in items."""
    if p.tokens_done > 0 and p.tokens_total >= p.tokens_done:
        return (p.tokens_total - p.tokens_done) * elapsed / p.tokens_done
    return (p.total - p.done) * elapsed / p.done
