"""Compaction: turn the shard's appendable segment into indexed ones, where no one waits.

Everything the index writes goes to an *appendable* segment. Qdrant Edge keeps its BM25
inverted index and full-text payload indexes in memory and rebuilds them whenever the shard is
loaded, so the time to open the index grows with every point ever written, until
``EdgeShard.optimize()`` has built indexed segments (which load as they are, and whose dense
vectors get an HNSW graph). Deleted points also leave the BM25 document frequencies only then
(measurements: docs/indexing.md, docs/decisions/0012-compaction-where-no-one-waits.md).

``optimize()`` holds the GIL for its whole run (tens of seconds), so it never runs inside the
language server, whose event loop would stop answering. It runs:

- at the end of ``zettel-lsp index`` (no editor waits for it), and between its lexical and
  dense phases on a vault's first index;
- in a child process of the language server between a vault's first lexical and dense phases
  (``--shard``: :meth:`~zettel_lsp.index.store.EdgeStore.compact_in_child`), the index
  detached meanwhile; and
- in a separate, detached process the server starts as it closes (``shutdown`` or a workspace
  folder removed), taking the index folder's lock with the purpose ``compacting``; a server
  or CLI that opens the folder meanwhile stops it and carries on (see
  :mod:`zettel_lsp.index.folder_lock`): compaction only makes the next start faster, and a
  stopped one loses nothing.

When is decided in one place, :meth:`CompactionPolicy.due`. Every compaction runs the same
optimization, :meth:`~zettel_lsp.index.store.EdgeStore.optimize_folder`, and records itself in
the state the same way (:meth:`CompactionPolicy.done`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.index.db import IndexDB, put_meta
from zettel_lsp.index.folder_lock import COMPACTING, FolderLock
from zettel_lsp.index.state import IndexState
from zettel_lsp.index.store import SHARD_DIR, STORE_LAYOUT, EdgeStore
from zettel_lsp.index.store_api import IndexLockedError

log = logging.getLogger(__name__)

COMPACT_AFTER_POINTS = 20_000  # points written since the last compaction that make one worth it
COMPACT_AFTER_ENV = "ZETTEL_LSP_COMPACT_AFTER"  # overrides it (0: after every write; tests)
COMPACT_LOG = "compact.log"  # the detached compactor's stderr, in the index folder


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """When the local shard of an index folder is worth compacting."""

    # points written since the last compaction that make the next one worth its time
    after_points: int = COMPACT_AFTER_POINTS

    @classmethod
    def current(cls) -> CompactionPolicy:
        """The policy in force: :data:`COMPACT_AFTER_ENV` overrides the threshold."""
        raw = os.environ.get(COMPACT_AFTER_ENV, "").strip()
        with contextlib.suppress(ValueError):
            if raw:
                return cls(max(0, int(raw)))
        return cls()

    def due(self, state: IndexState | None, index_dir: Path) -> int:
        """The points written to the local shard of ``index_dir`` since its last compaction,
        as its ``state`` counts them (the indexer's, in memory), when they call for a
        compaction (a small vault's shard loads fast as it is), else 0 (also for a remote
        index, or none). A shard in an older layout (``store.STORE_LAYOUT``) is due whatever
        its count (at least 1): the compaction moves it."""
        if state is None or state.backend != "edge" or not (index_dir / SHARD_DIR).is_dir():
            return 0
        n = state.uncompacted
        if state.store_layout < STORE_LAYOUT:
            return max(n, 1)
        return n if n > 0 and n >= self.after_points else 0

    def due_before_embedding(
        self, state: IndexState | None, index_dir: Path, dense_pending: int
    ) -> int:
        """:meth:`due`, between a large lexical phase and its dense phase: only when at least
        :attr:`after_points` chunks (and at least one) wait for their vectors too (a vault's
        first index), else 0."""
        if dense_pending < max(1, self.after_points):
            return 0
        return self.due(state, index_dir)

    @staticmethod
    def done(state: IndexState) -> None:
        """Record in ``state`` that its shard was just compacted."""
        state.uncompacted = 0
        state.store_layout = STORE_LAYOUT


@dataclass(frozen=True, slots=True)
class CompactResult:
    points: int  # points written since the previous compaction
    seconds: float  # loading the shard, optimizing it and closing it
    changed: bool  # the optimizer rewrote segments (False: already optimal)


def compact(index_dir: Path) -> CompactResult:
    """Optimize the shard of ``index_dir`` under the folder's lock (:class:`IndexLockedError`
    when another process uses it) and record that nothing is left uncompacted."""
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(FolderLock(index_dir, purpose=COMPACTING).release)
        db = IndexDB(index_dir)
        cleanup.callback(db.close)
        points = int(db.get("uncompacted") or 0)
        t0 = time.perf_counter()
        changed = EdgeStore.optimize_folder(index_dir / SHARD_DIR)
        seconds = time.perf_counter() - t0
        if db.get("vault") is not None:
            with db.transaction() as conn:
                put_meta(conn, {"uncompacted": 0, "store_layout": STORE_LAYOUT})
        return CompactResult(points, seconds, changed)


def spawn_compactor(index_dir: Path, state: IndexState) -> subprocess.Popen[bytes] | None:
    """Start ``python -m zettel_lsp.index.compact INDEX_DIR`` detached (its own session: the
    editor's signals to the server's process group do not reach it), when the index's
    ``state`` calls for it. Its stderr goes to ``INDEX_DIR/compact.log``. Call after the index
    is closed (its state saved)."""
    points = CompactionPolicy.current().due(state, index_dir)
    if not points:
        return None
    try:
        with (index_dir / COMPACT_LOG).open("ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "zettel_lsp.index.compact", str(index_dir)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
    except OSError as exc:
        log.warning("could not start compacting the index in %s: %s", index_dir, exc)
        return None
    log.info(
        "compacting the index in the background (pid %d, %d points written since the last "
        "compaction): the next start opens it faster",
        proc.pid,
        points,
    )
    return proc


def main(argv: list[str] | None = None) -> int:
    """The detached compactor: ``python -m zettel_lsp.index.compact INDEX_DIR``; with
    ``--shard SHARD_FOLDER``, the optimizer alone for a process that holds the folder's lock
    (:meth:`~zettel_lsp.index.store.EdgeStore.compact_in_child`)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--shard":
        with contextlib.suppress(OSError):
            os.nice(5)  # the server's own requests go first
        EdgeStore.optimize_folder(Path(args[1]))
        return 0
    if len(args) != 1:
        print("usage: python -m zettel_lsp.index.compact INDEX_DIR", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with contextlib.suppress(OSError):
        os.nice(10)  # an editor may start again meanwhile: leave it the CPU
    index_dir = Path(args[0])
    try:
        result = compact(index_dir)
    except IndexLockedError:
        log.info("%s is in use again: compaction left for another time", index_dir)
        return 0
    except Exception as exc:  # noqa: BLE001 - any failure: logged; the index is rebuilt if damaged
        log.error("compacting %s failed: %s", index_dir, exc)
        return 1
    log.info(
        "compacted %s: %d points written since the last compaction, %.1f s",
        index_dir,
        result.points,
        result.seconds,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
