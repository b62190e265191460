"""The pygls language server. Features arrive in later layers; this wires start-up and logging."""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from zettel_lsp import __version__
from zettel_lsp.server.logging_bridge import LspLogHandler

log = logging.getLogger("zettel_lsp")


class ZettelLanguageServer(LanguageServer):
    """The zettel-lsp server: one instance per editor session."""

    def __init__(self) -> None:
        super().__init__("zettel-lsp", __version__)


def create_server() -> ZettelLanguageServer:
    server = ZettelLanguageServer()

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ZettelLanguageServer, params: types.InitializedParams) -> None:
        folders = [to_fs_path(f.uri) or f.uri for f in ls.workspace.folders.values()]
        log.info(
            "zettel-lsp %s ready; workspace folders: %s", __version__, ", ".join(folders) or "none"
        )

    return server


def serve_stdio() -> None:
    server = create_server()
    handler = LspLogHandler(server)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        server.start_io()
    finally:
        log.removeHandler(handler)
