"""One vault as a service: its index (kept in step), its graph and its search engine.

The CLI and the language server both use this, so their behaviour cannot drift apart.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.sync import Indexer, IndexSettings, ProgressFn, SyncReport
from zettel_lsp.notes.card_cache import cached_cards
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.engine import SearchEngine

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
    ) -> None:
        self.root = root.resolve()
        self.settings = settings or IndexSettings()
        self.indexer = Indexer(
            self.root, index_dir, self.settings, cache_dir=cache_dir, progress=progress
        )
        self.graph = LinkGraph()
        self.engine = SearchEngine(self.indexer.store, self.indexer.embedder, self.graph)

    def open(self, *, embed: bool = True) -> OpenReport:
        """Bring the index up to date, build the graph, and (by default) finish embedding."""
        report = self.indexer.sync()
        problems = self.build_graph()
        embedded = self.indexer.embed_pending() if embed else 0
        self.engine.dense_available = self.indexer.state.dense_done > 0
        return OpenReport(report, embedded, problems)

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
        engine = SearchEngine(self.indexer.store, self.indexer.embedder, graph)
        engine.dense_available = self.engine.dense_available
        return graph, engine, problems

    def close(self) -> None:
        self.indexer.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
