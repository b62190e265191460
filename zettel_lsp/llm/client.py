"""The LLM features' Ollama client: the official ``ollama`` client with timeouts, cancellation
and one-line errors.

Calls that take ``cancel`` (a ``threading.Event`` or a callable returning True when the caller
gave up) run the request on a daemon thread and poll ``cancel`` every ``POLL_SECONDS``, so the
caller gets control back at once even while the socket is silent. Failures are raised as
:class:`LLMUnavailable` (no server, unknown model, timeout) or :class:`LLMError`; the connection
and the error map are :mod:`zettel_lsp.ollama_client`'s.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import httpx
import ollama

from zettel_lsp.llm.errors import LLMCancelled, LLMError, LLMUnavailable
from zettel_lsp.llm.settings import LLMSettings
from zettel_lsp.ollama_client import OllamaHttp, OllamaSettings, classify, ollama_model_name

log = logging.getLogger(__name__)

Cancel = threading.Event | Callable[[], bool]
Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
T = TypeVar("T")

POLL_SECONDS = 0.05
STATUS_TTL_SECONDS = 10.0
STATUS_TIMEOUT_SECONDS = 2.0
DEFAULT_CONTEXT_LENGTH = 4096  # when /api/show does not say
_END = object()  # the last item of a thread's queue


def is_cancelled(cancel: Cancel | None) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def same_model(a: str, b: str) -> bool:
    return ollama_model_name(a) == ollama_model_name(b)


class Ollama:
    """One Ollama server and the models the settings name. Thread-safe."""

    def __init__(self, settings: LLMSettings | None = None) -> None:
        self.settings = settings or LLMSettings()
        s = self.settings
        self._http = OllamaHttp(OllamaSettings(s.host, s.connect_timeout, s.timeout))
        self.host = self._http.host
        quick = min(s.connect_timeout, STATUS_TIMEOUT_SECONDS)
        self._status_http = OllamaHttp(OllamaSettings(self.host, quick, STATUS_TIMEOUT_SECONDS))
        self._lock = threading.Lock()
        self._status: tuple[float, dict[str, Any]] | None = None
        self._context: dict[str, int] = {}
        self._notified: set[str] = set()

    def close(self) -> None:
        self._http.close()
        self._status_http.close()

    def first_time(self, message: str) -> bool:
        """True the first time ``message`` is seen: show a failure once, not on every request."""
        with self._lock:
            if message in self._notified:
                return False
            self._notified.add(message)
            return True

    # ------------------------------------------------------------------ errors

    def translate(self, exc: BaseException, model: str | None = None) -> LLMError:
        """Any exception of a call as one :class:`LLMError` with a one-line message."""
        if isinstance(exc, LLMError):
            return exc
        failure = classify(exc)
        message = self._http.message(failure, model)
        return LLMUnavailable(message) if failure.unavailable else LLMError(message)

    def _run(self, fn: Callable[[], T], cancel: Cancel | None, model: str | None) -> T:
        """``fn()`` with errors translated, on a thread the caller leaves when ``cancel`` fires."""

        def once() -> Generator[T, None, None]:
            yield fn()

        for value in self._threaded(once, cancel, model):
            return value
        raise LLMCancelled("cancelled")

    def _threaded(
        self,
        produce: Callable[[], Generator[T, None, None]],
        cancel: Cancel | None,
        model: str | None,
    ) -> Iterator[T]:
        """The items of ``produce()``, made on a daemon thread. Ends within ``POLL_SECONDS`` of
        ``cancel`` firing; the thread then stops (and closes ``produce()``) at its next item or
        at the read timeout. Errors are raised translated."""
        box: queue.Queue[tuple[bool, Any]] = queue.Queue()
        stop = threading.Event()

        def work() -> None:
            try:
                with contextlib.closing(produce()) as items:
                    for item in items:
                        if stop.is_set():
                            return
                        box.put((True, item))
                box.put((True, _END))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.put((False, exc))

        threading.Thread(target=work, name="zettel-ollama", daemon=True).start()
        try:
            while not is_cancelled(cancel):
                try:
                    ok, value = box.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    continue
                if not ok:
                    raise self.translate(value, model) from value
                if value is _END:
                    return
                yield value
        finally:
            stop.set()

    # ------------------------------------------------------------------ calls

    def status(self, *, refresh: bool = False) -> dict[str, Any]:
        """Whether Ollama answers and which models it has (``/api/tags``), cached briefly.

        ``{reachable, host, models, chat_model, chat_model_available, embed_model,
        embed_model_available, message}``; ``message`` is None when all is well."""
        now = time.monotonic()
        with self._lock:
            if not refresh and self._status and now - self._status[0] < STATUS_TTL_SECONDS:
                return dict(self._status[1])
        s = self.settings
        message: str | None = None
        try:
            listed = self._status_http.client.list()
            models = sorted({m.model for m in listed.models if m.model})
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            models = []
            message = self.translate(exc).message
            if isinstance(exc, httpx.TimeoutException):
                message = (
                    f"Ollama at {self.host} did not answer within {STATUS_TIMEOUT_SECONDS:g} s"
                )
        reachable = message is None
        chat_available = any(same_model(m, s.chat_model) for m in models)
        if reachable and not chat_available:
            message = (
                f"Ollama at {self.host} has no model '{s.chat_model}'; "
                f"pull it with 'ollama pull {s.chat_model}'"
            )
        out = {
            "reachable": reachable,
            "host": self.host,
            "models": models,
            "chat_model": s.chat_model,
            "chat_model_available": chat_available,
            "embed_model": s.embed_model,
            "embed_model_available": any(same_model(m, s.embed_model) for m in models),
            "message": message,
        }
        with self._lock:
            self._status = (time.monotonic(), out)
        return dict(out)

    def context_length(self, model: str | None = None, cancel: Cancel | None = None) -> int:
        """The model's context length from ``/api/show`` (``model_info``'s
        ``<arch>.context_length``), or DEFAULT_CONTEXT_LENGTH when it does not say. Cached.
        Raises LLMUnavailable for an unknown model or no server."""
        name = model or self.settings.chat_model
        with self._lock:
            if name in self._context:
                return self._context[name]
        shown = self._run(lambda: self._http.client.show(name), cancel, name)
        length = DEFAULT_CONTEXT_LENGTH
        for key, value in (shown.modelinfo or {}).items():
            if key.endswith(".context_length") and isinstance(value, int) and value > 0:
                length = value
                break
        with self._lock:
            self._context[name] = length
        return length

    def context_window(self, model: str | None = None, cancel: Cancel | None = None) -> int:
        """The window an answer gets: the model's context length capped by ``context_window``
        (sent to Ollama as ``num_ctx``)."""
        return min(self.context_length(model, cancel), self.settings.context_window)

    def _options(self, extra: Mapping[str, Any] | None, cancel: Cancel | None) -> dict[str, Any]:
        """Temperature and ``num_ctx`` (the same window for every call: Ollama reloads a model
        whose ``num_ctx`` changes), then ``extra``."""
        opts = {"temperature": self.settings.temperature, **(extra or {})}
        if "num_ctx" not in opts:
            opts["num_ctx"] = self.context_window(cancel=cancel)
        return opts

    def chat(
        self,
        messages: Sequence[Message],
        cancel: Cancel | None = None,
        *,
        model: str | None = None,
        format: Literal["json"] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> str:
        """One non-streaming ``/api/chat`` call; the assistant's text. ``format="json"`` asks
        Ollama to constrain the answer to JSON."""
        name = model or self.settings.chat_model
        opts = self._options(options, cancel)
        response = self._run(
            lambda: self._http.client.chat(
                model=name,
                messages=[dict(m) for m in messages],
                stream=False,
                format=format,
                options=opts,
            ),
            cancel,
            name,
        )
        return response.message.content or ""

    def chat_stream(
        self,
        messages: Sequence[Message],
        cancel: Cancel | None = None,
        *,
        model: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Iterator[str]:
        """Stream ``/api/chat``: yields pieces of the answer as they arrive; ends when
        ``cancel`` fires (see :meth:`_threaded`). Raises LLMError / LLMUnavailable on failure
        (also mid-stream)."""
        name = model or self.settings.chat_model
        payload = [dict(m) for m in messages]
        opts = self._options(options, cancel)

        def pieces() -> Generator[str, None, None]:
            stream = cast(
                Generator[ollama.ChatResponse, None, None],
                self._http.client.chat(model=name, messages=payload, stream=True, options=opts),
            )
            with contextlib.closing(stream):  # closes the HTTP response
                for part in stream:
                    if part.message.content:
                        yield part.message.content
                    if part.done:
                        if part.done_reason == "length":
                            log.info("the answer reached the model's length limit")
                        return
            raise LLMError(f"Ollama at {self.host} ended the answer early")

        yield from self._threaded(pieces, cancel, name)

    def embed(
        self, texts: Sequence[str], cancel: Cancel | None = None, *, model: str | None = None
    ) -> list[list[float]]:
        """``/api/embed`` for ``texts`` with the embedding model (one request)."""
        name = model or self.settings.embed_model
        return self._run(lambda: self._http.embed(name, texts), cancel, name)
