"""The index folder: what it may hold, the check before anything is written there, the
rebuild of an older layout, and the opening of its shard (rebuilt when damaged). The folder's
lock is :mod:`zettel_lsp.index.folder_lock`; its database :mod:`zettel_lsp.index.db`."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from zettel_lsp.index.compact import COMPACT_LOG
from zettel_lsp.index.db import DB_FILES
from zettel_lsp.index.folder_lock import LOCK_FILE
from zettel_lsp.index.store import EdgeStore
from zettel_lsp.index.store_api import StoreError
from zettel_lsp.workdir import MARKER, overlap

log = logging.getLogger(__name__)


def open_local_store(folder: Path, dim: int) -> tuple[EdgeStore, bool]:
    """The folder's shard, and whether it had to be rebuilt. Damaged (e.g. killed while the
    shard was being created): the caller holds the folder's lock, so no live process is using
    it; the notes are the truth and the index can always be rebuilt, so it starts again."""
    try:
        return EdgeStore(folder, dim, 100.0), False
    except StoreError as exc:
        log.warning("%s; rebuilding the index from the notes", exc)
        EdgeStore.destroy(folder)
        return EdgeStore(folder, dim, 100.0), True


# The mark of an index folder of the layout before the database (see clear_old_layout)
OLD_STATE = "state.json"

# What an index folder holds; a folder holding anything else is not one (and is never written).
INDEX_ENTRIES = frozenset({LOCK_FILE, *DB_FILES, "shard", COMPACT_LOG})


def clear_old_layout(folder: Path) -> None:
    """An index folder of the layout before the database (with a ``state.json``) is rebuilt:
    everything in it but the lock is removed. Call under the folder's lock."""
    if not (folder / OLD_STATE).is_file():
        return
    log.info("%s holds an index of an older layout: rebuilding it from the notes", folder)
    for entry in os.scandir(folder):
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def check_index_folder(folder: Path, vault: Path) -> None:
    """Refuse an index folder that is the vault or holds it, or that holds files of its own
    (a user's folder): the index writes and, when damaged, deletes its files there."""
    where = overlap(folder, vault)
    if where in ("is", "contains"):
        raise StoreError(
            f"the index folder {folder} {where} the notes folder {vault}; choose a folder "
            "outside the notes (the default, in the user cache) or a new one such as "
            f"{vault / '.zettel-index'}"
        )
    try:
        names = [e.name for e in os.scandir(folder)]
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise StoreError(f"cannot read the index folder {folder}: {exc.strerror}") from exc
    if OLD_STATE in names:
        return  # an index folder of an older layout (rebuilt once it is locked)
    foreign = sorted(
        n
        for n in names
        if n not in INDEX_ENTRIES
        and not n.startswith((".state-", ".cards-", ".mentions-", ".graph-", MARKER))  # older
    )
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise StoreError(
            f"{folder} is not an index folder made by zettel-lsp (it holds {shown}); "
            "choose a new or empty folder for the index"
        )
