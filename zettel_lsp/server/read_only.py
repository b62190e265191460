"""A read-only vault's watcher: while another zettel-lsp holds the index folder, keep the graph,
the title index and the text scan current from disk, and open the index once the folder is free.

Changes to notes re-read just those notes; a change that cannot be pinned to notes (a folder
appeared, vanished or moved) reads the whole vault again, as :func:`~startup.fall_back` did.
The lock is checked after every batch and every second without changes
(:func:`~zettel_lsp.index.folder_lock.is_free`); when it is free, the vault starts as normal
(:func:`take_over`) and this watcher ends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from watchfiles import Change

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.folder_lock import is_free
from zettel_lsp.index.sync import index_folder
from zettel_lsp.index.watch import changed_notes, folder_changes
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.scan import external_target, is_ignored, load_card, load_vault
from zettel_lsp.search.engine import names_change, title_index
from zettel_lsp.search.titles import TitleIndex
from zettel_lsp.server.phase import Phase

if TYPE_CHECKING:
    from zettel_lsp.server.service import VaultService

log = logging.getLogger(__name__)

LOCK_POLL_MS = 1000  # the index lock is checked at least this often (also with ``watch`` off)


def read_vault(service: VaultService) -> tuple[LinkGraph, TitleIndex, list[str]]:
    """Every card of the vault from disk, as a graph and its titles, and the problems found."""
    s = service.settings
    cards, problems = load_vault(
        service.root,
        s.ignore,
        s.max_file_bytes,
        title_source=s.title_source,
        follow_external_symlinks=s.follow_external_symlinks,
    )
    graph = LinkGraph.build(cards)
    return graph, title_index(graph), problems


def install_graph(
    service: VaultService, graph: LinkGraph, titles: TitleIndex, problems: list[str]
) -> None:
    """Answer from ``graph`` (read-only or failed; call under the vault lock)."""
    service.graph, service.titles, service.problems = graph, titles, problems
    service.graph_version += 1


def take_over(service: VaultService) -> bool:
    """Read-only, and the index folder is free again (the other server exited): start as
    normal, opening the index. False when no longer read-only, or closing."""

    def claim() -> bool:
        if service.phase != Phase.READ_ONLY or service.stopping():
            return False
        service.phase = Phase.STARTING
        service.done.clear()
        return True

    if not service.locked(claim):
        return False
    log.info("%s: the index folder is free again: opening it (no longer read-only)", service.root)
    service.start()
    return True


class ReadOnlyWatch:
    """Runs in a thread of its own; :meth:`stop` ends it (within a second)."""

    def __init__(self, service: VaultService) -> None:
        self.service = service
        s = service.settings
        self.index_dir = index_folder(service.root, s.index_path, s.cache_path)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()  # set once the watcher is running

    def start(self) -> None:
        name = f"zettel-read-only-{self.service.root.name}"
        self._thread = self.service.threads.start(name, self._loop)
        self.ready.wait(5)

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                for changes in self._batches():
                    if self.service.stopping():
                        return  # closed while this watcher was starting
                    if changes:
                        self._handle(changes)
                    if self._lock_freed():
                        return
            except Exception:
                log.exception("read-only watcher failed; reading the notes again and restarting it")
                self._reload()
                self._stop.wait(1.0)

    def _batches(self) -> Iterator[set[tuple[Change, str]]]:
        """Batches of changes, and an empty one each second without any (to check the lock)."""
        self.ready.set()
        s = self.service.settings
        if not s.watch:
            while not self._stop.wait(LOCK_POLL_MS / 1000):
                yield set()
            return
        yield from folder_changes(
            self.service.root,
            self.index_dir,
            s.ignore,
            debounce_ms=s.debounce_ms,
            stop=self._stop,
            timeout_ms=LOCK_POLL_MS,
        )

    def _lock_freed(self) -> bool:
        """True when the holder let go of the index and the vault started as normal."""
        if self.service.phase != Phase.READ_ONLY or not is_free(self.index_dir):
            return False
        if not take_over(self.service):
            return False
        self._stop.set()
        return True

    def _installed(self) -> bool:
        """Wait until the start's own reading of the vault is in place (False: stopping), so
        that a change seen meanwhile is applied to it, read again from disk."""
        while self.service.phase != Phase.READ_ONLY:
            if self._stop.wait(0.2):
                return False
        return True

    def _handle(self, changes: set[tuple[Change, str]]) -> None:
        service = self.service
        if not self._installed():
            return
        rels = changed_notes(
            service.root, changes, lambda: service.locked(lambda: [*service.graph.cards])
        )
        if rels is None:
            self._reload()
        elif rels:
            self._update(rels)

    def _read(self, rel: str) -> Card | None:
        """The card at ``rel`` as the start's reading would have it (None: none there)."""
        s, root = self.service.settings, self.service.root
        if is_ignored(rel, s.ignore) or not (root / rel).is_file():
            return None
        if not s.follow_external_symlinks and external_target(root, rel) is not None:
            return None
        loaded = load_card(root, rel, s.max_file_bytes, title_source=s.title_source)
        for line in loaded.read.problems if loaded.card is None else loaded.card.problems:
            log.warning("%s", line)
        return loaded.card

    def _update(self, rels: set[str]) -> None:
        cards = [c for c in map(self._read, sorted(rels)) if c is not None]
        removed = sorted(rels - {c.path for c in cards})
        service = self.service

        def apply() -> None:
            graph = service.graph
            renamed = names_change(graph, removed, cards)
            graph.apply_changes(removed, cards)
            if renamed:
                service.titles = title_index(graph)
            service.graph_version += 1

        service.locked(apply)
        service.graph_changed()
        log.info(
            "%s (read-only) updated from disk: %d read, %d gone",
            service.root.name,
            len(cards),
            len(removed),
        )

    def _reload(self) -> None:
        service = self.service
        graph, titles, problems = read_vault(service)

        def apply() -> None:
            if service.phase == Phase.READ_ONLY:
                install_graph(service, graph, titles, problems)

        service.locked(apply)
        service.graph_changed()
        log.info(
            "%s (read-only) read again from disk: %d cards", service.root.name, len(graph.cards)
        )
