"""Errors of the LLM layer. Each carries ``.message``: one line, fit for ``window/showMessage``
and for the CLI's stderr. Callers catch :class:`LLMError` and fall back to the non-LLM result."""

from __future__ import annotations

from zettel_lsp.ollama_client import one_line


class LLMError(Exception):
    """The LLM call failed or its answer was unusable (malformed output, server error)."""

    def __init__(self, message: str) -> None:
        self.message = one_line(message)
        super().__init__(self.message)


class LLMUnavailable(LLMError):
    """No Ollama answers: not running, unreachable, timed out, or the model is not pulled."""


class LLMCancelled(LLMError):
    """The caller cancelled the request."""
