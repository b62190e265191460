"""The JSON-RPC transport: framing on stdio, message validation, one answer per request.

pygls' own loop (``pygls.io_.run_async``) and message decoding
(``JsonRPCProtocol.structure_message``, used as ``json.loads``' ``object_hook``) fail in ways a
client cannot see: a request whose params do not fit the LSP types raises out of ``json.loads``,
is logged and dropped (no response at all); a header block without a well-formed
``Content-Length`` is skipped line by line, so the body and every later message are read as
headers (the server stays alive but deaf, ``shutdown`` and ``exit`` included); a
``Content-Length`` larger than the body blocks the read until later messages fill it; and end of
input anywhere ends the process with code 0. This module replaces that loop:

* :class:`FrameReader` splits the byte stream into bodies and raises :class:`FramingError` as soon
  as the stream cannot be split any more (missing, invalid, duplicated or oversized
  ``Content-Length``, a line that is not a header, end of input inside a message, or a message
  that stalls half-way for ``ZETTEL_LSP_STALL_TIMEOUT`` seconds).
* :class:`RobustProtocol` validates each body: JSON that does not parse gets a parse error
  (-32700, id null) and the server goes on, since the framing is intact; every JSON object with
  a ``method`` and a valid ``id`` gets exactly one response (-32600 for a malformed request,
  -32602 with the converter's explanation when the params do not fit, -32002 before
  ``initialize``, -32600 after ``shutdown``); notifications that do not fit are logged and
  dropped.
* :func:`serve` runs the loop and returns the exit code: 0 after ``shutdown`` + ``exit``, 1 for
  ``exit`` or end of input without ``shutdown`` and for broken framing (with a line on stderr, so
  the editor restarts the server).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import attrs
from cattrs.errors import BaseValidationError
from cattrs.v import format_exception, transform_error
from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

log = logging.getLogger("zettel_lsp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002

MAX_BODY_BYTES = 64 * 1024 * 1024  # no Markdown note comes near; a bigger length is garbage
MAX_HEADER_LINE = 1024
MAX_HEADERS = 32
READ_CHUNK = 1 << 20
STALL_TIMEOUT = 10.0  # seconds without a byte in the middle of a message
EXIT_FAILURE = 1

# RFC 9110 token characters: anything else before the ':' means we are not reading headers
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# a body that fails to parse and holds this swallowed the next message: its length was too big
_EMBEDDED_HEADER = re.compile(rb"(?i)content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n")


class FramingError(Exception):
    """The input can no longer be split into messages: the only way out is a restart."""


def stall_timeout() -> float:
    """``ZETTEL_LSP_STALL_TIMEOUT`` (seconds; 0 turns the check off), else :data:`STALL_TIMEOUT`."""
    raw = os.environ.get("ZETTEL_LSP_STALL_TIMEOUT", "")
    try:
        value = float(raw) if raw else STALL_TIMEOUT
    except ValueError:
        return STALL_TIMEOUT
    return value if value >= 0 else STALL_TIMEOUT


class FrameReader:
    """Split a byte stream into LSP message bodies (``Content-Length`` framing).

    Lenient where the meaning is unambiguous (header names in any case, LF or CRLF line ends,
    blank lines between messages, other headers ignored), strict everywhere else: the first
    sign that the stream is out of step raises :class:`FramingError` rather than guessing.
    ``read(n)`` returns up to ``n`` bytes as soon as any are available and ``b""`` at the end.
    """

    def __init__(self, read: Callable[[int], bytes], *, max_body: int = MAX_BODY_BYTES) -> None:
        self._read = read
        self._max_body = max_body
        self._buf = bytearray()
        self._in_message = False
        self._last_byte_at = time.monotonic()

    def stalled_for(self) -> float:
        """Seconds since the last byte arrived while a message is incomplete (0 between
        messages, however long the client stays quiet)."""
        partial = self._in_message or bool(self._buf.strip())
        return time.monotonic() - self._last_byte_at if partial else 0.0

    def next_body(self) -> bytes | None:
        """The next message's body; None at the end of input between messages."""
        self._in_message = False
        line = self._header_line()
        while line == b"":  # blank lines between messages
            line = self._header_line()
        if line is None:
            return None
        self._in_message = True
        length: int | None = None
        count = 0
        while line:
            name, _, value = line.partition(b":")
            count += 1
            if count > MAX_HEADERS:
                raise FramingError(f"more than {MAX_HEADERS} header lines in one message")
            if name.strip().lower() == b"content-length":
                n = self._content_length(value)
                if length is not None and n != length:
                    raise FramingError(f"two different Content-Length headers ({length}, {n})")
                length = n
            line = self._header_line()
            if line is None:
                raise FramingError("end of input inside a message header")
        if length is None:
            raise FramingError("a message header without Content-Length")
        while len(self._buf) < length:
            if not self._fill():
                raise FramingError(
                    f"end of input inside a message body ({len(self._buf)} of {length} bytes)"
                )
        body = bytes(self._buf[:length])
        del self._buf[:length]
        self._in_message = False
        return body

    def _content_length(self, value: bytes) -> int:
        digits = value.strip()
        if not digits.isdigit():
            raise FramingError(f"invalid Content-Length {_show(digits)}")
        if len(digits) > 12 or int(digits) > self._max_body:
            raise FramingError(
                f"Content-Length {_show(digits)} is over the limit of {self._max_body} bytes"
            )
        return int(digits)

    def _header_line(self) -> bytes | None:
        """The next line without its line end, checked to be blank or a header; None at the
        end of input before any byte of it."""
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl]).removesuffix(b"\r")
                del self._buf[: nl + 1]
                if line:
                    _check_header(line, complete=True)
                return line
            if len(self._buf) > MAX_HEADER_LINE:
                raise FramingError(f"a header line longer than {MAX_HEADER_LINE} bytes")
            _check_header(bytes(self._buf), complete=False)  # fail before waiting for more
            if not self._fill():
                if self._in_message or self._buf.strip():
                    raise FramingError("end of input inside a message header")
                return None

    def _fill(self) -> bool:
        chunk = self._read(READ_CHUNK)
        if not chunk:
            return False
        self._buf += chunk
        self._last_byte_at = time.monotonic()
        return True


def _check_header(line: bytes, *, complete: bool) -> None:
    """Raise unless ``line`` is (or, incomplete, can still become) a ``Name: value`` line."""
    line = line.removesuffix(b"\r")
    if not line:
        return
    name, colon, _ = line.partition(b":")
    if not _TOKEN.fullmatch(name) or (complete and not colon):
        raise FramingError(f"not a message header: {_show(line)}")


def _show(data: bytes, limit: int = 60) -> str:
    text = repr(data[:limit])
    return text + ("..." if len(data) > limit else "")


def describe(exc: BaseException) -> str:
    """What did not fit, with the path into the message (``$.params.position.line``)."""
    if isinstance(exc, BaseValidationError):
        parts = transform_error(exc, path="$", format_exception=_format_exception)
    else:
        parts = [f"{type(exc).__name__}: {exc}"]
    text = "; ".join(parts)
    return text if len(text) <= 600 else text[:600] + "..."


def _format_exception(exc: BaseException, type_: type | None) -> str:
    base = format_exception(exc, type_)
    if type_ is None and isinstance(exc, ValueError | TypeError) and str(exc):
        return f"{base} ({exc})"  # e.g. lsprotocol's range check: "... should be in range"
    return base


def _is_notification_type(cls: type) -> bool:
    return attrs.has(cls) and "id" not in attrs.fields_dict(cls)


def _valid_id(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


class RobustProtocol(LanguageServerProtocol):
    """pygls' LSP protocol fed by :func:`serve`: validated messages, one answer per request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_seen = False
        self._initialized_seen = False
        # set when the shutdown request arrives (pygls' ``_shutdown`` only once it is done): an
        # ``exit`` or the end of input after it is a clean exit, a request after it an error
        self.shutdown_requested = False
        # set by serve(): called (from any thread) when stdout is gone
        self.on_transport_lost: Callable[[str], None] | None = None
        self._writes: set[asyncio.Future[Any]] = set()

    # ------------------------------------------------------------------ input

    def receive_body(self, body: bytes) -> None:
        """Handle one framed body. Raises :class:`FramingError` when the body shows that the
        framing itself was wrong (it swallowed the next message's header)."""
        try:
            data = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
            if _EMBEDDED_HEADER.search(body):
                raise FramingError(
                    "a message body holds the next message's header: its Content-Length "
                    "was larger than the body"
                ) from exc
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            log.warning("a message is not JSON (%s): answered with a parse error", reason)
            self.send_error(None, PARSE_ERROR, f"Parse error: {reason}")
            return
        self.receive(data)

    def receive(self, data: Any) -> None:
        """Validate a decoded message, turn it into lsprotocol's types and dispatch it."""
        if not isinstance(data, dict):
            what = "an array (batches are not part of LSP)" if isinstance(data, list) else "JSON"
            self.send_error(
                None, INVALID_REQUEST, f"Invalid Request: expected an object, got {what}"
            )
            return
        if "method" not in data:
            self._receive_response(data)
            return
        method = data["method"]
        has_id = "id" in data
        msg_id: Any = data.get("id")
        if has_id and not _valid_id(msg_id):
            self.send_error(
                None, INVALID_REQUEST, "Invalid Request: id must be an integer or a string"
            )
            return
        problem = None
        if not isinstance(method, str):
            problem = "method must be a string"
        elif data.get("jsonrpc") != "2.0":
            problem = 'jsonrpc must be "2.0"'
        if problem is not None:
            if has_id:
                self.send_error(msg_id, INVALID_REQUEST, f"Invalid Request: {problem}")
            else:
                log.warning("dropped a notification: %s", problem)
            return

        message_type = self.get_message_type(method)
        if has_id:
            if message_type is not None and _is_notification_type(message_type):
                self.send_error(
                    msg_id,
                    INVALID_REQUEST,
                    f"Invalid Request: {method} is a notification; send it without an id",
                )
                return
            if message_type is None:  # unknown method: pygls answers MethodNotFound
                message: Any = JsonRPCRequestMessage(
                    id=msg_id, method=method, jsonrpc="2.0", params=data.get("params")
                )
            else:
                try:
                    message = self._converter.structure(data, message_type)
                except Exception as exc:  # noqa: BLE001 - any converter failure is bad params
                    self.send_error(
                        msg_id, INVALID_PARAMS, f"Invalid params for {method}: {describe(exc)}"
                    )
                    return
        else:
            if message_type is not None and not _is_notification_type(message_type):
                log.warning("dropped %s: a request needs an id", method)
                return
            if message_type is None:
                message = JsonRPCNotification(
                    method=method, jsonrpc="2.0", params=data.get("params")
                )
            else:
                try:
                    message = self._converter.structure(data, message_type)
                except Exception as exc:  # noqa: BLE001 - dropped, as the spec wants
                    log.warning("dropped a %s notification: %s", method, describe(exc))
                    return
        try:
            self.handle_message(message)
        except Exception as exc:
            # pygls catches what a handler raises; what escapes comes from dispatch itself
            log.exception("could not dispatch %s", method)
            if has_id:
                self.send_error(msg_id, INTERNAL_ERROR, f"Internal error: {exc}")

    def _receive_response(self, data: dict[str, Any]) -> None:
        """A response to one of our requests (work-done progress, showMessageRequest ...)."""
        msg_id: Any = data.get("id")
        if not _valid_id(msg_id) or ("result" not in data and "error" not in data):
            log.warning("dropped a message that is no request, notification or response")
            return
        result_type = self._result_types.pop(msg_id, None)
        try:
            if "error" in data:
                message = self._converter.structure(data, types.ResponseErrorMessage)
            else:
                message = self._converter.structure(data, result_type or JsonRPCResponseMessage)
        except Exception as exc:  # noqa: BLE001 - fail the waiting future, not the loop
            log.warning("a malformed response to request %r: %s", msg_id, describe(exc))
            self._handle_response(
                msg_id,
                error=types.ResponseError(code=INVALID_PARAMS, message="malformed response"),
            )
            return
        self.handle_message(message)

    def handle_message(self, message: Any) -> None:
        """pygls' dispatch, with the answers it leaves out: a request before ``initialize``
        gets -32002, after ``shutdown`` -32600 (pygls logs and drops both)."""
        method = getattr(message, "method", None)
        if method is not None and hasattr(message, "id"):  # a request
            if self.shutdown_requested:
                self.send_error(message.id, INVALID_REQUEST, "the server is shutting down")
                return
            if method == types.SHUTDOWN:
                self.shutdown_requested = True
            if method == types.INITIALIZE:
                self._initialize_seen = True
            elif not self._initialize_seen:
                self.send_error(
                    message.id, SERVER_NOT_INITIALIZED, "the server is not initialized yet"
                )
                return
        elif method is not None and method != types.EXIT:  # a notification
            if not self._initialize_seen:
                log.warning("dropped %s: it came before initialize", method)
                return
            if method == types.INITIALIZED:
                if self._initialized_seen:
                    log.warning("dropped a second 'initialized' notification")
                    return
                self._initialized_seen = True
        super().handle_message(message)

    # ------------------------------------------------------------------ output

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        self._send_data(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )

    def _send_data(self, data: Any) -> None:
        """pygls' writer with three fixes: a response that cannot be encoded as JSON (NaN, an
        unknown type) becomes an internal error instead of no response, the Content-Length
        counts bytes, and a lost stdout ends the server instead of a log line per message."""
        if not data:
            return
        writer = self.writer
        if writer is None:
            log.error("no transport to send a message on")
            return
        try:
            body = json.dumps(data, default=self._serialize_message, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            msg_id = _response_id(data)
            log.error("could not encode a message as JSON: %s", exc)
            if msg_id is _NOT_A_RESPONSE:
                return
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": INTERNAL_ERROR, "message": f"unencodable result: {exc}"},
                }
            )
        payload = body.encode("utf-8")
        header = (
            f"Content-Length: {len(payload)}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        ).encode("ascii")
        try:
            res = writer.write(header + payload)
        except ValueError:  # stdout closed by 'exit': late notifications go nowhere
            return
        except OSError as exc:  # BrokenPipeError and friends: the client is gone
            lost = self.on_transport_lost
            if lost is not None:
                lost(f"writing to stdout failed: {exc}")
            return
        if inspect.isawaitable(res):  # an async writer (not stdio): keep the task alive
            task = asyncio.ensure_future(res)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)


_NOT_A_RESPONSE = object()


def _response_id(data: Any) -> Any:
    """The id of a response (result or error), or ``_NOT_A_RESPONSE``."""
    if isinstance(data, dict):
        if "method" not in data and ("result" in data or "error" in data):
            return data.get("id")
        return _NOT_A_RESPONSE
    if hasattr(data, "method") or not hasattr(data, "id"):
        return _NOT_A_RESPONSE
    return data.id if hasattr(data, "result") or hasattr(data, "error") else _NOT_A_RESPONSE


# ---------------------------------------------------------------------- the loop


def _on_stderr(message: str) -> None:
    """``message`` as one line on stderr (stdout is the protocol), through a logger of its own:
    when the framing broke, the client may not read ``window/logMessage`` any more, and the
    root handler may not be set up."""
    out = logging.getLogger("zettel-lsp.exit")  # outside zettel_lsp's tree: not sent to the client
    if not out.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        out.addHandler(handler)
        out.propagate = False
    out.error(message)


def fatal(message: str) -> int:
    """Say why on stderr and to the client, then exit non-zero."""
    _on_stderr(
        f"zettel-lsp: protocol error: {message}; exiting so the editor can restart the server"
    )
    log.error("protocol error: %s", message)
    return EXIT_FAILURE


def serve(server: LanguageServer, read: Callable[[int], bytes], stdout: BinaryIO) -> int:
    """Serve LSP on ``read`` (e.g. ``os.read`` on stdin's descriptor) and ``stdout`` until
    ``exit``, end of input or broken framing; return the process exit code."""
    protocol = server.protocol
    if not isinstance(protocol, RobustProtocol):
        raise TypeError("serve() needs a server whose protocol is a RobustProtocol")
    protocol.set_writer(StdoutWriter(stdout))
    try:
        return asyncio.run(_loop(FrameReader(read), protocol, stall_timeout()))
    except SystemExit as exc:  # 'exit' from a callback
        return exc.code if isinstance(exc.code, int) else EXIT_FAILURE
    except KeyboardInterrupt:  # run by hand in a terminal
        return EXIT_FAILURE
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


_Item = tuple[str, Any]


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """pygls' generator handlers re-raise a cancelled step's CancelledError in a callback
    (``_run_generator``); asyncio would print a traceback for each when the loop ends with
    requests in flight. Everything else is reported as usual."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


async def _loop(reader: FrameReader, protocol: RobustProtocol, stall: float) -> int:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[_Item] = asyncio.Queue()

    def post(item: _Item) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: we are exiting anyway
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        # a daemon thread on a raw descriptor: a read still blocked at exit holds no lock
        try:
            while (body := reader.next_body()) is not None:
                post(("body", body))
            post(("eof", None))
        except FramingError as exc:
            post(("fatal", str(exc)))
        except OSError as exc:
            post(("fatal", f"reading stdin failed: {exc}"))

    async def watchdog() -> None:
        while stall > 0:
            await asyncio.sleep(min(1.0, stall / 4))
            if reader.stalled_for() > stall:
                post(("fatal", f"the client stalled for {stall:g} s in the middle of a message"))
                return

    loop.set_exception_handler(_quiet_cancellation)
    protocol.on_transport_lost = lambda why: post(("fatal", why))
    threading.Thread(target=pump, name="zettel-stdin", daemon=True).start()
    dog = asyncio.create_task(watchdog())
    try:
        while True:
            kind, payload = await queue.get()
            if kind == "body":
                try:
                    protocol.receive_body(payload)
                except FramingError as exc:
                    return fatal(str(exc))
                except SystemExit:  # the 'exit' notification (pygls calls sys.exit)
                    return 0 if protocol.shutdown_requested else EXIT_FAILURE
            elif kind == "eof":
                if protocol.shutdown_requested:
                    return 0
                _on_stderr("zettel-lsp: end of input without shutdown and exit: exiting")
                return EXIT_FAILURE
            else:
                return fatal(str(payload))
    finally:
        dog.cancel()
        protocol.on_transport_lost = None
