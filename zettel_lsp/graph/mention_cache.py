"""The graph's unlinked mentions kept beside the index, so a restart does not search every card
for every title again (issue #18).

The mention pass is the one start-up step that grows faster than the vault: each card names more
titles when there are more titles to name. Measured on generated vaults (2 cores): 18 s at 25k
cards, 117 s at 100k. A restart reuses a card's mentions when its text is the same and it holds
none of the titles or aliases that changed since (:meth:`LinkGraph.build`), so only new and
edited cards, and those naming a new or changed title, are searched.

Like the card cache, it is only a shortcut: a missing, damaged or older file is ignored, and
writes are atomic (a crash leaves the old file or none).
"""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.graph.link_graph import MENTION_FORMAT, MentionCache
from zettel_lsp.notes.pickle_file import read_pickle, write_pickle

MENTION_FILE = "mentions.pickle"


def load_mentions(folder: Path) -> MentionCache | None:
    data = read_pickle(folder / MENTION_FILE, "searching the cards again")
    if not isinstance(data, MentionCache) or data.format != MENTION_FORMAT:
        return None
    return data


def save_mentions(folder: Path, cache: MentionCache) -> None:
    write_pickle(folder / MENTION_FILE, cache, "mention cache")
