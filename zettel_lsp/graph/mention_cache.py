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

import contextlib
import logging
import os
import pickle
import tempfile
from pathlib import Path

from zettel_lsp.graph.link_graph import MENTION_FORMAT, MentionCache

log = logging.getLogger(__name__)

MENTION_FILE = "mentions.pickle"


def load_mentions(folder: Path) -> MentionCache | None:
    path = folder / MENTION_FILE
    try:
        with path.open("rb") as fh:
            data = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a damaged cache is only a slower start
        log.info("mention cache %s unreadable (%s); searching the cards again", path, exc)
        return None
    if not isinstance(data, MentionCache) or data.format != MENTION_FORMAT:
        return None
    return data


def save_mentions(folder: Path, cache: MentionCache) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".mentions-", suffix=".pickle", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(cache, fh, protocol=5)
        os.replace(tmp, folder / MENTION_FILE)
    except Exception as exc:  # noqa: BLE001 - the cache is a shortcut: a failed write costs time
        log.warning("mention cache not saved (%s: %s)", type(exc).__name__, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
