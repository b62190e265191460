"""The embedder interface: what the index and search need from an embedding model (one module
per kind of model implements it, see the package).

Every embedder counts tokens (for chunking: cheap, offline, no model session needed) and
embeds documents and queries as float32 rows. Failures are :class:`EmbedderError` with a
one-line message that says what to do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

DEFAULT_MAX_LENGTH = 256
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_BATCH_TOKENS = 1024  # padded tokens per batch: bounds the runtime's memory


class EmbedderOptions(TypedDict, total=False):
    """How an embedder batches and truncates: the keywords every backend takes."""

    batch_size: int  # texts per model call
    max_length: int  # tokens per text the model sees (longer are truncated)
    max_batch_tokens: int  # padded tokens per model call


class EmbedderError(RuntimeError):
    """The embedding model cannot be loaded or does not answer; the message says why and what
    to do."""


class Embedder(ABC):
    """One embedding model: token counting (cheap, always available) and vectors (lazy)."""

    def __init__(
        self, model_name: str, *, cache_dir: Path, **options: Unpack[EmbedderOptions]
    ) -> None:
        self.model_name = model_name  # as the settings name it
        self.cache_dir = cache_dir
        self.batch_size = options.get("batch_size", DEFAULT_BATCH_SIZE)
        self.max_length = options.get("max_length", DEFAULT_MAX_LENGTH)
        self.max_batch_tokens = options.get("max_batch_tokens", DEFAULT_MAX_BATCH_TOKENS)
        self.tokens_processed = 0  # model tokens embedded so far (specials included, truncated)
        self._tokenizer: Tokenizer | None = None

    # ------------------------------------------------------------------ the model

    @property
    @abstractmethod
    def model_id(self) -> str:
        """What the index records: changing it re-embeds every chunk."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """The vectors' dimension (may load the model or ask a server once)."""

    @abstractmethod
    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Document vectors for ``texts``, rows in input order, float32; ``progress`` gets the
        count done so far."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query (some models embed queries differently)."""

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a call would not wait for it to load); a model that
        loads nothing, or loads lazily without saying, is always loaded."""
        return True

    def close(self) -> None:  # noqa: B027 - most models hold nothing to release
        """Release what the model holds (sessions, connections); it may be used again after."""

    # ------------------------------------------------------------------ tokens

    @abstractmethod
    def _load_tokenizer(self) -> Tokenizer:
        """The tokenizer that counts this model's tokens."""

    @property
    def tokenizer(self) -> Tokenizer:
        """A ``tokenizers.Tokenizer`` without truncation or padding (for counting)."""
        if self._tokenizer is None:
            tok = self._load_tokenizer()
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Model tokens per text, without special tokens and without truncation."""
        if not texts:
            return []
        return [
            len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        ]

    def model_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the model actually processes for ``texts`` (specials included, truncated)."""
        return sum(self._processed_tokens(texts))

    def _processed_tokens(self, texts: Sequence[str]) -> list[int]:
        """Per text: the tokens the model processes (specials included, truncated)."""
        return [min(c + 2, self.max_length) for c in self.count_tokens(texts)]

    def _in_batches(
        self,
        texts: Sequence[str],
        counts: Sequence[int],
        encode: Callable[[list[str]], Any],
        progress: Callable[[int], None] | None,
        *,
        padded: bool,
    ) -> np.ndarray:
        """``encode`` over batches of at most ``batch_size`` texts and ``max_batch_tokens``
        tokens (``counts``: per text), rows in input order; ``progress`` gets the count done
        after each batch. ``padded``: the model pads a batch to its longest text, so texts go
        sorted by token count and a batch costs its size times its last text's tokens."""
        rows: list[Any] = [None] * len(texts)
        done = 0
        for batch in self._batches(counts, padded):
            for j, row in zip(batch, encode([texts[j] for j in batch]), strict=True):
                rows[j] = row
            self.tokens_processed += sum(counts[j] for j in batch)
            done += len(batch)
            if progress is not None:
                progress(done)
        return np.vstack(rows).astype(np.float32, copy=False)

    def _batches(self, counts: Sequence[int], padded: bool) -> Iterator[list[int]]:
        order = sorted(range(len(counts)), key=counts.__getitem__) if padded else range(len(counts))
        batch: list[int] = []
        tokens = 0
        for i in order:
            tokens = (len(batch) + 1) * counts[i] if padded else tokens + counts[i]
            if batch and (len(batch) >= self.batch_size or tokens > self.max_batch_tokens):
                yield batch
                batch, tokens = [], counts[i]
            batch.append(i)
        if batch:
            yield batch
