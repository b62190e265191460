"""Optional LLM features through a local Ollama server (the official ``ollama`` client).

Nothing else in zettel-lsp needs this package or a running Ollama. Every function here falls
back to the non-LLM result with a one-line message when Ollama does not answer. The API (the
names below: settings, the :class:`Ollama` client, :func:`ask`, :func:`search_llm`, the errors)
is described in docs/llm.md; ``ollama:`` index embedding models are in
``index/embedders/ollama_backend.py``, and both share :mod:`zettel_lsp.ollama_client`.

The names load on first use: importing ``zettel_lsp.llm.settings`` (the CLI and the server do at
start) does not import the ``ollama`` client (about 0.3 s).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # "X as X": re-exported
    from zettel_lsp.llm.ask import AskResult as AskResult
    from zettel_lsp.llm.ask import ask as ask
    from zettel_lsp.llm.client import Cancel as Cancel
    from zettel_lsp.llm.client import Ollama as Ollama
    from zettel_lsp.llm.errors import LLMCancelled as LLMCancelled
    from zettel_lsp.llm.errors import LLMError as LLMError
    from zettel_lsp.llm.errors import LLMUnavailable as LLMUnavailable
    from zettel_lsp.llm.expand import expand_query as expand_query
    from zettel_lsp.llm.rerank import llm_rerank as llm_rerank
    from zettel_lsp.llm.search import search_llm as search_llm
    from zettel_lsp.llm.settings import LLM_KEYS as LLM_KEYS
    from zettel_lsp.llm.settings import LLMSettings as LLMSettings
    from zettel_lsp.llm.settings import parse as parse

_MODULES = {  # zettel_lsp.llm.<module>: the names it exports here
    "ask": ("AskResult", "ask"),
    "client": ("Cancel", "Ollama"),
    "errors": ("LLMCancelled", "LLMError", "LLMUnavailable"),
    "expand": ("expand_query",),
    "rerank": ("llm_rerank",),
    "search": ("search_llm",),
    "settings": ("LLM_KEYS", "LLMSettings", "parse"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'zettel_lsp.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zettel_lsp.llm.{module}"), name)
    globals()[name] = value
    return value
