"""The index folder: what it may hold, the check before anything is written there, the
rebuild of an older layout, the opening of its store (the shard, rebuilt when damaged, or a
Qdrant server's collection) and of the bookkeeping that goes with it. The folder's lock is
:mod:`zettel_lsp.index.folder_lock`; its database :mod:`zettel_lsp.index.db`."""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from zettel_lsp.index.compact import COMPACT_LOG
from zettel_lsp.index.db import DB_FILES
from zettel_lsp.index.folder_lock import LOCK_FILE
from zettel_lsp.index.state import IndexState
from zettel_lsp.index.store import STORE_LAYOUT, EdgeStore
from zettel_lsp.index.store_api import StoreError, VectorStore
from zettel_lsp.workdir import MARKER, make_private_dir, overlap

if TYPE_CHECKING:
    from zettel_lsp.index.sync import IndexSettings

log = logging.getLogger(__name__)


def open_store(
    folder: Path,
    dim: int,
    settings: IndexSettings,
    *,
    vault: str,
    model: str,
    model_dim: int,
    chunker: str,
    previous_model: str | None,
) -> tuple[VectorStore, bool]:
    """The index's store, and whether it had to be rebuilt: the folder's shard or a Qdrant
    server's collection. A damaged shard (e.g. killed while it was being created) starts again:
    the caller holds the folder's lock, so no live process is using it, and the notes are the
    truth. The collection records whose index it is; ``previous_model``, the model this
    writer's own state says it stored there, may differ from the current one (a model change:
    re-embedded in place)."""
    if not settings.qdrant_url:
        try:
            store, rebuilt = EdgeStore(folder, dim, 100.0), False
        except StoreError as exc:
            log.warning("%s; rebuilding the index from the notes", exc)
            EdgeStore.destroy(folder)
            store, rebuilt = EdgeStore(folder, dim, 100.0), True
        keep_private(folder)
        return store, rebuilt
    from zettel_lsp.index.remote_store import (
        RemoteStore,
        VaultIdentity,
        collection_name,
        this_host,
    )

    keep_private(folder)  # the database and the lock
    remote = RemoteStore.connect(
        settings.qdrant_url,
        settings.qdrant_api_key,
        collection_name(folder),
        dim,
        100.0,
        identity=VaultIdentity(vault, model, model_dim, chunker, host=this_host()),
        previous_model=previous_model,
    )
    return remote, False


def usable_state(
    state: IndexState | None,
    store: VectorStore,
    *,
    vault: str,
    backend: str,
    model: str,
    dim: int,
    chunker: str,
) -> IndexState:
    """The bookkeeping to go on with: ``state`` (None: none, or the store is new) when it is
    this vault's on this backend, its dense vectors dropped when the model changed; otherwise
    a new one, and the store's content is never trusted: it starts clean."""
    if state is None or state.vault != vault or state.backend != backend:
        created = isinstance(store, EdgeStore) and store.created
        state = IndexState(
            vault,
            model,
            chunker,
            dim=dim,
            backend=backend,
            store_layout=STORE_LAYOUT if created else 1,
        )
        if not created:  # a new shard is empty, with the vector of ``dim``
            stale = list(store.paths())
            if stale:
                store.delete_paths(stale)
            store.reset_dense(dim)
    elif state.dim != dim or state.model != model:
        log.info(
            "embedding model changed (%s -> %s): re-embedding, lexical search keeps working",
            state.model,
            model,
        )
        if not store.reset_dense(dim):
            state.files.clear()  # the store had to start again: re-index everything
        for f in state.files.values():
            f.dense = False
        state.model, state.dim = model, dim
    return state


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


def keep_private(folder: Path) -> None:
    """Make zettel-lsp's own entries of an index folder readable by the user alone (files 0600,
    the shard folder 0700): they hold the notes' text. The folder itself keeps its mode (0700
    when zettel-lsp made it; a user's folder is theirs); SQLite gives its log files the
    database's mode, and new shard files sit in the private shard folder."""
    for name in sorted(INDEX_ENTRIES):
        path = folder / name
        try:
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
                path.chmod(stat.S_IMODE(mode) & 0o700)
        except FileNotFoundError:
            continue
        except OSError as exc:  # not the user's file
            log.warning("cannot make %s private: %s", path, exc.strerror)


def check_index_folder(folder: Path, vault: Path) -> None:
    """Refuse an index folder that is the vault or holds it, or that holds files of its own
    (a user's folder): the index writes and, when damaged, deletes its files there. Then make
    the folder when it does not exist yet, with any missing parent, private (0700)."""
    where = overlap(folder, vault)
    if where in ("is", "contains"):
        raise StoreError(
            f"the index folder {folder} {where} the notes folder {vault}; choose a folder "
            "outside the notes (the default, in the user cache) or a new one such as "
            f"{vault / '.zettel-index'}"
        )
    try:
        names = [e.name for e in os.scandir(folder)]
    except FileNotFoundError:
        make_private_dir(folder)
        return
    except NotADirectoryError:
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
