"""Embedding models behind one interface (see ``base``): :func:`make_embedder` picks the
backend from the model setting (``fastembed_backend``, ``ollama_backend``, ``use_backend``);
``bundled`` assembles the offline default model."""

from zettel_lsp.index.embedders.base import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_BATCH_TOKENS,
    DEFAULT_MAX_LENGTH,
    Embedder,
    EmbedderError,
)
from zettel_lsp.index.embedders.bundled import DEFAULT_MODEL, assemble_default_model
from zettel_lsp.index.embedders.factory import make_embedder
from zettel_lsp.index.embedders.ollama_backend import OLLAMA_PREFIX
from zettel_lsp.index.embedders.use_backend import USE_DIM, USE_MODEL, UseEmbedder

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_BATCH_TOKENS",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_MODEL",
    "OLLAMA_PREFIX",
    "USE_DIM",
    "USE_MODEL",
    "Embedder",
    "EmbedderError",
    "UseEmbedder",
    "assemble_default_model",
    "make_embedder",
]
