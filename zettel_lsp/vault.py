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
from zettel_lsp.graph.rows import load_mentions, save_mentions, stored_cards
from zettel_lsp.index.status import ProgressFn, SyncReport
from zettel_lsp.index.store import DENSE, DENSE_ML
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.index.watch import VaultWatcher
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.calibrate import (
    Calibration,
    calibrate,
    is_stale,
    load_calibration,
    save_calibration,
)
from zettel_lsp.search.engine import (
    Multilingual,
    Reader,
    SearchEngine,
    direct,
    names_change,
    title_index,
)

log = logging.getLogger(__name__)


# what ``status`` says of each multilingual scope (Indexer.multilingual_scope)
_SCOPES = {
    "off": "off",
    "all": "all cards",
    "foreign": "non-English cards",
    "none": "none until a query is not English",
}


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
        # set (e.g. an ``ollama:`` model while Ollama is down): the dense leg stays off
        self.dense_off_reason = ""
        self._has_vectors = False  # some card is embedded (once true, stays true)
        # some card / some foreign card has multilingual vectors
        self._has_multilingual: tuple[bool, bool] = (False, False)
        self.on_foreign_query: Callable[[], None] | None = None  # set by a server: wake work
        # the link suggestions' fusion chosen on the vault's own links (search/calibrate.py);
        # self_tune False: the default fusion (a setting; the calibration stays on disk)
        self.self_tune = True
        self.calibration = load_calibration(self.indexer.db)
        self.graph = LinkGraph()
        self.engine = self._engine(self.graph)

    # ------------------------------------------------------------------ life

    def open(self, *, embed: bool = True) -> OpenReport:
        """Bring the index up to date, build the graph, and (by default) finish embedding."""
        report = self.indexer.sync()
        self.graph, self.engine, problems = self.load_graph()
        embedded = self.indexer.embed_pending() if embed else 0
        return OpenReport(report, embedded, problems)

    def apply(self, report: SyncReport) -> bool:
        """Bring the graph (and the engine's titles) in step with an index update (from a
        watcher or a sync). Returns whether anything changed."""
        if not (report.cards_changed or report.paths_removed):
            return False
        renamed = names_change(self.graph, report.paths_removed, report.cards_changed)
        self.graph.apply_changes(report.paths_removed, report.cards_changed)
        if renamed:  # the title index is rebuilt only when a name changed, not for prose
            self.engine.titles = title_index(self.graph)
        # a link edit changes its target's anchor text now; a name, whatever a link resolves to
        changed = [*report.paths_removed, *(c.path for c in report.cards_changed)]
        self.engine.update_anchors(changed, everything=renamed)
        return True

    def foreign_query(self) -> None:
        """A query was not English: every card is to get multilingual vectors (``auto``), and
        the model is to be loaded; a server's hook (``on_foreign_query``) starts that work."""
        new = self.indexer.want_multilingual_all()
        emb = self.indexer.multilingual_embedder
        if self.on_foreign_query is not None and (new or (emb is not None and not emb.loaded)):
            self.on_foreign_query()

    def load_multilingual_model(self) -> None:
        """Load the multilingual model (one query embedding), if it is in use."""
        emb = self.indexer.multilingual_embedder
        if emb is not None and self.indexer.multilingual_available and not emb.loaded:
            emb.embed_query("warm up")

    def ensure_multilingual(self, should_stop: Callable[[], bool] | None = None) -> int:
        """For a caller about to search in another language without a server (the CLI): every
        card embedded by the multilingual model, and the model loaded. Returns chunks embedded."""
        if not self.indexer.multilingual_available:
            return 0
        self.indexer.want_multilingual_all()
        done = self.indexer.embed_multilingual(should_stop)
        self.load_multilingual_model()
        return done

    def multilingual_status(self) -> tuple[bool, bool]:
        """(some card has multilingual vectors, some non-English card has), once true stays
        true (asked on every search)."""
        # no multilingual vector was ever stored (an English vault before any foreign query):
        # answer without asking the indexer
        if (
            not all(self._has_multilingual)
            and self.indexer.multilingual_available
            and self.indexer.state.multilingual_model
        ):
            some, foreign = self.indexer.status.multilingual_presence()
            self._has_multilingual = (
                self._has_multilingual[0] or some,
                self._has_multilingual[1] or foreign,
            )
        return self._has_multilingual

    def _multilingual_query_ready(self) -> bool:
        emb = self.indexer.multilingual_embedder
        return bool(emb is not None and self.multilingual_status()[0] and emb.loaded)

    def load_model(self) -> None:
        """Load the embedding model (one query embedding); from then on the dense leg may run.
        Raises what the embedder raises (EmbedderError, OSError, ...)."""
        self.indexer.embedder.embed_query("warm up")
        self.model_loaded = True

    def warm_store(self, should_stop: Callable[[], bool] | None = None) -> int:
        """Read the stored dense vectors once (see :meth:`EdgeStore.warm`), and the
        multilingual ones when their model is loaded (queries will use them); a slice at a
        time, stopping when ``should_stop`` says so. Returns how many vectors were read."""
        ix = self.indexer
        done = ix.store.warm(ix.stored_ids(DENSE), ix.state.dim, should_stop=should_stop)
        emb = ix.multilingual_embedder
        if emb is not None and emb.loaded and self.multilingual_status()[0]:
            done += ix.store.warm(
                ix.stored_ids(DENSE_ML), emb.dim, using=DENSE_ML, should_stop=should_stop
            )
        return done

    def calibration_due(self) -> bool:
        """Whether :meth:`calibrate` should run: self-tuning is on, the dense leg is ready
        (the legs it weighs need vectors), and there is no calibration yet or the vault's cards
        or links changed by 10% since (:func:`~zettel_lsp.search.calibrate.is_stale`)."""
        if not self.self_tune or not self.dense_ready:
            return False
        graph = self.graph
        return is_stale(self.calibration, len(graph.cards), len(graph.linked_pairs()))

    def calibrate(
        self,
        *,
        read: Reader = direct,
        progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> Calibration | None:
        """Choose the suggestions' fusion on the vault's own links
        (:func:`~zettel_lsp.search.calibrate.calibrate`), save it in the index folder and use
        it from now on. None (and the default kept) when the vault has too few links or
        ``should_stop`` said so. ``read``: a server's vault lock, for the graph and index
        reads; the work between them runs outside it."""
        made = calibrate(
            self.engine,
            title_source=self.settings.title_source,
            read=read,
            progress=progress,
            should_stop=should_stop,
        )
        if made is not None:
            save_calibration(self.indexer.db, made)
            self.calibration = made
        return made

    @property
    def dense_ready(self) -> bool:
        """Whether the dense leg runs: some vectors exist, the model is loaded (when asked to
        wait for it), and it was not switched off."""
        if self.dense_off_reason or not self.model_loaded:
            return False
        if not self._has_vectors:  # asked on every search: stop looking once a vector exists
            self._has_vectors = any(f.dense for f in self.indexer.card_states())
        return self._has_vectors

    def status(self) -> dict[str, Any]:
        """What the index holds, for ``zettel.status`` and ``zettel-lsp status``."""
        ix, state = self.indexer, self.indexer.state
        tally = ix.status.tally()
        legs = ["bm25", "keyword", "title"]
        if self.dense_ready:
            legs.append("dense")
        if tally.multilingual and self._multilingual_query_ready():
            legs.append("dense_ml")
        return {
            "cards": len(state.files),
            "chunks": tally.chunks,
            "cards_embedded": tally.dense,
            "chunks_waiting_for_vectors": ix.dense_pending,
            "model": ix.embedder.model_id,
            "languages": ix.status.languages(),
            "multilingual": ix.multilingual_mode,
            "multilingual_model": ix.multilingual_embedder.model_id
            if ix.multilingual_embedder
            else "",
            "multilingual_scope": _SCOPES[ix.multilingual_scope()],
            "cards_embedded_multilingual": tally.multilingual,
            "non_english_cards_embedded_multilingual": tally.multilingual_foreign,
            "cards_waiting_for_multilingual": ix.multilingual_todo,
            **(
                {"multilingual_off_reason": ix.multilingual_off_reason}
                if ix.multilingual_off_reason
                else {}
            ),
            "legs_ready": legs,
            "index_dir": str(ix.index_dir),
            "backend": self.settings.backend,
            "points_uncompacted": state.uncompacted,
            "suggestion_weights": (
                "default (self-tuning off)"
                if not self.self_tune
                else "chosen on this vault's links"
                if self.calibration is not None
                else "default (not chosen yet)"
            ),
            "self_tuned": None if self.calibration is None else self.calibration.to_json(),
            "skipped": dict(list(state.skipped.items())[:50]),
        }

    def summary(self) -> str:
        """``<name>: N cards, M chunks ready``."""
        cards, chunks = len(self.indexer.state.files), self.indexer.status.tally().chunks
        return f"{self.root.name}: {cards:,} cards, {chunks:,} chunks ready"

    def watcher(self, *, debounce_ms: int, on_sync: Callable[[SyncReport], None]) -> VaultWatcher:
        """A watcher of the folder that keeps the index in step and reports each update to
        ``on_sync`` (which should :meth:`apply` it under the owner's lock)."""
        return VaultWatcher(self.indexer, debounce_ms=debounce_ms, on_sync=on_sync)

    # ------------------------------------------------------------------ graph

    def save_graph_rows(self) -> int:
        """Write the database's card and mention rows that are missing or stale, so that the
        next start (a server's) reads the graph instead of parsing and searching every note;
        the graph itself is not kept (nor is a search engine made for it). Returns the number of
        cards."""
        graph, _ = self._read_graph()
        return len(graph.cards)

    def load_graph(self) -> tuple[LinkGraph, SearchEngine, list[str]]:
        """A new graph and engine (the current ones untouched): every card the index knows,
        from the database where path and text are unchanged, else read and parsed now."""
        graph, problems = self._read_graph()
        return graph, self._engine(graph), problems

    def _read_graph(self) -> tuple[LinkGraph, list[str]]:
        """The graph of :meth:`load_graph`, and the read problems."""
        state = self.indexer.state
        if not state.files:
            cards, problems = load_vault(
                self.root,
                self.settings.ignore_globs,
                self.settings.max_file_bytes,
                title_source=self.settings.title_source,
                follow_external_symlinks=self.settings.follow_external_symlinks,
            )
            return LinkGraph.build(cards), problems
        # the index is current (after a sync): the cards and mentions the database holds;
        # only what it lacks is read, parsed and searched
        db = self.indexer.db
        cards, problems = stored_cards(
            db,
            self.root,
            ((rel, f.sha256) for rel, f in self.indexer.card_items()),
            self.settings.max_file_bytes,
            title_source=self.settings.title_source,
        )
        problems.extend(state.skipped.values())
        graph = LinkGraph.build(cards, mentions=load_mentions(db))
        if graph.mentions_found:
            save_mentions(db, graph.mention_cache())
        log.info(
            "mentions for the graph: %d cards searched, %d reused",
            graph.mentions_found,
            len(graph.cards) - graph.mentions_found,
        )
        graph.forget_digests()
        return graph, problems

    def _engine(self, graph: LinkGraph) -> SearchEngine:
        multilingual = self.indexer.multilingual_embedder
        return SearchEngine(
            self.indexer.store,
            self.indexer.embedder,
            graph,
            dense_ready=lambda: self.dense_ready,
            languages=self.indexer.status.main_languages,
            multilingual=(
                Multilingual(
                    multilingual,
                    query_ready=self._multilingual_query_ready,
                    foreign_ready=lambda: (
                        self.multilingual_status()[1] and self._multilingual_query_ready()
                    ),
                    on_foreign_query=self.foreign_query,
                )
                if multilingual is not None
                else None
            ),
            # the fusion chosen on this vault's links; None: the default
            suggest_fusion=lambda: (
                None if not self.self_tune or self.calibration is None else self.calibration.fusion
            ),
        )

    def close(self) -> None:
        self.indexer.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
