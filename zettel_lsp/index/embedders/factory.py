"""Which embedder a model setting means."""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

from zettel_lsp.index.embedders.base import Embedder, EmbedderOptions
from zettel_lsp.index.embedders.bundled import DEFAULT_MODEL
from zettel_lsp.index.embedders.fastembed_backend import FastembedEmbedder
from zettel_lsp.index.embedders.ollama_backend import OllamaEmbedder, is_ollama
from zettel_lsp.index.embedders.use_backend import USE_NAMES, UseEmbedder
from zettel_lsp.ollama_client import OllamaSettings


def make_embedder(
    model: str = DEFAULT_MODEL,
    *,
    cache_dir: Path,
    threads: int | None = None,
    ollama: OllamaSettings | None = None,
    **options: Unpack[EmbedderOptions],
) -> Embedder:
    """The embedder for a model setting: ``ollama:<name>`` is embedded by Ollama (``ollama``:
    where and how long to wait; the defaults when None), ``use-multilingual`` by the
    multilingual Universal Sentence Encoder (``use_backend``, offline), any other name by
    fastembed (the bundled model for ``DEFAULT_MODEL``, offline). ``threads`` applies to
    fastembed and to the Universal Sentence Encoder's documents.
    Raises :class:`~zettel_lsp.index.embedders.base.EmbedderError` for an unusable setting."""
    if is_ollama(model):
        return OllamaEmbedder(model, cache_dir=cache_dir, ollama=ollama, **options)
    backend = UseEmbedder if model in USE_NAMES else FastembedEmbedder
    return backend(model, cache_dir=cache_dir, threads=threads, **options)
