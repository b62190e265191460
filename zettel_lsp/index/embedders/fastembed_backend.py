"""Embeddings computed here with fastembed (ONNX): the bundled model, or any fastembed model.

The bundled model (see ``bundled``) is registered with ``TextEmbedding.add_custom_model`` and
loaded with ``specific_model_path``: no model hub is ever contacted. Any other fastembed model
can be chosen by name; it downloads where a network exists and fails with a clear message
where none does.

fastembed pads a batch to its longest text, so texts are embedded sorted by token count in
small batches (at most ``batch_size`` texts and ``max_batch_tokens`` padded tokens); truncation
is at 256 tokens, the length the model was trained at (measurements:
docs/decisions/0011-embedding-batches.md).
The ONNX session loads lazily: lexical indexing needs only the tokenizer.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from zettel_lsp.index.embedders.base import Embedder, EmbedderError, EmbedderOptions
from zettel_lsp.index.embedders.bundled import (
    BUNDLED_DIM,
    BUNDLED_LOCAL_NAME,
    BUNDLED_NAMES,
    DEFAULT_MODEL,
    assemble_default_model,
)

if TYPE_CHECKING:
    from fastembed import TextEmbedding
    from tokenizers import Tokenizer

# onnxruntime >= 1.31 writes telemetry files under ~/.cache at import unless this is set first.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

log = logging.getLogger(__name__)


class FastembedEmbedder(Embedder):
    """A fastembed ``TextEmbedding``: a bulk session (``threads``) and a one-thread query one."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        cache_dir: Path,
        threads: int | None = None,
        **options: Unpack[EmbedderOptions],
    ) -> None:
        super().__init__(model, cache_dir=cache_dir, **options)
        self.threads = threads
        self.is_bundled = model in BUNDLED_NAMES
        self._lock = threading.Lock()
        self._model: TextEmbedding | None = None
        self._query_model: TextEmbedding | None = None  # one thread (see _load_query_model)
        self._model_dir: Path | None = (
            assemble_default_model(cache_dir) if self.is_bundled else None
        )
        self._dim: int | None = BUNDLED_DIM if self.is_bundled else None

    @property
    def model_id(self) -> str:
        if self.is_bundled:
            return f"{DEFAULT_MODEL}@int8-onnx:max{self.max_length}"
        return f"{self.model_name}:max{self.max_length}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
            self._dim = len(self.embed_query("dimension probe"))
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None or self._query_model is not None

    def close(self) -> None:
        with self._lock:
            self._model = self._query_model = None

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        if self._model_dir is not None:
            return Tokenizer.from_file(str(self._model_dir / "tokenizer.json"))
        model = self._load()
        return Tokenizer.from_str(_inner(model).tokenizer.to_str())

    # ----------------------------------------------------------------- sessions

    def _load(self) -> TextEmbedding:
        with self._lock:
            if self._model is None:
                self._model = self._make_model(self.threads)
                log.info("embedding model %s loaded", self.model_id)
            return self._model

    def _load_query_model(self) -> TextEmbedding:
        """A second session with one thread for queries: the bulk session's worker threads (one
        per core) keep spinning between requests and slow other requests under load; one thread
        costs ~2 ms on a short query and never spins (docs/performance.md)."""
        with self._lock:
            if self._query_model is None:
                self._query_model = (
                    self._model if self.threads == 1 and self._model else self._make_model(1)
                )
            return self._query_model

    def _make_model(self, threads: int | None) -> TextEmbedding:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:  # pragma: no cover - a broken installation
            raise EmbedderError(
                f"fastembed is not installed ({exc}); reinstall zettel-lsp"
            ) from exc
        kwargs: dict[str, Any] = {
            "threads": threads,
            "cache_dir": str(self.cache_dir / "fastembed"),
        }
        if self.is_bundled:
            register_bundled()
            name = BUNDLED_LOCAL_NAME
            kwargs["specific_model_path"] = str(self._model_dir)
        else:
            name = self.model_name
        try:
            return TextEmbedding(model_name=name, **kwargs)
        except Exception as exc:
            raise EmbedderError(
                f"embedding model '{self.model_name}' could not be loaded: {exc}. Other models "
                "download from the model hub on first use, which needs a network; the default "
                f"model ('{DEFAULT_MODEL}') works offline."
            ) from exc

    # ----------------------------------------------------------------- vectors

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Texts are embedded sorted by token count, in batches of at most ``batch_size`` texts
        and ``max_batch_tokens`` padded tokens (by default: short texts 16 at a time, 256-token
        texts 4 at a time, which costs little speed and much less memory)."""
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._in_batches(
            texts,
            self._processed_tokens(texts),
            lambda part: model.embed(part, batch_size=len(part)),
            progress,
            padded=True,
        )

    def embed_query(self, text: str) -> np.ndarray:
        model = self._query_model or self._load_query_model()
        return np.asarray(next(iter(model.query_embed(text))), dtype=np.float32)


def _inner(model: TextEmbedding) -> Any:
    """The backend model a ``TextEmbedding`` wraps (it holds the tokenizer)."""
    return model.model


_REGISTER_LOCK = threading.Lock()


def register_bundled() -> None:
    """Register the bundled model with fastembed once per process. fastembed's registry is
    global and its check-then-add is not atomic, so a lock keeps two vaults loading their
    models at once from both adding it (the second ``add_custom_model`` would raise)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _REGISTER_LOCK:
        known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
        if BUNDLED_LOCAL_NAME.lower() in known:
            return
        TextEmbedding.add_custom_model(
            model=BUNDLED_LOCAL_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=DEFAULT_MODEL),  # required; never contacted
            dim=BUNDLED_DIM,
            model_file="model.onnx",
        )
