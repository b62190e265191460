"""Session life: initialize, initialized, settings and workspace-folder changes, shutdown.

Vaults start and stop on the server's one vault thread (:meth:`ZettelLanguageServer.in_order`),
so a settings change and a folder change arriving together cannot interleave.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from zettel_lsp import __version__
from zettel_lsp.server.server import ZettelLanguageServer, workspace_roots
from zettel_lsp.server.settings import parse_settings
from zettel_lsp.server.vault_root import find_vault_root

log = logging.getLogger("zettel_lsp")


def on_initialize(ls: ZettelLanguageServer, params: types.InitializeParams) -> None:
    ls.settings, ls.settings_problems = parse_settings(params.initialization_options)


def on_initialized(ls: ZettelLanguageServer, params: types.InitializedParams) -> None:
    roots = workspace_roots(ls)
    log.info(
        "zettel-lsp %s ready; workspace folders: %s",
        __version__,
        ", ".join(str(r) for r in roots) or "none",
    )
    if ls.settings_problems:
        ls.show("warning", "zettel-lsp settings: " + "; ".join(ls.settings_problems))
    ls.in_order(lambda: ls.start_vaults(roots))


def on_configuration(ls: ZettelLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    new, problems = parse_settings(params.settings, ls.settings)
    if problems:
        ls.show("warning", "zettel-lsp settings: " + "; ".join(problems))
    restart = new.index_key() != ls.settings.index_key()
    self_tune = new.suggest_self_tune != ls.settings.suggest_self_tune
    ls.settings = new
    if self_tune and not restart:
        for service in ls.services:
            service.set_self_tune(new.suggest_self_tune)
    if restart:

        def reopen() -> None:
            roots = [s.root for s in ls.services]
            log.info("index settings changed: re-opening %d vault(s)", len(roots))
            ls.stop_vaults()
            ls.start_vaults(roots)

        ls.in_order(reopen)


def on_folders(ls: ZettelLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    removed = [Path(p).resolve() for f in params.event.removed if (p := to_fs_path(f.uri))]
    added = [Path(p).resolve() for f in params.event.added if (p := to_fs_path(f.uri))]

    def change() -> None:
        # a removed folder's vault stays while another workspace folder lies in it; a folder
        # that lay in a vault now stopped is served on its own
        current = [r for r in workspace_roots(ls, fallback=False) if r not in removed]
        kept = {find_vault_root(r)[0] for r in current}
        gone = {*removed, *(find_vault_root(r)[0] for r in removed)} - kept
        ls.stop_vaults(sorted(gone), compact=True)
        ls.start_vaults([*added, *current])

    ls.in_order(change)


async def on_shutdown(ls: ZettelLanguageServer, *args: Any) -> None:
    # Flush and close every shard before answering, after any start or stop still queued. Off
    # the event loop: a vault still starting may be waiting for the client's answer to a
    # progress request.
    ls.cancel_all()
    stop = functools.partial(ls.stop_vaults, compact=True)
    await asyncio.get_running_loop().run_in_executor(ls.vault_tasks, stop)
    ls.stop_requests()


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_configuration)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(on_folders)
    server.feature(types.SHUTDOWN)(on_shutdown)
