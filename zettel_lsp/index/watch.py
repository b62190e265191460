"""Live updates: watch the vault folder and feed batches of changed paths to the indexer.

watchfiles debounces (default 500 ms) and batches events. Changes to a note sync just that
note; changes the watcher cannot pin to notes fall back to a full reconcile, which is cheap when
little changed (size + mtime first): a folder made, renamed, moved or deleted (the events of the
notes in a new folder may come before the OS watches it, and a folder named like a note may
replace a note or be replaced by one) and any watcher error. Dot-folders (.git, .obsidian,
.trash), node_modules, the index folder itself and user globs are ignored. A second thread
embeds what the syncs queue, newest edits first.

What changed before the OS watch was registered is not seen: ``ready`` is set once it is, and
the owner then runs a full reconcile (:meth:`VaultWatcher.reconcile`, or its own sync).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from watchfiles import Change, watch

from zettel_lsp.index.status import SyncReport
from zettel_lsp.index.sync import Indexer
from zettel_lsp.notes.scan import is_ignored, is_note_path

log = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_MS = 500
# how long watchfiles waits for a first change before it answers (the first answer, a change or
# this timeout, tells that the OS watch is registered: ``ready``)
WATCH_TIMEOUT_MS = 200


def folder_changes(
    root: Path,
    index_dir: Path,
    ignore: Sequence[str],
    *,
    debounce_ms: int,
    stop: threading.Event,
    timeout_ms: int,
) -> Iterator[set[tuple[Change, str]]]:
    """watchfiles' batches of changes under ``root`` (not the index folder, dot-folders or the
    ``ignore`` globs), and an empty batch after each ``timeout_ms`` without any; ends when
    ``stop`` is set."""

    def keep(change: Change, path: str) -> bool:
        try:
            resolved = Path(path).resolve()
            rel = resolved.relative_to(root).as_posix()
        except (ValueError, OSError):
            return False
        # the vault itself, and the index folder (if the user put it inside the vault)
        if rel == "." or resolved.is_relative_to(index_dir):
            return False
        return not is_ignored(rel, ignore)

    return watch(
        root,
        watch_filter=keep,
        debounce=debounce_ms,
        step=50,
        stop_event=stop,
        rust_timeout=timeout_ms,
        yield_on_timeout=True,
        raise_interrupt=False,
    )


def changed_notes(
    root: Path, changes: set[tuple[Change, str]], known: Callable[[], Iterable[str]]
) -> set[str] | None:
    """The note paths ``changes`` touched, or None when something cannot be pinned to notes
    and the whole vault is to be read again: a folder made, moved, changed or gone (the events
    of the notes in a new folder may come before the OS watches it), or a folder named like a
    note under which some of the ``known`` card paths lie (moved away or replaced by a note)."""
    rels: set[str] = set()
    for _, path in changes:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if os.path.isdir(path):
            return None  # a folder made, moved or changed
        if is_note_path(rel):
            rels.add(rel)
        elif not os.path.isfile(path):
            return None  # a folder gone or moved
    folders = tuple(rel + "/" for rel in rels)
    if folders and any(path.startswith(folders) for path in known()):
        return None
    return rels


class VaultWatcher:
    """Runs ``watchfiles`` in a thread; call :meth:`stop` to end it (joins within ~0.5 s)."""

    def __init__(
        self,
        indexer: Indexer,
        *,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        on_sync: Callable[[SyncReport], None] | None = None,
    ) -> None:
        self.indexer = indexer
        self.vault = indexer.vault
        self.debounce_ms = debounce_ms
        self.on_sync = on_sync
        self._stop = threading.Event()
        self._work = threading.Event()
        self._threads: list[threading.Thread] = []
        self.ready = threading.Event()  # set once the OS watch is registered
        # called from the embed thread each time the queue runs dry, with the chunks embedded
        self.on_embedded: Callable[[int], None] | None = None

    def start(self) -> None:
        for name, target in (
            ("zettel-watch", self._watch_loop),
            ("zettel-embed", self._embed_loop),
        ):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def reconcile(self) -> None:
        """A full reconcile now, reported to ``on_sync``; after :attr:`ready`, it catches up
        with what changed before the watch began (an owner's first sync)."""
        self._run_sync(None)

    def stop(self) -> None:
        self._stop.set()
        self._work.set()
        for t in self._threads:
            t.join(timeout=10)
        self._threads.clear()

    def wake_embedder(self) -> None:
        self._work.set()

    # ------------------------------------------------------------------ internals

    def _watch_loop(self) -> None:
        missed = False  # after a watcher error: what changed until it is back is unknown
        while not self._stop.is_set():
            try:
                for changes in folder_changes(
                    self.vault,
                    self.indexer.index_dir,
                    self.indexer.settings.ignore_globs,
                    debounce_ms=self.debounce_ms,
                    stop=self._stop,
                    timeout_ms=WATCH_TIMEOUT_MS,
                ):
                    self.ready.set()  # the first answer comes once the OS watch is registered
                    if missed:
                        missed = False
                        self.reconcile()
                    if changes:
                        self._handle(changes)
            except Exception:
                log.exception("file watcher failed; restarting it, then a full reconcile")
                missed = True
                self._stop.wait(1.0)

    def _handle(self, changes: set[tuple[Change, str]]) -> None:
        self._run_sync(changed_notes(self.vault, changes, self._card_paths))

    def _card_paths(self) -> Iterator[str]:
        return (path for path, _ in self.indexer.card_items())

    def _run_sync(self, paths: set[str] | None) -> None:
        if paths is not None and not paths:
            return
        try:
            report = self.indexer.sync(paths, keep_cards=self.on_sync is not None)
        except Exception:
            log.exception(
                "index update failed for %s", "the vault" if paths is None else sorted(paths)
            )
            return
        if self.on_sync is not None:
            try:
                self.on_sync(report)
            except Exception:
                log.exception("on_sync callback failed")
        self._work.set()

    def _embed_loop(self) -> None:
        while not self._stop.is_set():
            self._work.wait()
            self._work.clear()
            try:
                done = self.indexer.embed_pending(should_stop=self._stop.is_set)
            except Exception:
                log.exception("embedding failed; lexical search keeps working")
                continue
            if self.on_embedded is not None and not self._stop.is_set():
                try:
                    self.on_embedded(done)
                except Exception:
                    log.exception("on_embedded callback failed")
            # then the multilingual phase, until it is done or new work (an edit) arrives
            try:
                self.indexer.embed_multilingual(
                    should_stop=lambda: self._stop.is_set() or self._work.is_set()
                )
            except Exception:
                log.exception("multilingual embedding failed; search keeps working")
