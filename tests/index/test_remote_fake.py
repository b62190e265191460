"""A small stand-in for a Qdrant server, for the remote-mode failure tests (no server binary can
be installed where these tests run).

:class:`FakeQdrant` is a local ``http.server`` in a thread that speaks the part of Qdrant's REST
API that ``qdrant-client`` uses for the index (collections, payload indexes, points, vectors,
query, scroll, count, facet), with Qdrant's JSON envelope (``{"result": ..., "status": "ok"}``,
errors as ``{"status": {"error": ...}}``). Request bodies are parsed with qdrant-client's own
REST models and executed by qdrant-client's in-process engine (``QdrantClient(":memory:")``),
so the data outlives a killed writer. Faults are injected per request (:meth:`FakeQdrant.fail`):
an HTTP status, a delay (a slow server that still applies the write), or a hold until released
(a request in flight while its writer is killed). Every request is recorded.

The tests here check the fake itself against the in-process mode: the same answers through
HTTP as without it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import warnings
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as m

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder
from zettel_lsp.index.remote_store import RemoteStore, VaultIdentity
from zettel_lsp.index.store_api import ChunkPoint
from zettel_lsp.index.sync import Indexer, IndexSettings

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

_ROUTE = re.compile(r"^/collections/(?P<c>[^/]+)(?P<rest>/.*)?$")


@dataclass
class Fault:
    """What to do with one matching request: ``status`` (answer it, not applied), ``delay``
    (apply, then answer after that many seconds), ``hold`` (wait until the event is set, then
    answer 503, not applied); ``times`` matching requests are affected, after ``skip`` ones."""

    method: str
    path: str  # a suffix of the path: "/points" (upsert), "/points/vectors" (set_dense)
    status: int = 0
    delay: float = 0.0
    hold: threading.Event | None = None
    skip: int = 0
    times: int = 1
    reached: threading.Event = field(default_factory=threading.Event)

    def matches(self, method: str, path: str) -> bool:
        return method == self.method and path.endswith(self.path)


class FakeQdrant:
    def __init__(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.engine = QdrantClient(":memory:")
        self.requests: list[tuple[str, str]] = []
        self.faults: list[Fault] = []
        self._engine_lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        for f in self.faults:
            if f.hold is not None:
                f.hold.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self.engine.close()

    def fail(self, method: str, path: str, **kw: Any) -> Fault:
        fault = Fault(method, path, **kw)
        self.faults.append(fault)
        return fault

    def count(self, method: str, path: str) -> int:
        return sum(1 for mt, p in self.requests if mt == method and p.endswith(path))

    # ------------------------------------------------------------------ one request

    def _fault_for(self, method: str, path: str) -> Fault | None:
        for f in self.faults:
            if f.matches(method, path):
                if f.skip > 0:
                    f.skip -= 1
                    continue
                if f.times > 0:
                    f.times -= 1
                    f.reached.set()
                    return f
        return None

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        self.requests.append((method, path))
        fault = self._fault_for(method, path)
        if fault is not None and fault.hold is not None:
            fault.hold.wait(30)
            return 503, {"status": {"error": "Service Unavailable"}}
        if fault is not None and fault.status:
            return fault.status, {"status": {"error": f"injected {fault.status}"}}
        try:
            with self._engine_lock:
                result = self._dispatch(method, path, body)
        except _NotFoundError as exc:
            return 404, {"status": {"error": str(exc)}}
        except _ConflictError as exc:
            return 409, {"status": {"error": str(exc)}}
        except (ValueError, KeyError) as exc:  # the engine's input errors: a server says 400
            return 400, {"status": {"error": f"Wrong input: {exc}"}}
        if fault is not None and fault.delay:
            time.sleep(fault.delay)  # applied, answered late (the client may be gone)
        return 200, {"result": result, "status": "ok", "time": 0.0}

    def _dispatch(self, method: str, path: str, body: Any) -> Any:
        e = self.engine
        if path == "/":
            return None  # (answered by the handler: the version)
        route = _ROUTE.match(path)
        if route is None:
            raise _NotFoundError(path)
        c, rest = route["c"], route["rest"] or ""
        if rest == "/exists":
            return {"exists": e.collection_exists(c)}
        if rest == "" and method == "PUT":
            if e.collection_exists(c):
                raise _ConflictError(f"Collection `{c}` already exists!")
            cc = m.CreateCollection.model_validate(body)
            return e.create_collection(
                c,
                vectors_config=cc.vectors,
                sparse_vectors_config=cc.sparse_vectors,
                metadata=cc.metadata,
            )
        if not e.collection_exists(c):
            raise _NotFoundError(f"Collection `{c}` doesn't exist!")
        if rest == "" and method == "GET":
            return _dump(e.get_collection(c))
        if rest == "" and method == "PATCH":
            return e.update_collection(c, metadata=m.UpdateCollection.model_validate(body).metadata)
        if rest == "" and method == "DELETE":
            return e.delete_collection(c)
        if rest == "/index":
            fi = m.CreateFieldIndex.model_validate(body)
            return _dump(e.create_payload_index(c, fi.field_name, fi.field_schema))
        if rest == "/points" and method == "PUT":
            pl = m.PointsList.model_validate(body)
            return _dump(e.upsert(c, points=pl.points))
        if rest == "/points" and method == "POST":
            pr = m.PointRequest.model_validate(body)
            recs = e.retrieve(
                c, pr.ids, with_payload=pr.with_payload or False, with_vectors=pr.with_vector
            )
            return [_dump(r) for r in recs]
        if rest == "/points/vectors":
            uv = m.UpdateVectors.model_validate(body)
            return _dump(e.update_vectors(c, points=uv.points))
        if rest == "/points/vectors/delete":
            dv = m.DeleteVectors.model_validate(body)
            sel: Any = (
                m.FilterSelector(filter=dv.filter or m.Filter())
                if dv.points is None
                else m.PointIdsList(points=dv.points)
            )
            return _dump(e.delete_vectors(c, vectors=dv.vector, points=sel))
        if rest == "/points/delete":
            sel = (
                m.FilterSelector.model_validate(body)
                if "filter" in body
                else m.PointIdsList.model_validate(body)
            )
            return _dump(e.delete(c, points_selector=sel))
        if rest == "/points/query":
            q = m.QueryRequest.model_validate(body)
            return _dump(
                e.query_points(
                    c,
                    query=q.query,
                    using=q.using,
                    limit=q.limit or 10,
                    query_filter=q.filter,
                    with_payload=q.with_payload if q.with_payload is not None else False,
                )
            )
        if rest == "/points/scroll":
            s = m.ScrollRequest.model_validate(body)
            points, offset = e.scroll(
                c, scroll_filter=s.filter, limit=s.limit or 10, with_payload=s.with_payload or False
            )
            return {"points": [_dump(p) for p in points], "next_page_offset": offset}
        if rest == "/points/count":
            cr = m.CountRequest.model_validate(body)
            return _dump(e.count(c, count_filter=cr.filter, exact=cr.exact))
        if rest == "/facet":
            fr = m.FacetRequest.model_validate(body)
            return _dump(e.facet(c, key=fr.key, limit=fr.limit or 10, exact=fr.exact or False))
        raise _NotFoundError(f"{method} {path}")


class _NotFoundError(Exception):
    pass


class _ConflictError(Exception):
    pass


def _dump(obj: Any) -> Any:
    if isinstance(obj, bool):
        return obj
    return obj.model_dump(mode="json", exclude_none=True)


def _handler(fake: FakeQdrant) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _any(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            path = self.path.split("?", 1)[0]
            if path == "/":
                status, out = 200, {"title": "qdrant - vector search engine", "version": "1.16.0"}
            else:
                status, out = fake.handle(self.command, path, json.loads(raw) if raw else None)
            data = json.dumps(out).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (a timeout) or was killed

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _any

    return Handler


def free_port_url() -> str:
    """A URL where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def fake():
    server = FakeQdrant()
    try:
        yield server
    finally:
        server.close()


IDENT = VaultIdentity("/vault", "test-model", 4, "chunker-1")


def point(pid: int, path: str, text: str, dense: list[float] | None = None) -> ChunkPoint:
    payload: Any = {
        "path": path,
        "title": path,
        "chunk": 0,
        "heading": "",
        "line_start": 0,
        "line_end": 0,
        "text": text,
        "lang": "en",
    }
    return ChunkPoint(pid, payload, text, dense)


def test_fake_answers_like_the_in_process_mode(fake: FakeQdrant) -> None:
    """Every store call through HTTP gives what the same call gives in-process."""
    stores = [
        RemoteStore.connect(url, None, "c", 4, 10.0, identity=IDENT)
        for url in (fake.url, ":memory:")
    ]
    try:
        for s in stores:
            s.upsert(
                [
                    point(1, "a.md", "sourdough starter feeding", [1, 0, 0, 0]),
                    point(2, "b.md", "rank fusion of runs", [0, 1, 0, 0]),
                    point(3, "b.md", "the starter of a run"),
                ]
            )
            s.set_dense([3], [[0, 0, 1, 0]])
        answers = [
            (
                s.paths(),
                s.count(),
                s.count("b.md"),
                s.dense_search([1, 0.1, 0, 0], 2),
                s.bm25_search("starter", 5),
                s.keyword_search("rank fusion", 5, phrase=True),
                s.keyword_count("starter"),
                s.retrieve([1, 3], with_dense=True),
                s.stored_identity(),
            )
            for s in stores
        ]
        assert answers[0] == answers[1]
        assert answers[0][0] == {"a.md": 1, "b.md": 2}
        for s in stores:
            s.delete_paths(["b.md"])
            assert s.reset_dense(4) is True
        assert [s.paths() for s in stores] == [{"a.md": 1}] * 2
        assert [s.dense_search([1, 0, 0, 0], 2) for s in stores] == [[], []]
    finally:
        for s in stores:
            s.close()


def test_indexer_through_the_fake(fake: FakeQdrant, tmp_path: Path, cache_dir: Path) -> None:
    """The whole indexer against the fake: the index follows the folder."""
    import shutil

    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT / "retrieval", vault)
    settings = IndexSettings(qdrant_url=fake.url, multilingual="off")
    with Indexer(vault, tmp_path / "idx", settings, cache_dir=cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert ix.store.bm25_search("reciprocal rank fusion", 3)
    assert fake.count("PUT", "/points") >= 1
