"""Which embedder a model setting means."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.index.embedders.base import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_BATCH_TOKENS,
    DEFAULT_MAX_LENGTH,
    Embedder,
)
from zettel_lsp.index.embedders.bundled import DEFAULT_MODEL
from zettel_lsp.index.embedders.fastembed_backend import FastembedEmbedder
from zettel_lsp.index.embedders.ollama_backend import OllamaEmbedder, is_ollama
from zettel_lsp.index.embedders.use_backend import UseEmbedder, is_use
from zettel_lsp.ollama_client import OllamaSettings


def make_embedder(
    model: str = DEFAULT_MODEL,
    *,
    cache_dir: Path,
    threads: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_length: int = DEFAULT_MAX_LENGTH,
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    ollama: OllamaSettings | None = None,
) -> Embedder:
    """The embedder for a model setting: ``ollama:<name>`` is embedded by Ollama (``ollama``:
    where and how long to wait; the defaults when None), ``use-multilingual`` by the
    multilingual Universal Sentence Encoder (``use_backend``, offline), any other name by
    fastembed (the bundled model for ``DEFAULT_MODEL``, offline). ``threads`` applies to
    fastembed and to the Universal Sentence Encoder's documents.
    Raises :class:`~zettel_lsp.index.embedders.base.EmbedderError` for an unusable setting."""
    if is_ollama(model):
        return OllamaEmbedder(
            model,
            cache_dir=cache_dir,
            ollama=ollama,
            batch_size=batch_size,
            max_length=max_length,
            max_batch_tokens=max_batch_tokens,
        )
    if is_use(model):
        return UseEmbedder(
            model,
            cache_dir=cache_dir,
            threads=threads,
            batch_size=batch_size,
            max_length=max_length,
            max_batch_tokens=max_batch_tokens,
        )
    return FastembedEmbedder(
        model,
        cache_dir=cache_dir,
        threads=threads,
        batch_size=batch_size,
        max_length=max_length,
        max_batch_tokens=max_batch_tokens,
    )
