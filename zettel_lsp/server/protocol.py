"""stdio for pygls' language server: pygls' dispatch, handlers and writer, with strict framing
and the answers pygls leaves out.

* Framing. pygls 2.1's loop (``pygls.io_.run_async``) knows one header line,
  ``Content-Length: N\\r\\n``, and skips any other: a bad header block leaves the server alive
  but deaf, a body shorter than announced makes it wait for ever, and the end of input ends it
  with 0. :class:`FrameReader` accepts header names in any case and LF line ends, and raises
  :class:`FramingError` at the first sign the stream is out of step or when a message stalls
  half-way (``ZETTEL_LSP_STALL_TIMEOUT`` seconds, 0: never); :func:`serve` then exits with 1 and
  a ``zettel-lsp: protocol error`` line on stderr. The end of input before ``shutdown`` exits 1.
* Answers. pygls decodes in ``json.loads``' object hook, where a failure has no id to answer
  (pygls issue 326). :meth:`RobustProtocol.receive` decodes first and answers each request once:
  -32700 or -32600 with id null for a body that is not a JSON object with a valid id, -32600 for
  a malformed request or one after ``shutdown``, -32002 before ``initialize``, -32602 for params
  that do not fit. Notifications and responses that do not fit are logged and dropped. pygls
  answers the rest (-32601, -32603 for a failed handler) and exits on ``exit``.
* A result that cannot be JSON (``NaN``, a type without a JSON form) goes out as -32603.
* Quiet exit: a write to a closed stdout is dropped (pygls would report it to the client,
  recursively), and so is asyncio's traceback for each request cancelled at exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import attrs
from cattrs.v import format_exception, transform_error
from lsprotocol import types
from pygls import exceptions as rpc
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol, json_rpc

log = logging.getLogger("zettel_lsp")

MAX_BODY, MAX_HEAD = 64 * 1024 * 1024, 8192  # bytes: no note comes near; headers are short
_NAME = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"  # RFC 9110's token
_HEAD = re.compile(rb"\A[\r\n]*((?:%s:[^\r\n]*\r?\n)+)\r?\n" % _NAME)  # then the body
_PARTIAL_HEAD = re.compile(  # what can still become a _HEAD
    rb"[\r\n]*(?:%s:[^\r\n]*\r?\n)*(?:%s(?::[^\r\n]*)?)?\r?" % (_NAME, _NAME)
)
_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*(\S*)[ \t]*\r?$")
_NEXT_HEAD = re.compile(rb"(?i)content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n")  # no JSON has it
# a JSON token: a string, a bracket or separator, a bare word (number, true...); else a stray byte
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]|[^\s"\[\]{},:]+|(\S)')
_CLOSES = {b"{": b"}", b"[": b"]"}
ID_SCAN_MAX = 1 << 20  # bytes: the longest too-deep body whose id is looked for (~0.5 s)


class FramingError(Exception):
    """The input can no longer be split into messages: the only way out is a restart."""


class FrameReader:
    """Splits the chunks ``read()`` returns (``b""`` at the end) into message bodies."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], stall: float | None = None) -> None:
        self._read, self._stall, self._buf = read, stall, bytearray()

    async def next_body(self) -> bytes | None:
        """The next body; None at the end of input between messages."""
        while not (head := _HEAD.match(self._buf)):
            if len(self._buf) > MAX_HEAD or not _PARTIAL_HEAD.fullmatch(self._buf):
                raise FramingError(f"not a message header: {bytes(self._buf[:60])!r}")
            if not await self._fill(mid=bool(self._buf.strip())):
                if self._buf.strip():
                    raise FramingError("end of input inside a message header")
                return None
        headers = bytes(head[1])
        values = set(_LENGTH.findall(headers))
        length = values.pop() if len(values) == 1 else b""
        if not length.isdigit() or len(length) > 9 or int(length) > MAX_BODY:
            raise FramingError(f"not one Content-Length of at most 64 MiB in {headers[:80]!r}")
        del self._buf[: head.end()]
        while len(self._buf) < int(length):
            if not await self._fill(mid=True):
                raise FramingError("end of input inside a message body")
        body = bytes(self._buf[: int(length)])
        del self._buf[: int(length)]
        return body

    async def _fill(self, mid: bool) -> bool:
        try:  # in the middle of a message, the next bytes may take ``stall`` seconds
            chunk = await asyncio.wait_for(self._read(), self._stall if mid else None)
        except TimeoutError:
            raise FramingError(f"the client stalled for {self._stall:g} s in a message") from None
        self._buf += chunk
        return bool(chunk)


def _describe(exc: Exception) -> str:
    """What did not fit, with its path into the message and a check's own words."""

    def explain(error: BaseException, type_: type | None) -> str:
        own = f" ({error})" if type_ is None and isinstance(error, ValueError) else ""
        return format_exception(error, type_) + own

    return "; ".join(transform_error(exc, "$", explain))[:600]


def _field(message: Any, name: str) -> Any:
    """A field of a message, as a dict or as an lsprotocol object."""
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _valid_id(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _top_level_id(body: bytes) -> int | str | None:
    """The id of a request too deeply nested for ``json.loads``, read from its top level without
    recursion: the body must be one object whose brackets pair up, with a top-level ``method``
    and a valid top-level ``id`` (an ``"id"`` inside params is not the request's); else None.
    Linear, but in Python: the caller bounds the body's size."""
    stack: list[bytes] = []
    values: dict[str, bytes] = {}  # top-level key -> the first token of its value
    key, prev = "", b""
    for token in _TOKEN.finditer(body):
        tok, depth = token[0], len(stack)
        if token.lastindex or (depth == 0 and (prev or tok != b"{")):
            return None  # a stray byte, or not one object
        if depth == 1 and prev in (b"{", b",") and tok[:1] == b'"':
            try:
                key = json.loads(tok)
            except ValueError:
                return None
        elif depth == 1 and prev == b":":
            values[key] = tok
        if tok in _CLOSES:
            stack.append(tok)
        elif tok in (b"}", b"]") and (not stack or _CLOSES[stack.pop()] != tok):
            return None
        if depth <= 1:
            prev = tok
    if stack or "method" not in values or "id" not in values:
        return None
    try:  # a bracket is not a whole value: json.loads refuses it
        msg_id = json.loads(values["id"])
    except ValueError:
        return None
    return msg_id if _valid_id(msg_id) else None


class RobustProtocol(LanguageServerProtocol):
    """pygls' LSP protocol fed by :func:`serve`: each request gets exactly one answer."""

    _initialize_seen = _initialized_seen = False

    def receive(self, body: bytes) -> None:
        """Decode one body, check it and hand it to pygls' ``handle_message``."""
        try:
            data = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
            if _NEXT_HEAD.search(body):  # it swallowed the next message
                raise FramingError(
                    "a body holds a header: its Content-Length was too large"
                ) from exc
            deep = isinstance(exc, RecursionError)
            msg_id = _top_level_id(body) if deep and len(body) <= ID_SCAN_MAX else None
            self.reply_error(msg_id, rpc.JsonRpcParseError(f"Parse error: {exc}"))
            return
        request = isinstance(data, dict) and "method" in data and "id" in data
        if not isinstance(data, dict) or (request and not _valid_id(data["id"])):
            self.reply_error(None, rpc.JsonRpcInvalidRequest("no object with a string or int id"))
            return
        try:
            message = self._converter.structure(
                {"params": None, **data}, self._message_type(data, request)
            )
        except Exception as exc:  # noqa: BLE001 - refused, or the converter could not read it
            if not isinstance(exc, rpc.JsonRpcException):
                exc = rpc.JsonRpcInvalidParams.of(_describe(exc))
            if request:
                self.reply_error(data["id"], exc)
            else:  # a notification, or a response to one of our requests
                log.warning("dropped a message (%s): %s", data.get("method", "a response"), exc)
            return
        self._initialize_seen |= data.get("method") == types.INITIALIZE
        self._initialized_seen |= data.get("method") == types.INITIALIZED
        try:
            self.handle_message(message)
        except Exception:  # a response to a request pygls cancelled (InvalidStateError)
            log.exception("could not dispatch %s", data.get("method", "a response"))

    def _message_type(self, data: dict[str, Any], request: bool) -> type[Any]:
        """The type to read ``data`` as; raises the error a request gets instead."""
        method = data.get("method")
        if "method" not in data:  # a response to one of our requests
            if "error" in data:
                return types.ResponseErrorMessage
            return self._result_types.pop(data["id"], None) or json_rpc.JsonRPCResponseMessage
        if not isinstance(method, str) or data.get("jsonrpc") != "2.0":
            raise rpc.JsonRpcInvalidRequest('"jsonrpc" must be "2.0" and "method" a string')
        kind = self.get_message_type(method)
        if kind is not None and request != ("id" in attrs.fields_dict(kind)):
            raise rpc.JsonRpcInvalidRequest(f"{method} {'is not' if request else 'is'} a request")
        if self._shutdown and method != types.EXIT:
            raise rpc.JsonRpcInvalidRequest("the server is shutting down")
        if not self._initialize_seen and method not in (types.INITIALIZE, types.EXIT):
            raise rpc.JsonRpcServerNotInitialized()
        if method == types.INITIALIZED and self._initialized_seen:
            raise rpc.JsonRpcInvalidRequest("a second initialized notification")
        return kind or (json_rpc.JsonRPCRequestMessage if request else json_rpc.JsonRPCNotification)

    def _send_data(self, data: Any) -> None:
        """pygls' writer, except that an answer that cannot be JSON (NaN, a type without a JSON
        form) goes out as an internal error, not as invalid JSON or nothing."""
        try:
            json.dumps(data, default=self._serialize_message, allow_nan=False)
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            log.error("could not encode a message as JSON: %s", exc)
            answer_to = _field(data, "id")
            if _field(data, "method") is None and _valid_id(answer_to):  # a response
                self.reply_error(answer_to, rpc.JsonRpcInternalError(f"unencodable result: {exc}"))
            return
        super()._send_data(data)

    def reply_error(self, msg_id: int | str | None, error: rpc.JsonRpcException) -> None:
        """An error response, as a dict: lsprotocol's type leaves out an id that is null."""
        reply = {"code": error.code, "message": error.message}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": reply})


class _Writer(StdoutWriter):
    """pygls' stdout writer, silent once stdout is closed (by ``exit``) or gone (the end of input
    follows): pygls reports a failed write to the client, which fails again, recursively."""

    def write(self, data: bytes) -> None:
        with contextlib.suppress(ValueError, OSError):
            super().write(data)


def serve(protocol: RobustProtocol, read: Callable[[int], bytes], stdout: BinaryIO) -> int:
    """Serve on ``read`` (blocking reads of stdin) and ``stdout`` until the end of input or
    broken framing and return the exit code; ``exit`` raises SystemExit (pygls)."""
    protocol.set_writer(_Writer(stdout))
    try:
        return asyncio.run(_serve(protocol, read))
    except FramingError as exc:
        log.error("protocol error: %s", exc)
        return exit_line(f"protocol error: {exc}; exiting so the editor can restart the server")
    except KeyboardInterrupt:  # run by hand in a terminal
        return 1


async def _serve(protocol: RobustProtocol, read: Callable[[int], bytes]) -> int:
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:  # on a daemon thread: a read still blocked at exit does not hold it up
        chunk = b"-"
        while chunk:
            try:
                chunk = read(1 << 20)
            except OSError:  # stdin is gone: the end of input
                chunk = b""
            with contextlib.suppress(RuntimeError):  # the loop is closed: we are exiting
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)

    loop.set_exception_handler(_quiet_cancellation)
    threading.Thread(target=pump, name="zettel-stdin", daemon=True).start()
    try:
        stall = float(os.environ.get("ZETTEL_LSP_STALL_TIMEOUT") or 10)
    except ValueError:
        stall = 10.0
    reader = FrameReader(chunks.get, stall if stall > 0 else None)
    while (body := await reader.next_body()) is not None:
        protocol.receive(body)
    return 0 if protocol._shutdown else exit_line("end of input without shutdown and exit")


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """pygls' generator handlers re-raise a cancelled step's CancelledError in a callback
    (``_run_generator``): asyncio would print a traceback for each request in flight at exit."""
    if not isinstance(context.get("exception"), asyncio.CancelledError):
        loop.default_exception_handler(context)


def exit_line(text: str) -> int:
    """``zettel-lsp: text`` on stderr (the client may not read window/logMessage any more); 1."""
    out = logging.getLogger("zettel-lsp.exit")  # outside zettel_lsp's tree: not sent to the client
    out.propagate = False
    if not out.handlers:
        out.addHandler(logging.StreamHandler(sys.stderr))
    out.error("zettel-lsp: %s", text)
    return 1
