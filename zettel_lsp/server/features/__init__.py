"""What the server answers, one module per capability. Each module owns its handlers (plain
module-level functions taking the server and the request's params, importable and testable on
their own), the logic behind them, and a ``register(server)`` that puts them on a server.

=============== ==================================================================
module          answers
=============== ==================================================================
lifecycle       initialize, initialized, configuration and folder changes, shutdown
search          workspace/symbol, zettel.search
navigation      textDocument/definition, textDocument/references
hover           textDocument/hover, zettel.related
actions         textDocument/codeAction, codeAction/resolve, zettel.suggestLinks
commands        zettel.reindex, zettel.status, zettel.ask
completion      textDocument/completion, completionItem/resolve (issue #16)
diagnostics     publishDiagnostics, textDocument/diagnostic, workspace/diagnostic (#16)
rename          textDocument/prepareRename, textDocument/rename, willRenameFiles (#16)
outline         documentSymbol, documentLink, codeLens, foldingRange (#16)
=============== ==================================================================
"""

from __future__ import annotations

from zettel_lsp.server.features import (
    actions,
    commands,
    completion,
    diagnostics,
    hover,
    lifecycle,
    navigation,
    outline,
    rename,
    search,
)
from zettel_lsp.server.server import ZettelLanguageServer

MODULES = (
    lifecycle,
    search,
    navigation,
    hover,
    actions,
    commands,
    completion,
    diagnostics,
    rename,
    outline,
)


def register_all(server: ZettelLanguageServer) -> None:
    """Register every feature module's handlers on ``server``."""
    for module in MODULES:
        module.register(server)
