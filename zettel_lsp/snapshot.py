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

The file is not a bare pickle: the cards' texts and the mentions' spans follow the pickled
graph, and the graph keeps a reference into the file for each instead of the thing itself
(:mod:`zettel_lsp.notes.text_store`: 95 and 43 MB of the server's memory at 100k generated
cards). Its layout: :data:`MAGIC`, the pickle's and the texts' lengths (8 bytes each,
little-endian), the pickle, the texts. After a save, the graph that was saved lets its texts
and spans go the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.graph.link_graph import MENTION_FORMAT, LinkGraph
from zettel_lsp.notes.card_cache import CARD_FORMAT
from zettel_lsp.notes.text_store import TextStore, reading, writing
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.search.titles import TitleIndex

log = logging.getLogger(__name__)

SNAPSHOT_FILE = "graph.pickle"
# bump the first part when LinkGraph or TitleIndex change what they hold
# 2: named_by as lists; 3: the graph/adjacency.py edges, no title automaton, resolver tuples;
# 4: the mention matcher's word-boundary automaton; 5: its values are the phrases alone;
# 6: LinkGraph.link_generation; 7: packed cards, spans of numbers, links' resolutions alone;
# 8: the texts after the pickle (MAGIC); 9: the link edges in a networkx DiGraph
SNAPSHOT_FORMAT = f"graph-9:{CARD_FORMAT}:{MENTION_FORMAT}"
MAGIC = b"zettel-lsp graph snapshot 1\n"
_LENGTHS = struct.Struct("<QQ")
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
    data = _read(folder / SNAPSHOT_FILE)
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
    """Write atomically (a crash leaves the old snapshot or none, never half of one); then
    the cards of ``graph`` read their texts from the file written."""
    snap = GraphSnapshot(SNAPSHOT_FORMAT, str(TitleSource(title_source)), files, graph, titles)
    path = folder / SNAPSHOT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".graph-", suffix=".pickle", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh, writing() as sink:
            fh.write(MAGIC + _LENGTHS.pack(0, 0))
            pickle.dump(snap, fh, protocol=5)
            pickled = fh.tell() - len(MAGIC) - _LENGTHS.size
            sink.copy_to(fh)
            fh.seek(len(MAGIC))
            fh.write(_LENGTHS.pack(pickled, sink.size))
            sink_saved = sink.saved
        # opened before the rename: the file this process wrote, whatever replaces it later
        store = TextStore(Path(tmp), len(MAGIC) + _LENGTHS.size + pickled)
        store.path = path
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - a shortcut: a failed write costs time only
        log.warning("graph snapshot not saved (%s: %s)", type(exc).__name__, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    sink_saved(store)


def _read(path: Path) -> object | None:
    """The snapshot in ``path``, its cards reading their texts from it; None when there is
    none or it cannot be read (logged)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(MAGIC) + _LENGTHS.size)
            if not head.startswith(MAGIC) or len(head) != len(MAGIC) + _LENGTHS.size:
                log.info(
                    "%s unreadable (not a graph snapshot of this version); building the graph", path
                )
                return None
            pickled, texts = _LENGTHS.unpack(head[len(MAGIC) :])
            base = len(head) + pickled
            size = os.fstat(fh.fileno()).st_size
            if size != base + texts:
                log.info("%s is %d bytes, not %d; building the graph", path, size, base + texts)
                return None
            with reading(TextStore(path, base)):
                data: object = pickle.load(fh)  # our own file, in our own index folder
            return data
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a damaged snapshot is only a slower start
        log.info("%s unreadable (%s); building the graph", path, exc)
        return None


def changes(snapshot: dict[str, str], files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(cards gone, cards new or changed) between the snapshot's hashes and ``files``'."""
    gone = sorted(p for p in snapshot if p not in files)
    changed = sorted(p for p, sha in files.items() if snapshot.get(p) != sha)
    return gone, changed
