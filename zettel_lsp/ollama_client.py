"""One Ollama connection for the whole project: which host, the HTTP client, one error map.

Used by ``index/embedders/ollama_backend.py`` (``ollama:`` embedding models) and by
``llm/client.py`` (the LLM features). Settings are passed in (:class:`OllamaSettings`).
:func:`classify` turns any exception of a call into an :class:`OllamaError`, and
:meth:`OllamaHttp.message` words it as one line, for the LLM features or for an index embedding
model (they tell the user different things to do). ``ollama`` and ``httpx`` (about 0.3 s to
import) load on the first call, not on import.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import os
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ollama

log = logging.getLogger(__name__)

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_PORT = 11434
DEFAULT_CONNECT_TIMEOUT = 2.0
DEFAULT_TIMEOUT = 60.0
MAX_MESSAGE_CHARS = 300
SERVER_ERROR_CHARS = 200  # of the server's own error text, in a message
_LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


def _flat(text: str) -> str:
    return " ".join(text.split())


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = _flat(str(text))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ------------------------------------------------------------------------------------ host


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


def _url(scheme: str, host: str, port: int, path: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}{path}"


def ollama_url(value: str) -> str:
    """A host setting as a full URL (``localhost:8080`` -> ``http://localhost:8080``)."""
    return _url(*_split_ollama_url(value))


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
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None and ip.is_unspecified:
        host = "127.0.0.1"  # bind-all: reached through this machine's loopback
    elif host.lower() not in _LOOPBACK_NAMES and not (ip is not None and ip.is_loopback):
        log.info(
            "OLLAMA_HOST=%s points at another machine; zettel-lsp uses %s unless its own "
            "ollamaHost setting (--ollama-host) names a host",
            value,
            OLLAMA_DEFAULT_HOST,
        )
        return OLLAMA_DEFAULT_HOST
    return _url(scheme, host, port, path)


def ollama_model_name(name: str) -> str:
    """``nomic-embed-text`` -> ``nomic-embed-text:latest`` (how Ollama itself names it)."""
    name = name.strip()
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


@dataclass(frozen=True, slots=True)
class OllamaSettings:
    """Where Ollama is and how long to wait for it. Passed to whoever talks to Ollama."""

    host: str | None = None  # None: resolve_ollama_host(None) (OLLAMA_HOST only if local)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT  # seconds to connect
    timeout: float = DEFAULT_TIMEOUT  # seconds without a byte from Ollama, per call


# ------------------------------------------------------------------------------ error map


class Failure(enum.Enum):
    """What went wrong in a call, whoever made it."""

    NOT_FOUND = "not found"  # HTTP 404: the model is not pulled
    SERVER_ERROR = "server error"  # another HTTP status, or an error line in a stream
    CONNECT_TIMEOUT = "connect timeout"  # no connection within connect_timeout
    READ_TIMEOUT = "read timeout"  # no byte within timeout
    UNREACHABLE = "unreachable"  # refused, reset, no route, unknown name
    TRANSPORT = "transport"  # another HTTP-level failure (protocol error, redirects)
    MALFORMED = "malformed"  # not JSON, or not the fields expected
    OTHER = "other"  # anything else (a bug, most likely)


# Ollama did not answer at all: an embedding model stops asking for a while
NO_ANSWER = frozenset(
    {Failure.CONNECT_TIMEOUT, Failure.READ_TIMEOUT, Failure.UNREACHABLE, Failure.TRANSPORT}
)
# the LLM features call these "unavailable" (the user must start Ollama or pull a model)
UNAVAILABLE = NO_ANSWER | {Failure.NOT_FOUND}


class OllamaError(Exception):
    """What went wrong in an Ollama call, whoever made it (see :func:`classify`)."""

    def __init__(self, kind: Failure, detail: str = "", status: int = 0) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail  # the server's error text, or the exception's type (and text)
        self.status = status  # the HTTP status of a server error (0 or less: none)

    @property
    def unavailable(self) -> bool:
        return self.kind in UNAVAILABLE

    @property
    def no_answer(self) -> bool:
        return self.kind in NO_ANSWER


def classify(exc: BaseException) -> OllamaError:
    """The one map from an exception of an Ollama call to what went wrong."""
    if isinstance(exc, OllamaError):
        return exc
    import httpx
    import ollama
    import pydantic

    if isinstance(exc, ollama.ResponseError):
        error = one_line(str(exc.error), SERVER_ERROR_CHARS)
        kind = Failure.NOT_FOUND if exc.status_code == 404 else Failure.SERVER_ERROR
        return OllamaError(kind, error, exc.status_code)
    if isinstance(exc, httpx.ConnectTimeout):
        return OllamaError(Failure.CONNECT_TIMEOUT)
    if isinstance(exc, httpx.TimeoutException):
        return OllamaError(Failure.READ_TIMEOUT)
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        return OllamaError(Failure.UNREACHABLE)
    if isinstance(exc, httpx.HTTPError):
        return OllamaError(Failure.TRANSPORT, _flat(f"{type(exc).__name__}: {exc}"))
    if isinstance(exc, pydantic.ValidationError | ValueError):  # JSONDecodeError included
        return OllamaError(Failure.MALFORMED, type(exc).__name__)
    return OllamaError(Failure.OTHER, _flat(f"{type(exc).__name__}: {exc}"))


_START_OLLAMA = "start Ollama ('ollama serve') or choose another model"

# Failure -> (LLM features: "Ollama at HOST ...", index embedding models: "embedding model
# 'ollama:NAME' at HOST: ..."). Fields: {at}, {detail}, {code} (" (HTTP 500)" or ""), {pull}
# ("; pull it with 'ollama pull NAME'" or ""), {connect}, {timeout}, {start}.
_MESSAGES: dict[Failure, tuple[str, str]] = {
    Failure.NOT_FOUND: ("{at}: {detail}{pull}", "{at}: {detail}{pull}"),
    Failure.SERVER_ERROR: ("{at} answered with an error: {detail}{code}", "{at}: {detail}{code}"),
    Failure.CONNECT_TIMEOUT: (
        "{at} did not accept a connection within {connect:g} s",
        "{at}: no connection within {connect:g} s; {start}",
    ),
    Failure.READ_TIMEOUT: (
        "{at} did not answer within {timeout:g} s (llmTimeout)",
        "{at}: no answer within {timeout:g} s; {start}",
    ),
    Failure.UNREACHABLE: (
        "{at} is not reachable; start it with 'ollama serve' or set ollamaHost",
        "{at}: not reachable; {start}",
    ),
    Failure.TRANSPORT: ("{at} could not be reached: {detail}", "{at}: not reachable; {start}"),
    Failure.MALFORMED: (
        "{at} sent a malformed answer ({detail})",
        "{at}: malformed answer ({detail})",
    ),
    Failure.OTHER: ("{at}: request failed ({detail})", "{at}: request failed ({detail})"),
}


# ---------------------------------------------------------------------------------- client


class OllamaHttp:
    """One Ollama server: the official client with the settings' timeouts. Thread-safe."""

    def __init__(self, settings: OllamaSettings | None = None) -> None:
        self.settings = settings or OllamaSettings()
        self.host = resolve_ollama_host(self.settings.host)
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> ollama.Client:
        """The ``ollama.Client`` (made on first use). Its calls raise its own exceptions: pass
        them through :func:`classify`."""
        with self._lock:
            if self._client is None:
                import httpx
                import ollama

                s = self.settings
                self._client = ollama.Client(
                    host=self.host, timeout=httpx.Timeout(s.timeout, connect=s.connect_timeout)
                )
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()  # type: ignore[no-untyped-call]

    def message(
        self,
        failure: OllamaError,
        model: str | None = None,
        *,
        embedding_model: str | None = None,
    ) -> str:
        """One line for a failed call. ``model``: the Ollama model the call used (named in a
        "pull it" hint). ``embedding_model``: the index's model setting (``ollama:NAME``) when
        the call embedded for the index; None for the LLM features."""
        llm, embedding = _MESSAGES[failure.kind]
        at = f"embedding model '{embedding_model}' at " if embedding_model else "Ollama at "
        return (embedding if embedding_model else llm).format(
            at=at + self.host,
            detail=failure.detail,
            code=f" (HTTP {failure.status})" if failure.status > 0 else "",
            pull=f"; pull it with 'ollama pull {model}'" if model else "",
            connect=self.settings.connect_timeout,
            timeout=self.settings.timeout,
            start=_START_OLLAMA,
        )

    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """``/api/embed``: one vector per text, in order. Raises :class:`OllamaError` (the
        answer is checked: one non-empty row of numbers per text)."""
        if not texts:
            return []
        try:
            response = self.client.embed(model=model, input=list(texts))
        except Exception as exc:
            raise classify(exc) from exc
        vectors = [list(row) for row in response.embeddings]  # floats: the client validated them
        if len(vectors) != len(texts) or not all(vectors):
            detail = f"{len(vectors)} vectors for {len(texts)} texts"
            raise OllamaError(Failure.MALFORMED, detail)
        return vectors
