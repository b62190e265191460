"""A vault's start-up, in its own thread: the named steps of :data:`STEPS` (docs/server.md,
"Start-up"), each timed (``zettel.status`` ``startup_seconds``, read by the benchmarks), then
the embedding phase. A step returns False when start-up ends there: the vault closed, or the
index could not be opened (:func:`fall_back`: read-only or failed)."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.embedders import EmbedderError
from zettel_lsp.index.status import SyncReport
from zettel_lsp.index.store_api import IndexLockedError, StoreError
from zettel_lsp.server.phase import Phase
from zettel_lsp.server.read_only import install_graph, read_vault
from zettel_lsp.vault import Vault

if TYPE_CHECKING:
    from zettel_lsp.server.service import VaultService

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Step:
    name: str  # its key in startup_seconds
    run: Callable[[StartUp], bool]  # False: start-up ends here
    watching: bool = False  # taken only with the ``watch`` setting


class StartUp:
    """One start of one vault (``zettel.reindex`` starts another after read-only/failed)."""

    vault: Vault  # from the "open" step on
    graph: LinkGraph
    report: SyncReport

    def __init__(self, service: VaultService) -> None:
        self.service = service
        self.settings = service.settings

    def run(self) -> None:
        service = self.service
        service.progress.begin(f"Indexing {service.root.name}", "opening the index")
        try:
            if self._steps():
                service.embedding_phase(self.vault)
        except Exception as exc:
            if service.stopping():
                return  # closed while starting: the store went away under us
            log.exception("start-up of %s failed", service.root)
            release_index(service)
            fall_back(service, Phase.FAILED, f"the index could not be built: {exc}")
        finally:
            service.done.set()

    def _steps(self) -> bool:
        seconds = self.service.startup_seconds
        for step in STEPS:
            if step.watching and not self.settings.watch:
                continue
            t0 = time.perf_counter()
            if not step.run(self):
                return False
            seconds[step.name] = round(time.perf_counter() - t0, 3)
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items())
        log.info("start-up of %s: %s", self.service.root.name, steps)
        return True

    def open(self) -> bool:
        service, s = self.service, self.settings
        service.open_stored()
        try:
            vault = Vault(
                service.root,
                s.index_path,
                s.index_settings(),
                cache_dir=s.cache_path,
                progress=service.progress.on_progress,
                lexical_until_model_loads=True,
            )
        except IndexLockedError as exc:
            fall_back(service, Phase.READ_ONLY, str(exc))
            return False
        except (StoreError, EmbedderError, OSError) as exc:
            fall_back(service, Phase.FAILED, str(exc))
            return False
        if service.stopping():
            vault.close()
            return False
        vault.self_tune = s.suggest_self_tune

        def attach() -> None:
            service.vault = vault
            service.phase = Phase.SYNCING
            service.drop_stored()

        service.locked(attach)
        self.vault = vault
        return True

    def sync(self) -> bool:
        service, vault = self.service, self.vault
        vault.on_foreign_query = lambda: service.foreign_query(vault)
        service.models.start(vault)
        self.report = vault.indexer.sync()
        return True

    def build_graph(self) -> bool:
        service, vault, report = self.service, self.vault, self.report
        service.progress.report(
            f"{report.cards:,} cards ({report.summary()}); building the link graph"
        )
        if service.stopping():
            return False

        def building() -> None:
            service.phase = Phase.GRAPH

        service.locked(building)
        graph, engine, problems = vault.load_graph()  # parsing: no lock

        def install() -> None:
            vault.graph, vault.engine = graph, engine
            service.graph, service.problems = graph, problems
            service.graph_version += 1

        service.locked(install)
        self.graph = graph
        return True

    def settle(self) -> bool:
        # the first edit would build the mention automata under the lock: build them now
        self.service.threads.start("zettel-mentions", self.graph.prepare_mentions)
        # the graph lives as long as the vault: later collections skip its objects
        gc.freeze()
        self.service.graph_ready.set()
        self.service.graph_changed()
        return True

    def compact(self) -> bool:
        """After a first lexical phase big enough (``compaction_before_embedding``), compact
        the shard before embedding, as ``zettel-lsp index`` does: a server stopped while
        embedding then reopens from indexed segments instead of rebuilding the BM25 index of
        every point. The optimizer runs in a child process; meanwhile the index is detached and
        requests are answered from titles and a text scan (as when read-only)."""
        service, vault = self.service, self.vault
        if service.stopping():
            return False
        ix = vault.indexer
        points = ix.compaction_before_embedding()
        if not points:
            return True

        def detach() -> bool:
            if service.vault is not vault:
                return False  # closed meanwhile
            service.vault = None
            return True

        def reattach() -> bool:
            if service.stopping():
                return False
            service.vault = vault
            return True

        if not service.locked(detach):
            return False
        service.progress.report(
            f"compacting the new index ({points:,} points) before embedding, so that a restart "
            "opens it fast; titles and text are searched meanwhile"
        )
        try:
            done = ix.compact(in_child=True, should_stop=service.stopping)
        except Exception:  # only a faster reopen is lost: the index is open again, embed on
            log.exception("%s: compacting the new index failed; embedding goes on", service.root)
            done = None
        if not service.locked(reattach):
            vault.close()  # the service closed while it was detached: nobody else will
            return False
        if done is not None:
            log.info(
                "%s: compacted the new index (%d points) in %.1f s before embedding",
                service.root.name,
                done.points,
                done.seconds,
            )
        return True

    def watch(self) -> bool:
        self.service.watch(self.vault)
        return True

    def resync(self) -> bool:
        # what changed while the graph was parsed (the watcher was not looking yet)
        self.service.apply(self.vault.indexer.sync(keep_cards=True))
        return True

    def warm_up(self) -> bool:
        self.service.warm_up()
        return True

    def wait_for_model(self) -> bool:
        self.service.models.wait(self.service.progress.report)
        return True


STEPS = (
    Step("open", StartUp.open),
    Step("sync", StartUp.sync),
    Step("graph", StartUp.build_graph),
    Step("settle", StartUp.settle),
    Step("compact", StartUp.compact),
    Step("watch", StartUp.watch, watching=True),
    Step("resync", StartUp.resync, watching=True),
    Step("warm-up", StartUp.warm_up),
    Step("model (waited for)", StartUp.wait_for_model),
)


def release_index(service: VaultService) -> None:
    """After a failed start-up: stop the watcher and close the index, so that its folder
    lock is free again (for 'zettel.reindex', another window, or the CLI)."""
    service.stop_watching()

    def take() -> Vault | None:
        vault, service.vault = service.vault, None
        return vault

    vault = service.locked(take)
    if vault is not None:
        try:
            vault.close()
        except Exception:  # closing is best effort; the lock goes regardless
            log.exception("closing the index of %s after a failure", service.root)


def fall_back(service: VaultService, phase: Phase, reason: str) -> None:
    """No index: keep answering from the graph and a text scan, and tell the user."""

    def failing() -> None:
        service.phase = Phase.GRAPH  # the final phase once the cards are read
        service.reason = reason

    service.locked(failing)
    if phase == Phase.READ_ONLY:
        message = (
            f"zettel-lsp: {reason}. This window answers read-only: links, backlinks, hover "
            "and search by titles and plain text, kept current from disk. It opens the index "
            "itself once the other window is closed."
        )
        # watching before the notes are read: a change made meanwhile is read again after
        service.watch_read_only()
    else:
        message = f"zettel-lsp: {reason}. Search falls back to titles and plain text."
    service.notify("warning" if phase == Phase.READ_ONLY else "error", message)
    service.progress.report("reading the notes for links and titles")
    graph, titles, problems = read_vault(service)

    def install() -> None:
        install_graph(service, graph, titles, problems)
        service.phase = phase
        service.drop_stored()

    service.locked(install)
    service.graph_ready.set()
    service.graph_changed()
    service.warm_up()
    service.progress.end(f"{service.root.name}: {len(graph.cards):,} cards ({phase.value})")
