"""The link graph kept whole beside the index, so that a restart loads it instead of building
it (issue #18).

Building the graph at start-up (cards from the card cache, 230k links resolved, 4M mentions
counted, the title index) took ~13 s of the server's start at 100k generated cards (2 cores),
and grows with the vault. The snapshot is the graph as the last full build left it, with the
title index, and the content hash of every card it was parsed from. A start compares those
hashes with the index state's: when at most :func:`max_changes` cards differ, the snapshot is
loaded and the difference applied through the graph's own incremental updates
(:meth:`LinkGraph.remove`, :meth:`LinkGraph.upsert`: the same code that follows every edit, and
tested to give the graph a full build gives); else the graph is built in full (with the card
and mention caches) and the snapshot written again.

Like the other caches it is only a shortcut: a missing, damaged or older file, or one written
under another title rule or mention length, is ignored; writes are atomic.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.graph.link_graph import MENTION_FORMAT, LinkGraph
from zettel_lsp.notes.card_cache import CARD_FORMAT
from zettel_lsp.notes.pickle_file import read_pickle, write_pickle
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.search.titles import TitleIndex

log = logging.getLogger(__name__)

SNAPSHOT_FILE = "graph.pickle"
# bump the first part when LinkGraph or TitleIndex change what they hold
# 2: named_by as lists; 3: the graph/adjacency.py edges, no title automaton, resolver tuples;
# 4: the mention matcher's word-boundary automaton; 5: its values are the phrases alone;
# 6: LinkGraph.link_generation; 7: packed cards, spans of numbers, links' resolutions alone
SNAPSHOT_FORMAT = f"graph-7:{CARD_FORMAT}:{MENTION_FORMAT}"
# a start applies at most this many changed cards to a snapshot (or 1% of the cards, if more)
MAX_CHANGES = 200


@dataclass(slots=True)
class GraphSnapshot:
    format: str
    title_source: str
    files: dict[str, str]  # card path -> sha256 of the text it was parsed from
    graph: LinkGraph
    titles: TitleIndex


def max_changes(cards: int) -> int:
    """How many changed cards a start applies to a snapshot rather than building in full."""
    return max(MAX_CHANGES, cards // 100)


def load_snapshot(
    folder: Path, title_source: TitleSource | str, mention_min_length: int
) -> GraphSnapshot | None:
    data = read_pickle(folder / SNAPSHOT_FILE, "building the graph")
    if (
        not isinstance(data, GraphSnapshot)
        or data.format != SNAPSHOT_FORMAT
        or data.title_source != str(TitleSource(title_source))
        or data.graph.mention_min_length != mention_min_length
    ):
        return None
    return data


def save_snapshot(
    folder: Path,
    graph: LinkGraph,
    titles: TitleIndex,
    files: dict[str, str],
    title_source: TitleSource | str,
) -> None:
    """Write atomically (a crash leaves the old snapshot or none, never half of one)."""
    snap = GraphSnapshot(SNAPSHOT_FORMAT, str(TitleSource(title_source)), files, graph, titles)
    write_pickle(folder / SNAPSHOT_FILE, snap, "graph snapshot")


def changes(snapshot: dict[str, str], files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(cards gone, cards new or changed) between the snapshot's hashes and ``files``'."""
    gone = sorted(p for p in snapshot if p not in files)
    changed = sorted(p for p, sha in files.items() if snapshot.get(p) != sha)
    return gone, changed
