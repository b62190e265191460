"""The JSON-RPC layer under hostile input: the real server process, framing spoken by hand.

Every request (a JSON object with ``"jsonrpc": "2.0"``, a string ``method`` and an integer or
string ``id``) gets exactly one response, whatever its params. A body that is not JSON but is
framed correctly gets a parse error (-32700, id null) and the server goes on. Framing that cannot
be recovered (no or invalid ``Content-Length``, a length over the limit, a length that does not
match the body, end of input inside a message) ends the process with a non-zero code and a line
on stderr, so the editor restarts it. See docs/server.md, "Protocol errors".

Timeouts here only guard against hangs; nothing measures time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 60.0  # seconds: a response or an exit that takes longer is a hang
FATAL_MARK = "zettel-lsp: protocol error"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8")


class RawServer:
    """``python -m zettel_lsp`` on pipes; a thread parses (strictly) what it writes to stdout."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zettel_lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
        self.messages: list[dict[str, Any]] = []
        self.bad_output: list[str] = []
        self.stderr = b""
        self._cond = threading.Condition()
        self._stdout_done = False
        self._next_id = 1000
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._threads:
            t.start()

    # ------------------------------------------------------------------ output

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                line = out.readline()
                if not line:
                    return
                while line not in (b"\r\n", b""):
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                    line = out.readline()
                if length is None or not line:
                    self.bad_output.append(f"bad header block ending with {line!r}")
                    return
                body = out.read(length)
                msg = json.loads(body)
                assert isinstance(msg, dict)
                with self._cond:
                    self.messages.append(msg)
                    self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 - reported by the tests
            self.bad_output.append(repr(exc))
        finally:
            with self._cond:
                self._stdout_done = True
                self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def responses(self, msg_id: Any) -> list[dict[str, Any]]:
        """Responses (result or error) carrying ``msg_id``; ``None`` for the id-null errors."""
        with self._cond:
            return [
                m
                for m in self.messages
                if "method" not in m and "id" in m and _same_id(m["id"], msg_id)
            ]

    def wait_response(self, msg_id: Any, timeout: float = HANG_GUARD) -> dict[str, Any]:
        with self._cond:
            ok = self._cond.wait_for(
                lambda: bool(self.responses(msg_id)) or self._stdout_done, timeout
            )
        got = self.responses(msg_id)
        assert ok and got, f"no response to id {msg_id!r}; stderr: {self.stderr_tail()}"
        return got[0]

    def wait_count(self, msg_id: Any, count: int, timeout: float = HANG_GUARD) -> None:
        with self._cond:
            self._cond.wait_for(lambda: len(self.responses(msg_id)) >= count, timeout)

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def stderr_tail(self) -> str:
        return self.stderr_text()[-2000:]

    # ------------------------------------------------------------------ input

    def send_raw(self, data: bytes) -> bool:
        """Write bytes to the server; False once it stopped reading."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def send(self, obj: Any) -> bool:
        return self.send_raw(frame(encode(obj)))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, *, omit_params: bool = False) -> int:
        msg_id = self.new_id()
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.wait_response(self.request(method, params))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path | None = None, options: dict[str, Any] | None = None) -> None:
        params: dict[str, Any] = {
            "processId": None,
            "rootUri": root.as_uri() if root else None,
            "capabilities": {},
            "initializationOptions": options or {},
        }
        if root is not None:
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
        answer = self.call("initialize", params)
        assert "result" in answer, answer
        self.notify("initialized", {})

    def close_stdin(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def wait_exit(self, timeout: float = HANG_GUARD) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"the server neither answered nor exited (deaf); stderr: {self.stderr_tail()}"
            ) from None
        for t in self._threads:
            t.join(10)
        return code

    def wait_exit_or_close(self, grace: float = 15.0) -> int:
        """Wait for the exit; if the server still waits for input, close stdin (as an editor
        that gives up would) and wait again."""
        try:
            code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.close_stdin()
            return self.wait_exit()
        for t in self._threads:  # stderr is read to its end before a test looks at it
            t.join(10)
        return code

    def shutdown_and_exit(self) -> int:
        answer = self.call("shutdown")
        assert "result" in answer and answer["result"] is None, answer
        self.notify("exit")
        self.close_stdin()
        return self.wait_exit()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def error_code(response: dict[str, Any]) -> int | None:
    err = response.get("error")
    return err.get("code") if isinstance(err, dict) else None


@pytest.fixture
def raw() -> Iterator[RawServer]:
    """A server process without a workspace folder (nothing to index)."""
    srv = RawServer()
    yield srv
    srv.kill()


@pytest.fixture
def tiny_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Alpha.md").write_text(
        "# Alpha\n\nAlpha links to [[Beta]] and talks about sourdough bread.\n\nMore text.\n",
        encoding="utf-8",
    )
    (vault / "Beta.md").write_text(
        "# Beta\n\nBeta goes back to [[Alpha]] and mentions rye flour.\n", encoding="utf-8"
    )
    return vault


def vault_options(vault: Path, server_cache: Path) -> dict[str, Any]:
    return {
        "cacheDir": str(server_cache),
        "indexDir": str(vault.parent / "index"),
        "watch": False,
        "ollamaHost": "http://127.0.0.1:9",  # nothing listens there: LLM steps fail fast
    }


# ---------------------------------------------------------------------- (a) invalid params


def _doc(uri: str) -> dict[str, Any]:
    return {"uri": uri}


def _pos(line: Any, character: Any) -> dict[str, Any]:
    return {"line": line, "character": character}


def invalid_params_cases(uri: str) -> list[tuple[str, str, Any, bool]]:
    """(label, method, params, strict): strict cases must be -32602; the others may also be a
    result (the converter accepts "3" for 3, the spec clamps positions past the line end)."""
    hover = "textDocument/hover"
    return [
        ("negative line", hover, {"textDocument": _doc(uri), "position": _pos(-1, 0)}, True),
        ("negative character", hover, {"textDocument": _doc(uri), "position": _pos(0, -5)}, True),
        ("line 2**31", hover, {"textDocument": _doc(uri), "position": _pos(2**31, 0)}, True),
        ("character 2**63", hover, {"textDocument": _doc(uri), "position": _pos(0, 2**63)}, True),
        ("line a word", hover, {"textDocument": _doc(uri), "position": _pos("three", 0)}, True),
        ("line a float", hover, {"textDocument": _doc(uri), "position": _pos(1.5, 0)}, False),
        (
            "line a digit string",
            hover,
            {"textDocument": _doc(uri), "position": _pos("3", 0)},
            False,
        ),
        ("line null", hover, {"textDocument": _doc(uri), "position": _pos(None, 0)}, True),
        ("position missing", hover, {"textDocument": _doc(uri)}, True),
        ("params missing", hover, "<omit>", True),
        ("params null", hover, None, True),
        ("params a list", hover, [1, 2], True),
        ("params a string", hover, "hover me", True),
        ("params a number", hover, 42, True),
        ("uri a number", hover, {"textDocument": {"uri": 7}, "position": _pos(0, 0)}, False),
        ("textDocument null", hover, {"textDocument": None, "position": _pos(0, 0)}, True),
        ("symbol query missing", "workspace/symbol", {}, True),
        ("symbol params a list", "workspace/symbol", ["sourdough"], True),
        ("definition nested junk", "textDocument/definition", {"a": {"b": [{"c": None}]}}, True),
        (
            "references without context",
            "textDocument/references",
            {"textDocument": _doc(uri), "position": _pos(0, 0)},
            True,
        ),
        (
            "code action range inverted types",
            "textDocument/codeAction",
            {"textDocument": _doc(uri), "range": {"start": 1, "end": 2}, "context": {}},
            True,
        ),
        (
            "code action end 2**31",
            "textDocument/codeAction",
            {
                "textDocument": _doc(uri),
                "range": {"start": _pos(0, 0), "end": _pos(2**31, 0)},
                "context": {"diagnostics": []},
            },
            True,
        ),
        ("resolve a string", "codeAction/resolve", "not an action", True),
        ("command missing", "workspace/executeCommand", {"arguments": []}, True),
        ("command unknown", "workspace/executeCommand", {"command": "zettel.nope"}, True),
        (
            "arguments an object",
            "workspace/executeCommand",
            {"command": "zettel.search", "arguments": {"query": "x"}},
            False,
        ),
        (
            "related position negative",
            "workspace/executeCommand",
            {"command": "zettel.related", "arguments": [{"uri": uri, "position": _pos(-3, 0)}]},
            True,
        ),
        (
            "related position a word",
            "workspace/executeCommand",
            {"command": "zettel.related", "arguments": [{"uri": uri, "position": _pos("x", 0)}]},
            True,
        ),
        (
            "related position 2**40",
            "workspace/executeCommand",
            {"command": "zettel.related", "arguments": [uri, _pos(2**40, 2**40), "many"]},
            True,
        ),
        ("range junk", "textDocument/foldingRange", {"textDocument": 5}, True),
        ("cancel as a request", "$/cancelRequest", {"id": 1}, False),
    ]


def test_invalid_params_get_exactly_one_error_each(
    tiny_vault: Path, server_cache: Path, raw: RawServer
) -> None:
    raw.initialize(tiny_vault, vault_options(tiny_vault, server_cache))
    alpha = tiny_vault / "Alpha.md"
    uri = alpha.as_uri()
    raw.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": uri,
                "languageId": "markdown",
                "version": 1,
                "text": alpha.read_text(encoding="utf-8"),
            }
        },
    )
    sent: list[tuple[str, int, bool]] = []
    for label, method, params, strict in invalid_params_cases(uri):
        msg_id = raw.request(method, params, omit_params=params == "<omit>")
        sent.append((label, msg_id, strict))

    # positions valid for the protocol but far outside the document: a sane answer, not an error
    far = [
        ("hover on line 2**31-1", "textDocument/hover", _pos(2**31 - 1, 0)),
        ("hover on character 2**31-1", "textDocument/hover", _pos(2, 2**31 - 1)),
        ("definition past the end", "textDocument/definition", _pos(2**31 - 1, 2**31 - 1)),
    ]
    far_ids = [
        (label, raw.request(method, {"textDocument": _doc(uri), "position": pos}))
        for label, method, pos in far
    ]
    refs_id = raw.request(
        "textDocument/references",
        {
            "textDocument": _doc(uri),
            "position": _pos(2**31 - 1, 0),
            "context": {"includeDeclaration": True},
        },
    )

    for label, msg_id, strict in sent:
        answer = raw.wait_response(msg_id)
        if strict:
            assert error_code(answer) == INVALID_PARAMS, (label, answer)
            assert answer["error"]["message"], label
        else:
            assert "result" in answer or error_code(answer) is not None, (label, answer)
    for label, msg_id in far_ids:
        answer = raw.wait_response(msg_id)
        assert "result" in answer, (label, answer)
    assert isinstance(raw.wait_response(refs_id).get("result"), list)

    # the server still works: a search, a hover on the link in Alpha
    symbols = raw.call("workspace/symbol", {"query": "Beta"})
    assert isinstance(symbols.get("result"), list), symbols
    hover = raw.call("textDocument/hover", {"textDocument": _doc(uri), "position": _pos(2, 18)})
    assert "result" in hover, hover

    assert raw.shutdown_and_exit() == 0, raw.stderr_tail()
    for label, msg_id, _ in sent:
        assert len(raw.responses(msg_id)) == 1, (label, raw.responses(msg_id))
    for label, msg_id in far_ids:
        assert len(raw.responses(msg_id)) == 1, label
    assert not raw.bad_output, raw.bad_output


def test_invalid_messages_with_intact_framing_are_answered(raw: RawServer) -> None:
    # before initialize: a request is refused with ServerNotInitialized, not dropped
    early = raw.request("workspace/symbol", {"query": "x"})
    assert error_code(raw.wait_response(early)) == SERVER_NOT_INITIALIZED
    raw.initialize()

    # a body that is not JSON: a parse error with id null, and the server goes on
    raw.send_raw(frame(b'{"jsonrpc": "2.0", "id": 5, "method": "workspace/symbol", '))
    assert error_code(raw.wait_response(None)) == PARSE_ERROR
    raw.send_raw(frame(b"\xff\xfe not utf-8 \x00"))
    raw.wait_count(None, 2)
    raw.send_raw(frame(b""))  # Content-Length: 0
    raw.wait_count(None, 3)
    raw.send_raw(frame(b"[" * 100_000 + b"]" * 100_000))  # nested too deep to decode
    raw.wait_count(None, 4)
    raw.send_raw(frame(b"[1, 2]"))  # a batch: not part of LSP
    raw.send_raw(frame(b"42"))
    raw.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "workspace/symbol"})
    raw.send({"jsonrpc": "2.0", "id": True, "method": "workspace/symbol"})
    raw.wait_count(None, 8)
    null_errors = [error_code(m) for m in raw.responses(None)]
    assert null_errors == [PARSE_ERROR] * 4 + [INVALID_REQUEST] * 4, raw.responses(None)

    # a request that breaks JSON-RPC in other ways gets an error under its id
    wrong_version = raw.new_id()
    raw.send({"jsonrpc": "1.0", "id": wrong_version, "method": "workspace/symbol", "params": {}})
    no_version = raw.new_id()
    raw.send({"id": no_version, "method": "workspace/symbol", "params": {"query": "x"}})
    method_number = raw.new_id()
    raw.send({"jsonrpc": "2.0", "id": method_number, "method": 12})
    notification_with_id = raw.request("textDocument/didOpen", {"textDocument": 1})
    unknown = raw.request("zettel/nothingHere", {"x": 1})
    unknown_no_params = raw.request("foo/bar", omit_params=True)
    string_id = "req-" + "x" * 50
    raw.send({"jsonrpc": "2.0", "id": string_id, "method": "workspace/symbol", "params": 5})
    expected = {
        wrong_version: INVALID_REQUEST,
        no_version: INVALID_REQUEST,
        method_number: INVALID_REQUEST,
        notification_with_id: INVALID_REQUEST,
        unknown: METHOD_NOT_FOUND,
        unknown_no_params: METHOD_NOT_FOUND,
        string_id: INVALID_PARAMS,
    }
    for msg_id, code in expected.items():
        assert error_code(raw.wait_response(msg_id)) == code, (msg_id, raw.responses(msg_id))

    # notifications with bad params, unknown notifications, stray responses: dropped quietly
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
    raw.notify("textDocument/didChange", "junk")
    raw.notify("$/cancelRequest", {"id": {"nested": []}})
    raw.notify("$/unknownNotification", {"a": [1, 2, {"b": None}]})
    raw.send({"jsonrpc": "2.0", "id": 999_999, "result": {"junk": True}})
    raw.send({"jsonrpc": "2.0", "id": 999_998, "error": "not an object"})
    raw.send({"jsonrpc": "2.0", "method": "shutdown"})  # a request without id: not answerable

    # lenient framing that is still unambiguous: lower-case names, LF line ends, extra headers
    body = encode(
        {"jsonrpc": "2.0", "id": 77, "method": "workspace/symbol", "params": {"query": ""}}
    )
    raw.send_raw(b"content-length: %d\n\n" % len(body) + body)
    assert "result" in raw.wait_response(77)
    body = encode(
        {"jsonrpc": "2.0", "id": 78, "method": "workspace/symbol", "params": {"query": ""}}
    )
    raw.send_raw(
        b"\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        b"Content-Length:%d\r\n\r\n" % len(body) + body
    )
    assert "result" in raw.wait_response(78)

    # still healthy, and a request after shutdown is refused, not dropped
    assert isinstance(raw.call("workspace/symbol", {"query": "anything"}).get("result"), list)
    assert "result" in raw.call("shutdown")
    late = raw.request("workspace/symbol", {"query": "x"})
    assert error_code(raw.wait_response(late)) == INVALID_REQUEST
    raw.notify("exit")
    raw.close_stdin()
    assert raw.wait_exit() == 0, raw.stderr_tail()
    for msg_id in [*expected, 77, 78, late, early]:
        assert len(raw.responses(msg_id)) == 1, (msg_id, raw.responses(msg_id))
    assert len(raw.responses(None)) == 8
    assert not raw.bad_output, raw.bad_output


def test_a_request_nested_too_deeply_is_answered_under_its_id(raw: RawServer) -> None:
    """json.loads gives up on 100,000 levels; the id is still read from the top level."""
    raw.initialize()
    deep = b"[" * 100_000 + b"]" * 100_000
    head = b'{"jsonrpc": "2.0", "method": "workspace/symbol", '
    raw.send_raw(frame(head + b'"id": 41, "params": {"query": "x", "deep": ' + deep + b"}}"))
    raw.send_raw(frame(head + b'"params": {"deep": ' + deep + b'}, "id": "after-it"}'))
    # not the request's id: one inside params, one of a response (no method), one that is bad
    raw.send_raw(frame(head + b'"params": {"id": 43, "deep": ' + deep + b"}}"))
    raw.send_raw(frame(b'{"jsonrpc": "2.0", "id": 44, "result": ' + deep + b"}"))
    raw.send_raw(frame(head + b'"id": [45], "params": ' + deep + b"}"))
    raw.send_raw(frame(head + b'"id": 46, "params": ' + deep + b"]}"))  # brackets do not pair
    assert error_code(raw.wait_response(41)) == PARSE_ERROR
    assert error_code(raw.wait_response("after-it")) == PARSE_ERROR
    raw.wait_count(None, 4)
    assert [error_code(m) for m in raw.responses(None)] == [PARSE_ERROR] * 4
    assert isinstance(raw.call("workspace/symbol", {"query": "x"}).get("result"), list)
    assert raw.shutdown_and_exit() == 0, raw.stderr_tail()
    assert not any(raw.responses(i) for i in (43, 44, 45, 46)), raw.messages
    assert len(raw.responses(41)) == len(raw.responses("after-it")) == 1
    assert not raw.bad_output, raw.bad_output


# ---------------------------------------------------------------------- (b) broken framing

SHUTDOWN = encode({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
EXIT = encode({"jsonrpc": "2.0", "method": "exit"})
SYMBOL = encode({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": ""}})

BROKEN_FRAMING: dict[str, bytes] = {
    "no Content-Length": b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + SYMBOL,
    "Content-Length not a number": b"Content-Length: abc\r\n\r\n" + SYMBOL,
    "Content-Length negative": b"Content-Length: -5\r\n\r\n" + SYMBOL,
    "Content-Length empty": b"Content-Length: \r\n\r\n" + SYMBOL,
    "Content-Length misspelt": b"Content-Lenght: %d\r\n\r\n" % len(SYMBOL) + SYMBOL,
    "Content-Length twice, different": b"Content-Length: %d\r\nContent-Length: 3\r\n\r\n"
    % len(SYMBOL)
    + SYMBOL,
    "Content-Length over the limit": b"Content-Length: 99999999999999\r\n\r\n" + SYMBOL,
    "Content-Length too small": b"Content-Length: %d\r\n\r\n" % (len(SYMBOL) - 10) + SYMBOL,
    "Content-Length too large": b"Content-Length: %d\r\n\r\n" % (len(SYMBOL) + 40) + SYMBOL,
    "a body without a header": SYMBOL,
    "garbage bytes": b"\x00\x01\x02 hello \xff\r\n\r\n",
}


@pytest.mark.parametrize("case", sorted(BROKEN_FRAMING))
def test_broken_framing_exits_non_zero_with_a_log_line(case: str, raw: RawServer) -> None:
    raw.initialize()
    raw.send_raw(BROKEN_FRAMING[case])
    # what a client does next: ask to shut down. A deaf server never answers.
    raw.send_raw(frame(SHUTDOWN) + frame(EXIT))
    code = raw.wait_exit_or_close()
    assert code != 0, f"{case}: exited with 0; stderr: {raw.stderr_tail()}"
    assert FATAL_MARK in raw.stderr_text(), raw.stderr_tail()
    assert not raw.responses(1), f"{case}: the shutdown after broken framing was answered"
    assert not raw.bad_output, raw.bad_output


@pytest.mark.parametrize(
    "case",
    ["end of input in a body", "end of input in a header", "end of input after a header"],
)
def test_end_of_input_inside_a_message_exits_non_zero(case: str, raw: RawServer) -> None:
    raw.initialize()
    partial = {
        "end of input in a body": frame(SYMBOL)[:-10],
        "end of input in a header": b"Content-Len",
        "end of input after a header": b"Content-Length: 20\r\n",
    }[case]
    raw.send_raw(partial)
    raw.close_stdin()
    assert raw.wait_exit() != 0
    assert FATAL_MARK in raw.stderr_text(), raw.stderr_tail()


def test_end_of_input_without_exit_is_not_a_success(raw: RawServer) -> None:
    raw.initialize()
    raw.close_stdin()  # the editor went away without shutdown and exit
    assert raw.wait_exit() != 0


def test_a_body_that_never_comes_ends_the_process() -> None:
    """The client announced more bytes than it sends and waits for the answer: both would wait
    forever. The server gives up after the stall timeout (shortened here)."""
    srv = RawServer(env={"ZETTEL_LSP_STALL_TIMEOUT": "1"})
    try:
        srv.initialize()
        srv.send_raw(b"Content-Length: %d\r\n\r\n" % (len(SYMBOL) + 500) + SYMBOL)
        assert srv.wait_exit() != 0  # stdin stays open
        assert FATAL_MARK in srv.stderr_text() and "stall" in srv.stderr_text(), srv.stderr_tail()
    finally:
        srv.kill()


# ---------------------------------------------------------------------- (c) fuzz

FUZZ_MESSAGES = 200
NOT_FUZZED = {"exit", "shutdown", "initialize"}
LSP_METHODS = sorted(m for m in types.METHOD_TO_TYPES if m not in NOT_FUZZED)
JUNK_METHODS = [
    "",
    "foo",
    "textDocument/",
    "$/junk",
    "zettel/unknown",
    "textDocument/hover/",
    "TEXTDOCUMENT/HOVER",
    "\u0000\u00e9",
    "x" * 300,
]
COMMANDS = [
    "zettel.search",
    "zettel.related",
    "zettel.suggestLinks",
    "zettel.status",
    "zettel.reindex",
    "zettel.ask",
    "zettel.nope",
]


class Fuzzer:
    def __init__(self, seed: int, uris: list[str]) -> None:
        self.rng = random.Random(seed)
        self.uris = uris

    def scalar(self) -> Any:
        return self.rng.choice(
            [
                None,
                True,
                False,
                0,
                -1,
                1,
                2**31 - 1,
                2**31,
                -(2**31) - 1,
                2**63,
                10**30,
                1.5,
                -0.0,
                1e308,
                "",
                "x",
                "0",
                "-1",
                "\ud800",
                "é😀" * 5,
                "file:///nonexistent/Note.md",
                "not a uri",
                *self.uris,
            ]
        )

    def junk(self, depth: int = 0) -> Any:
        roll = self.rng.random()
        if depth > 3 or roll < 0.55:
            return self.scalar()
        if roll < 0.75:
            return [self.junk(depth + 1) for _ in range(self.rng.randint(0, 4))]
        keys = ["uri", "line", "character", "query", "a", "", "textDocument", "position", "id"]
        return {self.rng.choice(keys): self.junk(depth + 1) for _ in range(self.rng.randint(0, 4))}

    def position(self) -> Any:
        if self.rng.random() < 0.5:
            return {"line": self.rng.randint(0, 8), "character": self.rng.randint(0, 40)}
        return {"line": self.scalar(), "character": self.scalar()}

    def params(self, method: str) -> Any:
        rng = self.rng
        if rng.random() < 0.2:
            return self.junk()
        doc = {"uri": rng.choice(self.uris) if rng.random() < 0.8 else self.scalar()}
        template: dict[str, Any] = {
            "textDocument": doc,
            "position": self.position(),
            "range": {"start": self.position(), "end": self.position()},
            "context": {"includeDeclaration": self.scalar(), "diagnostics": []},
            "query": rng.choice(["", "sourdough", "Beta", self.scalar()]),
        }
        if method == "workspace/executeCommand":
            template = {
                "command": rng.choice(COMMANDS),
                "arguments": rng.choice(
                    [
                        [],
                        [self.junk()],
                        [{"uri": doc["uri"], "query": self.scalar(), "limit": self.scalar()}],
                        [doc["uri"], self.position(), self.scalar()],
                        self.junk(),
                    ]
                ),
            }
        for key in list(template):
            roll = rng.random()
            if roll < 0.15:
                del template[key]
            elif roll < 0.3:
                template[key] = self.junk()
        return template

    def message(self, msg_id: int) -> tuple[bytes, Any]:
        """A framed-correctly body and the id a response must carry (None: no response due)."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.04:
            return encode({"jsonrpc": "2.0", "id": msg_id, "method": "x"})[:-3], None
        if roll < 0.06:
            return encode([{"jsonrpc": "2.0", "id": msg_id, "method": "shutdown"}]), None
        if roll < 0.08:
            return encode({"jsonrpc": "2.0", "id": msg_id, "result": self.junk()}), None
        method: Any = rng.choice(LSP_METHODS if rng.random() < 0.85 else JUNK_METHODS)
        if rng.random() < 0.5:
            method = rng.choice(["workspace/executeCommand", "textDocument/hover"])
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if rng.random() < 0.9:
            msg["params"] = self.params(method)
        roll = rng.random()
        if roll < 0.7:
            msg["id"] = msg_id
        elif roll < 0.8:
            msg["id"] = f"fuzz-{msg_id}"
        elif roll < 0.85:
            msg["id"] = rng.choice([[msg_id], {"id": msg_id}, 1.25, None, False])
        if rng.random() < 0.03:
            msg["jsonrpc"] = rng.choice(["1.0", 2, None])
        if rng.random() < 0.03:
            msg["method"] = self.junk()
        # any object with a "method" and a valid id is a request: it must get one answer
        due = msg.get("id")
        if isinstance(due, bool) or not isinstance(due, int | str):
            due = None
        return encode(msg), due


def test_fuzz_well_framed_messages(tiny_vault: Path, server_cache: Path, raw: RawServer) -> None:
    raw.initialize(tiny_vault, vault_options(tiny_vault, server_cache))
    uris = [(tiny_vault / n).as_uri() for n in ("Alpha.md", "Beta.md")]
    for uri, name in zip(uris, ("Alpha.md", "Beta.md"), strict=True):
        raw.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": (tiny_vault / name).read_text(encoding="utf-8"),
                }
            },
        )
    fuzz = Fuzzer(seed=20240612, uris=uris)
    due: list[Any] = []
    for i in range(FUZZ_MESSAGES):
        body, msg_id = fuzz.message(10_000 + i)
        assert raw.send_raw(frame(body)), f"the server stopped reading at message {i}"
        if msg_id is not None:
            due.append(msg_id)
    for msg_id in due:
        raw.wait_response(msg_id)
    answer = raw.call("workspace/symbol", {"query": "Beta"})
    assert isinstance(answer.get("result"), list), answer
    assert raw.shutdown_and_exit() == 0, raw.stderr_tail()
    for msg_id in due:
        assert len(raw.responses(msg_id)) == 1, (msg_id, raw.responses(msg_id))
    assert not raw.bad_output, raw.bad_output


BENIGN = ["lower-case name", "LF line ends", "extra header", "spaces around the value"]
BREAKING = [
    "length + k",
    "length - k",
    "no header",
    "name misspelt",
    "value junk",
    "junk line before",
    "length over the limit",
    "second length",
]


def mutate(rng: random.Random, kind: str, body: bytes) -> bytes:
    n = len(body)
    if kind == "lower-case name":
        return b"content-length: %d\r\n\r\n" % n + body
    if kind == "LF line ends":
        return b"Content-Length: %d\n\n" % n + body
    if kind == "extra header":
        return b"Content-Length: %d\r\nX-Junk: %d\r\n\r\n" % (n, rng.randint(0, 99)) + body
    if kind == "spaces around the value":
        return b"Content-Length:   %d  \r\n\r\n" % n + body
    if kind == "length + k":
        return b"Content-Length: %d\r\n\r\n" % (n + rng.randint(1, 400)) + body
    if kind == "length - k":
        return b"Content-Length: %d\r\n\r\n" % (n - rng.randint(1, n - 1)) + body
    if kind == "no header":
        return body
    if kind == "name misspelt":
        return b"Content-Lenth: %d\r\n\r\n" % n + body
    if kind == "value junk":
        value = rng.choice([b"", b"x", b"-1", b"1e3", b"0x10", b"%d%d" % (n, n) + b"z", b"\xff"])
        return b"Content-Length: " + value + b"\r\n\r\n" + body
    if kind == "junk line before":
        junk = bytes(rng.randrange(33, 256) for _ in range(rng.randint(0, 30)))
        return b"\x7f" + junk + b"\r\n" + frame(body)  # DEL: never part of a header name
    if kind == "length over the limit":
        return b"Content-Length: %d\r\n\r\n" % rng.randint(2**31, 2**40) + body
    if kind == "second length":
        return b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n + 1) + body
    raise AssertionError(kind)


@pytest.mark.parametrize("seed", range(6))
def test_fuzz_framing(seed: int) -> None:
    """A few good messages, mutated framing for one of them, then shutdown and exit, in one
    process per seed. A benign mutation changes nothing; a breaking one ends the process with a
    non-zero code and a log line, never a deaf server."""
    rng = random.Random(seed)
    kinds = [rng.choice(BENIGN), rng.choice(BREAKING if seed % 2 == 0 else BENIGN)]
    rng.shuffle(kinds)
    srv = RawServer()
    try:
        srv.initialize()
        stream = b""
        broken = False
        ids: list[int] = []
        for kind in kinds:
            for _ in range(rng.randint(0, 3)):
                msg_id = srv.new_id()
                ids.append(msg_id)
                stream += frame(
                    encode(
                        {
                            "jsonrpc": "2.0",
                            "id": msg_id,
                            "method": "workspace/symbol",
                            "params": {"query": rng.choice(["", "a", "é"])},
                        }
                    )
                )
            body = encode({"jsonrpc": "2.0", "id": srv.new_id(), "method": "$/noop", "params": {}})
            stream += mutate(rng, kind, body)
            broken = broken or kind in BREAKING
        if broken:
            # what a client does next: ask to shut down. A deaf server never answers.
            srv.send_raw(stream + frame(SHUTDOWN) + frame(EXIT))
            code = srv.wait_exit_or_close()
            assert code != 0, f"{kinds}: exit code 0; stderr: {srv.stderr_tail()}"
            assert FATAL_MARK in srv.stderr_text(), (kinds, srv.stderr_tail())
        else:
            srv.send_raw(stream)
            for msg_id in ids:
                assert "result" in srv.wait_response(msg_id)
            assert srv.shutdown_and_exit() == 0, (kinds, srv.stderr_tail())
            assert all(len(srv.responses(i)) == 1 for i in ids)
        assert not srv.bad_output, srv.bad_output
    finally:
        srv.kill()


def test_frame_reader_splits_a_stream_however_it_arrives() -> None:
    """In-process: the same stream read in random-sized pieces (down to single bytes) gives the
    same bodies, and a broken stream fails at the same place."""
    from zettel_lsp.server.protocol import FrameReader, FramingError

    bodies = [
        encode({"jsonrpc": "2.0", "id": i, "method": "m", "params": "é" * i}) for i in range(8)
    ]
    good = b"".join(frame(b) for b in bodies) + b"content-length: 2\n\n{}\r\n"
    bad = good + b"Content-Length: 2\r\n{}"  # a header line that is not one
    rng = random.Random(7)

    async def split(stream: bytes) -> list[bytes]:
        pos = 0

        async def read() -> bytes:
            nonlocal pos
            chunk = stream[pos : pos + rng.choice([1, 2, 3, 7, 64, 4096])]
            pos += len(chunk)
            return chunk

        reader = FrameReader(read)
        got = []
        with contextlib.suppress(FramingError) if stream is bad else contextlib.nullcontext():
            while (body := await reader.next_body()) is not None:
                got.append(body)
            assert stream is good, "a broken stream read to the end"
        return got

    for _ in range(30):
        for stream in (good, bad):
            assert asyncio.run(split(stream)) == [*bodies, b"{}"]


@pytest.mark.parametrize("result", [float("nan"), {"score": float("inf")}, object()])
def test_an_answer_that_cannot_be_json_is_an_internal_error(result: Any) -> None:
    """Every request gets one answer a client can read, even when its result has no JSON form."""
    from zettel_lsp.server.server import ZettelLanguageServer

    written: list[bytes] = []

    class Out:
        def write(self, data: bytes) -> None:
            written.append(data)

    protocol = ZettelLanguageServer().protocol
    protocol.set_writer(Out())  # type: ignore[arg-type]
    protocol._send_response(7, result=result)
    protocol._send_response(8, result={"score": 0.5})  # still answering
    bodies = [json.loads(w.split(b"\r\n\r\n", 1)[1]) for w in written]
    assert bodies[0]["id"] == 7 and bodies[0]["error"]["code"] == -32603
    assert "unencodable" in bodies[0]["error"]["message"]
    assert bodies[1] == {"jsonrpc": "2.0", "id": 8, "result": {"score": 0.5}}
    assert len(bodies) == 2
