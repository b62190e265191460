"""``zettel-lsp index --export-to``: an embedded index copied to a Qdrant server."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

from zettel_lsp.index.status import Progress
from zettel_lsp.index.store_api import StoreError
from zettel_lsp.index.sync import Indexer
from zettel_lsp.progress import TerminalProgress


def export_index(
    indexer: Indexer, url: str, api_key: str | None, progress: TerminalProgress, out: Any
) -> None:
    """``index --export-to URL``: copy the embedded index's points to the vault's collection on
    a Qdrant server (idempotent: run again to resume), then hand the index folder's state over
    to that server, so that a start with ``qdrant_url`` = URL continues without re-indexing."""
    from zettel_lsp.index.remote_store import (
        RemoteStore,
        VaultIdentity,
        collection_name,
        export_points,
        this_host,
    )

    state = indexer.state
    name = collection_name(indexer.index_dir)
    identity = VaultIdentity(
        str(indexer.vault), state.model, state.dim, state.chunker, host=this_host()
    )
    print(f"zettel-lsp: exporting to collection {name} on {url}", file=sys.stderr)
    target = RemoteStore.connect(
        url, api_key, name, state.dim, state.bm25_avg_len or 100.0, identity=identity
    )
    try:
        report = export_points(
            indexer.store,
            {p: f.chunks for p, f in state.files.items()},
            target,
            multilingual_cards=sum(1 for f in state.files.values() if f.multilingual),
            progress=lambda done, total: progress(Progress("points exported", done, total)),
        )
    except StoreError as exc:
        raise StoreError(
            f"{exc}; the export stopped: run the same command again to resume it (points "
            "already copied are written again, nothing is doubled)"
        ) from exc
    finally:
        progress.finish()
        target.close()
    # the folder's bookkeeping now describes the server's collection (the same points and
    # vectors; no multilingual vectors there)
    moved = replace(
        state,
        backend=f"qdrant:{url}",
        multilingual_model="",
        files={p: replace(f, multilingual=False) for p, f in state.files.items()},
        pending=list(state.pending),
        skipped=dict(state.skipped),
    )
    indexer.state = moved  # saved when the indexer closes, under the folder's lock
    print(
        f"Exported {report.points:,} points ({report.with_dense:,} with vectors) of "
        f"{report.cards:,} cards to {url}, collection {name}"
        + (f"; removed {report.removed:,} stale cards there" if report.removed else ""),
        file=out,
    )
    if report.multilingual_left_out:
        print(
            f"  multilingual vectors of {report.multilingual_left_out:,} cards left out: a server "
            "collection has no multilingual vector yet (that search leg is off in remote mode)",
            file=out,
        )
    print(
        f'  now set the setting qdrantUrl to "{url}" (VS Code: zettel.qdrantUrl; Neovim: '
        "settings.zettel.qdrantUrl), with the same index folder: the next start continues "
        "from the server without re-indexing. Commands run without it rebuild the embedded "
        "index (docs/remote.md)",
        file=out,
    )
