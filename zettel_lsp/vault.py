"""One vault: its index (kept in step), its graph and its search engine, and its life.

The CLI and the language server both use this, so their behaviour cannot drift apart: a sync
report is applied to the graph here (:meth:`Vault.apply`), the vault says when the dense leg can
run (:attr:`Vault.dense_ready`) and what its index holds (:meth:`Vault.status`). The vault is
not thread-safe by itself: the server calls it under its vault lock
(:class:`zettel_lsp.server.service.VaultService`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.sync import Indexer, IndexSettings, ProgressFn, SyncReport
from zettel_lsp.index.watch import VaultWatcher
from zettel_lsp.notes.card_cache import cached_cards
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.engine import SearchEngine, title_index

log = logging.getLogger(__name__)


@dataclass(slots=True)
class OpenReport:
    sync: SyncReport
    embedded: int
    problems: list[str]


class Vault:
    def __init__(
        self,
        root: Path,
        index_dir: Path | None = None,
        settings: IndexSettings | None = None,
        *,
        cache_dir: Path | None = None,
        progress: ProgressFn | None = None,
        lexical_until_model_loads: bool = False,
    ) -> None:
        """``lexical_until_model_loads``: the dense leg waits for :meth:`load_model` (a server
        answers lexically while the model loads, instead of waiting for it)."""
        self.root = root.resolve()
        self.settings = settings or IndexSettings()
        self.indexer = Indexer(
            self.root, index_dir, self.settings, cache_dir=cache_dir, progress=progress
        )
        self.model_loaded = not lexical_until_model_loads
        self.dense_off_reason = ""  # set by disable_dense(): the dense leg stays off
        self._has_vectors = False  # some card is embedded (once true, stays true)
        self.graph = LinkGraph()
        self.engine = self._engine(self.graph)

    # ------------------------------------------------------------------ life

    def open(self, *, embed: bool = True) -> OpenReport:
        """Bring the index up to date, build the graph, and (by default) finish embedding."""
        report = self.sync()
        problems = self.build_graph()
        embedded = self.embed_pending() if embed else 0
        return OpenReport(report, embedded, problems)

    def sync(self, *, keep_cards: bool = False) -> SyncReport:
        """Reconcile the folder into the index (not the graph: see :meth:`apply`)."""
        return self.indexer.sync(keep_cards=keep_cards)

    def apply(self, report: SyncReport) -> bool:
        """Bring the graph (and the engine's titles) in step with an index update (from a
        watcher or a sync). Returns whether anything changed."""
        if not (report.cards_changed or report.paths_removed):
            return False
        for path in report.paths_removed:
            self.graph.remove(path)
        for card in report.cards_changed:
            self.graph.upsert(card)
        self.engine.titles = title_index(self.graph)
        return True

    def embed_pending(self, should_stop: Callable[[], bool] | None = None) -> int:
        """Embed the chunks waiting for vectors (the dense phase). Returns how many."""
        return self.indexer.embed_pending(should_stop=should_stop)

    @property
    def dense_pending(self) -> int:
        """Chunks still waiting for their vectors."""
        return self.indexer.dense_pending

    def load_model(self) -> None:
        """Load the embedding model (one query embedding); from then on the dense leg may run.
        Raises what the embedder raises (EmbedderError, OSError, ...)."""
        self.indexer.embedder.embed_query("warm up")
        self.model_loaded = True

    def disable_dense(self, reason: str) -> None:
        """Search without the dense leg from now on (e.g. an ``ollama:`` model while Ollama is
        down)."""
        self.dense_off_reason = reason

    @property
    def dense_ready(self) -> bool:
        """Whether the dense leg runs: some vectors exist, the model is loaded (when asked to
        wait for it), and it was not switched off."""
        if self.dense_off_reason or not self.model_loaded:
            return False
        if not self._has_vectors:  # asked on every search: stop looking once a vector exists
            self._has_vectors = any(f.dense for f in self.indexer.state.files.values())
        return self._has_vectors

    def status(self) -> dict[str, Any]:
        """What the index holds, for ``zettel.status`` and ``zettel-lsp status``."""
        state = self.indexer.state
        return {
            "cards": len(state.files),
            "chunks": sum(f.chunks for f in state.files.values()),
            "cards_embedded": state.dense_done,
            "chunks_waiting_for_vectors": self.indexer.dense_pending,
            "model": self.indexer.embedder.model_id,
            "index_dir": str(self.indexer.index_dir),
            "backend": self.settings.backend,
            "skipped": dict(list(state.skipped.items())[:50]),
        }

    def summary(self) -> str:
        """``<name>: N cards, M chunks ready``."""
        state = self.indexer.state
        chunks = sum(f.chunks for f in state.files.values())
        return f"{self.root.name}: {len(state.files)} cards, {chunks} chunks ready"

    def watcher(self, *, debounce_ms: int, on_sync: Callable[[SyncReport], None]) -> VaultWatcher:
        """A watcher of the folder that keeps the index in step and reports each update to
        ``on_sync`` (which should :meth:`apply` it under the owner's lock)."""
        return VaultWatcher(self.indexer, debounce_ms=debounce_ms, on_sync=on_sync)

    # ------------------------------------------------------------------ graph

    def build_graph(self) -> list[str]:
        """Parse every card into a fresh graph (and search engine). Returns read problems."""
        self.graph, self.engine, problems = self.load_graph()
        return problems

    def load_graph(self) -> tuple[LinkGraph, SearchEngine, list[str]]:
        """A new graph and engine (the current ones untouched): every card the index knows,
        from the card cache where path and text are unchanged, else read and parsed now."""
        state = self.indexer.state
        if state.files:  # the index is current (after a sync): parse only what the cache lacks
            cards, problems = cached_cards(
                self.root,
                sorted((rel, f.sha256) for rel, f in state.files.items()),
                self.indexer.index_dir,
                self.settings.max_file_bytes,
                title_source=self.settings.title_source,
            )
            problems.extend(state.skipped.values())
        else:
            cards, problems = load_vault(
                self.root,
                self.settings.ignore_globs,
                self.settings.max_file_bytes,
                title_source=self.settings.title_source,
                follow_external_symlinks=self.settings.follow_external_symlinks,
            )
        graph = LinkGraph.build(cards)
        return graph, self._engine(graph), problems

    def _engine(self, graph: LinkGraph) -> SearchEngine:
        return SearchEngine(
            self.indexer.store,
            self.indexer.embedder,
            graph,
            dense_ready=lambda: self.dense_ready,
        )

    def close(self) -> None:
        self.indexer.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
