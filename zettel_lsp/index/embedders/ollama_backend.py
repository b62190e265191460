"""Embeddings from an Ollama server: a model setting ``ollama:<name>`` (e.g.
``ollama:nomic-embed-text``), through :class:`~zettel_lsp.ollama_client.OllamaHttp`.

The ``model_id`` is ``ollama:<name>:<tag>`` without the host, so moving Ollama does not
re-embed. The dimension comes from a probe and is remembered in ``<cache_dir>/ollama-dims.json``,
so an index can open (lexical legs) while Ollama is down. Tokens are counted with the bundled
model's tokenizer (offline). After Ollama did not answer, calls fail at once for
``OLLAMA_RETRY_SECONDS`` instead of waiting again.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import numpy as np

from zettel_lsp.index.embedders.base import Embedder, EmbedderError, EmbedderOptions
from zettel_lsp.index.embedders.bundled import assemble_default_model
from zettel_lsp.ollama_client import OllamaError, OllamaHttp, OllamaSettings, ollama_model_name

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

OLLAMA_PREFIX = "ollama:"
OLLAMA_RETRY_SECONDS = 10.0  # after a failed connection, fail at once for this long
_DIMS_FILE = "ollama-dims.json"
# Task prefixes the model cards ask for: (documents, queries). Keyed by the name without tag.
_TASK_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),
    "mxbai-embed-large": ("", "Represent this sentence for searching relevant passages: "),
}


def is_ollama(model: str) -> bool:
    """Whether the model setting names an Ollama model."""
    return model.startswith(OLLAMA_PREFIX)


class OllamaEmbedder(Embedder):
    """``ollama:<name>``: vectors from ``/api/embed``, tokens counted offline."""

    def __init__(
        self,
        model: str,
        *,
        cache_dir: Path,
        ollama: OllamaSettings | None = None,
        **options: Unpack[EmbedderOptions],
    ) -> None:
        super().__init__(model, cache_dir=cache_dir, **options)
        name = model.removeprefix(OLLAMA_PREFIX).strip()
        if not name:
            raise EmbedderError(
                "give an Ollama model after 'ollama:', e.g. 'ollama:nomic-embed-text'"
            )
        self.ollama_model = ollama_model_name(name)  # with its tag, as Ollama names it
        base = self.ollama_model.rsplit("/", 1)[-1].split(":", 1)[0]
        self.document_prefix, self.query_prefix = _TASK_PREFIXES.get(base, ("", ""))
        self._http = OllamaHttp(ollama)
        self._tokenizer_dir = assemble_default_model(cache_dir)  # counts tokens, offline
        self._down_until = 0.0
        self._down_message = ""

    @property
    def model_id(self) -> str:
        return f"{OLLAMA_PREFIX}{self.ollama_model}"  # host-independent

    @cached_property
    def dim(self) -> int:
        """Probe the dimension; remember it so the index opens while Ollama is down."""
        cache = self.cache_dir / _DIMS_FILE
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
            if not isinstance(known, dict):
                known = {}
        except (OSError, ValueError):
            known = {}
        try:
            dim = len(self._embed(["dimension probe"])[0])
        except EmbedderError as exc:
            cached = known.get(self.model_id)
            if isinstance(cached, int) and cached > 0:
                log.warning("%s; using the remembered dimension %d", exc, cached)
                return cached
            raise
        if known.get(self.model_id) != dim:
            known[self.model_id] = dim
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                tmp = cache.with_name(f"{cache.name}.tmp-{os.getpid()}-{threading.get_ident()}")
                tmp.write_text(json.dumps(known, indent=2, sort_keys=True), encoding="utf-8")
                tmp.replace(cache)
            except OSError as exc:  # a read-only cache only costs a probe next time
                log.info("could not remember the embedding dimension in %s: %s", cache, exc)
        return dim

    def close(self) -> None:
        self._http.close()

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(self._tokenizer_dir / "tokenizer.json"))

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One ``/api/embed`` call; failures as one-line EmbedderErrors. After Ollama did not
        answer, fails at once (with the same message) for OLLAMA_RETRY_SECONDS."""
        if time.monotonic() < self._down_until:
            raise EmbedderError(self._down_message)
        try:
            return self._http.embed(self.ollama_model, texts)
        except OllamaError as exc:
            message = self._http.message(exc, self.ollama_model, embedding_model=self.model_id)
            if exc.no_answer:
                self._down_message = message
                self._down_until = time.monotonic() + OLLAMA_RETRY_SECONDS
            raise EmbedderError(message) from exc

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """``/api/embed`` in batches of ``batch_size`` texts, rows in input order."""
        dim = self.dim
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        counts = self._processed_tokens(texts)
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [self.document_prefix + t for t in texts[i : i + self.batch_size]]
            vectors = self._embed(batch)
            if any(len(v) != dim for v in vectors):
                raise EmbedderError(
                    f"embedding model '{self.model_id}' now returns vectors of another size "
                    f"than {dim} (was it replaced?); restart to re-embed"
                )
            rows.extend(vectors)
            self.tokens_processed += sum(counts[i : i + self.batch_size])
            if progress is not None:
                progress(len(rows))
        return np.asarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._embed([self.query_prefix + text])[0], dtype=np.float32)
