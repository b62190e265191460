"""A stand-in for an Ollama server on 127.0.0.1 (an Ollama server cannot run in the tests).

It speaks the real HTTP API with its real field names: ``POST /api/chat`` (NDJSON stream with
``message.content``, ``done``, ``done_reason`` and the timing fields; or one JSON object),
``POST /api/embed`` (``embeddings``), ``GET /api/tags`` (``models[].name``/``model``/``details``),
``POST /api/show`` (``model_info`` with ``<arch>.context_length``), and 404
``{"error": "model 'x' not found"}`` for a model it does not have. Answers are canned but
shaped like real ones; knobs make it slow, silent or broken. Chat answers come from
``answer_*`` callables that get the request body (so tests decide what the "model" says).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CREATED_AT = "2025-05-01T10:13:05.123456789Z"
_WORD = re.compile(r"\w+")
_PREFIX_WORDS = {"search_query", "search_document"}


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words embedding: hashed, unit length (like Ollama's)."""
    v = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        if word in _PREFIX_WORDS:
            continue
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        v[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    if not any(v):
        v[0] = 1.0
    return [x / norm for x in v]


def free_port() -> int:
    """A port nothing listens on (bound, then closed): connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def full_name(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


@dataclass
class StubModel:
    family: str = "llama"
    context_length: int | None = 131072
    embedding_dim: int | None = None  # an embedding model when set
    parameter_size: str = "3.2B"


def default_answer(body: dict[str, Any]) -> str:
    """Cites the first note of the prompt by title, as a well-behaved model would."""
    user = body["messages"][-1]["content"]
    m = re.search(r"Note 1: \[(.+?)\]", user)
    title = m.group(1) if m else "no note"
    return f"According to [{title}], the notes answer the question."


def default_expand(body: dict[str, Any]) -> str:
    query = body["messages"][-1]["content"].removeprefix("Query: ")
    parts = [p.strip() for p in re.split(r"\band\b|,", query) if p.strip()]
    return json.dumps({"queries": parts})


def default_rerank(body: dict[str, Any]) -> str:
    notes = re.findall(r"^\[(\d+)\] ", body["messages"][-1]["content"], re.MULTILINE)
    return json.dumps({"ratings": [{"id": int(n), "rating": 1} for n in notes]})


@dataclass
class OllamaStub:
    models: dict[str, StubModel] = field(
        default_factory=lambda: {
            "llama3.2:latest": StubModel(),
            "nomic-embed-text:latest": StubModel("nomic-bert", 2048, 64, "137M"),
            "other-embed:latest": StubModel("bert", 512, 32, "33M"),
        }
    )
    answer_chat: Callable[[dict[str, Any]], str] = default_answer
    answer_expand: Callable[[dict[str, Any]], str] = default_expand
    answer_rerank: Callable[[dict[str, Any]], str] = default_rerank
    delay: float = 0.0  # seconds before any answer (headers included)
    token_delay: float = 0.0  # seconds between streamed pieces
    stall_after: int | None = None  # stream this many pieces, then go silent
    garbage_after: int | None = None  # stream this many pieces, then a line that is not JSON
    error_after: int | None = None  # stream this many pieces, then an {"error": ...} line
    fail_status: int | None = None  # answer every POST with this status and an error body
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> str:
        stub = self

        class Handler(_Handler):
            server_stub = stub

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self.stopping.set()  # wakes sleeping handlers
        self._server.shutdown()
        self._server.server_close()

    def wait(self, seconds: float) -> None:
        self.stopping.wait(seconds)

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [b for p, b in self.requests if p == path]


def _details(m: StubModel) -> dict[str, Any]:
    """The ``details`` object Ollama gives in /api/tags and /api/show."""
    return {
        "parent_model": "",
        "format": "gguf",
        "family": m.family,
        "families": [m.family],
        "parameter_size": m.parameter_size,
        "quantization_level": "Q4_K_M",
    }


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out or cancelled hung up: expected here, not worth a traceback."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server_stub: OllamaStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # ------------------------------------------------------------ plumbing

    def _json(self, status: int, data: object) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _not_found(self, name: str) -> None:
        self._json(404, {"error": f"model '{name}' not found"})

    def _model(self, body: dict[str, Any]) -> tuple[str, StubModel | None]:
        name = str(body.get("model") or body.get("name") or "")
        return name, self.server_stub.models.get(full_name(name))

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # ------------------------------------------------------------ routes

    def do_GET(self) -> None:
        stub = self.server_stub
        stub.requests.append((self.path, {}))
        stub.wait(stub.delay)
        if self.path == "/api/tags":
            models = [
                {
                    "name": name,
                    "model": name,
                    "modified_at": "2025-04-28T09:12:44.512340861+02:00",
                    "size": 2019393189,
                    "digest": hashlib.sha256(name.encode()).hexdigest(),
                    "details": _details(m),
                }
                for name, m in stub.models.items()
            ]
            self._json(200, {"models": models})
        elif self.path == "/api/version":
            self._json(200, {"version": "0.6.8"})
        else:
            self._json(404, {"error": "404 page not found"})

    def do_POST(self) -> None:
        stub = self.server_stub
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        stub.requests.append((self.path, body))
        stub.wait(stub.delay)
        name, model = self._model(body)
        if stub.fail_status is not None:
            self._json(stub.fail_status, {"error": "llama runner process has terminated"})
        elif self.path not in ("/api/chat", "/api/embed", "/api/show"):
            self._json(404, {"error": "404 page not found"})
        elif model is None:
            self._not_found(name)
        elif self.path == "/api/show":
            self._show(model)
        elif self.path == "/api/embed":
            self._embed(name, model, body)
        else:
            self._chat(name, body)

    def _show(self, m: StubModel) -> None:
        info: dict[str, Any] = {
            "general.architecture": m.family,
            "general.file_type": 15,
            "general.parameter_count": 3212749888,
            "general.quantization_version": 2,
            f"{m.family}.block_count": 28,
            f"{m.family}.embedding_length": m.embedding_dim or 3072,
        }
        if m.context_length is not None:
            info[f"{m.family}.context_length"] = m.context_length
        self._json(
            200,
            {
                "license": "LLAMA 3.2 COMMUNITY LICENSE AGREEMENT",
                "modelfile": '# Modelfile generated by "ollama show"\nFROM /models/blobs/x\n',
                "parameters": 'stop                           "<|eot_id|>"',
                "template": "{{ .Prompt }}",
                "details": _details(m),
                "model_info": info,
                "capabilities": ["embedding"] if m.embedding_dim else ["completion", "tools"],
                "modified_at": "2025-04-28T09:12:44.512340861+02:00",
            },
        )

    def _embed(self, name: str, m: StubModel, body: dict[str, Any]) -> None:
        if not m.embedding_dim:
            self._json(400, {"error": f'"{name}" does not support embeddings'})
            return
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self._json(
            200,
            {
                "model": name,
                "embeddings": [fake_vector(t, m.embedding_dim) for t in texts],
                "total_duration": 14143917,
                "load_duration": 1019500,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            },
        )

    def _chat(self, name: str, body: dict[str, Any]) -> None:
        stub = self.server_stub
        system = body["messages"][0]["content"] if body.get("messages") else ""
        if "You judge search results" in system:
            text = stub.answer_rerank(body)
        elif "better search queries" in system:
            text = stub.answer_expand(body)
        else:
            text = stub.answer_chat(body)
        final = {
            "model": name,
            "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": ""},
            "done_reason": "stop",
            "done": True,
            "total_duration": 4883583458,
            "load_duration": 1334875,
            "prompt_eval_count": 26,
            "prompt_eval_duration": 342546000,
            "eval_count": 282,
            "eval_duration": 4535599000,
        }
        if body.get("stream") is False:
            final["message"] = {"role": "assistant", "content": text}
            self._json(200, final)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = re.findall(r"\S+\s*|\s+", text)
        try:
            for i, piece in enumerate(pieces):
                if stub.stall_after is not None and i >= stub.stall_after:
                    stub.wait(3600)
                    return
                if stub.garbage_after is not None and i >= stub.garbage_after:
                    self._chunk(b"<html>502 Bad Gateway</html>\n")
                    break
                if stub.error_after is not None and i >= stub.error_after:
                    self._chunk(b'{"error":"an error was encountered while running the model"}\n')
                    break
                line = {
                    "model": name,
                    "created_at": CREATED_AT,
                    "message": {"role": "assistant", "content": piece},
                    "done": False,
                }
                self._chunk(json.dumps(line).encode() + b"\n")
                stub.wait(stub.token_delay)
            else:
                self._chunk(json.dumps(final).encode() + b"\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading
