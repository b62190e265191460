"""The same index schema in a Qdrant server collection, through ``qdrant-client``: for vaults
that outgrow one machine or are shared by a team (setting ``qdrantUrl``, ``qdrant_url`` in
``IndexSettings``; optional API key). Users' guide: ``docs/remote.md``.

Points, vectors (``dense`` cosine, ``bm25`` sparse with IDF), payload and payload indexes match
the embedded store exactly; BM25 sparse vectors come from the same encoder. The one difference:
a server collection cannot gain a named vector after it is created, so the multilingual vector
(``dense_ml``, issue #17) is not kept here yet and that leg stays off (:meth:`ensure_vector`).

**Identity.** The collection's metadata (key ``zettel_lsp``) names what it holds: the vault, the
model and its vector size, the chunker, the schema version and the writer's host. Opening checks
it: a collection holding another model's vectors (or vectors of another size) is refused with a
:class:`StoreError` naming both models, unless the local state says this very writer stored that
model there (the user changed the model setting: :meth:`reset_dense` then re-embeds in place, or
recreates the writer's own collection when the size changed). A shared collection is never
deleted because of a setting on one machine.

**Failures.** Every request goes through :meth:`RemoteStore._call`: a client timeout
(:data:`TIMEOUT_S`), then up to :data:`ATTEMPTS` attempts with exponential back-off on transient
errors (connection refused or reset, timeouts, HTTP 429 and 5xx), then a :class:`StoreError`
with the URL and what to do. Writes are idempotent (point ids are derived from path and chunk
index, :func:`~zettel_lsp.index.store_api.point_id`), so a retried batch that the server had
already applied changes nothing. Upserts and vector updates go in batches of at most
:data:`BATCH_POINTS` points. The indexer saves its state only after a write returned, so a
write that fails for good leaves its cards *pending* and the next start redoes them.

One writer per collection: the local state file (which files are indexed) lives with the
writer. Calls are serialised with a lock (the client's in-process mode, used by the tests, is
not thread-safe); back-off waits happen outside it.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import httpx
from qdrant_client import QdrantClient
from qdrant_client import models as m
from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from zettel_lsp.index.store import Bm25Encoder
from zettel_lsp.index.store_api import (
    BM25,
    CJK_FIELD,
    DENSE,
    LANG_FIELD,
    PATH_FIELD,
    TEXT_FIELD,
    ChunkPoint,
    Hit,
    StoreError,
    VectorStore,
    Where,
    as_hits,
    point_filter,
    point_id,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION = 1  # bump when the collection's vectors, payload or indexes change
IDENTITY_KEY = "zettel_lsp"  # the collection metadata key holding the VaultIdentity
BATCH_POINTS = 256  # points per upsert or vector update request
TIMEOUT_S = 15  # seconds per request (qdrant-client rounds up to whole seconds)
ATTEMPTS = 4  # tries per request on transient errors
BACKOFF_S = 0.5  # the first wait between tries; doubled each time
BACKOFF_MAX_S = 8.0
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_NOTHING_LOST = (
    ". What was not written is redone at the next start (nothing is lost); check that the "
    "server is running and reachable"
)
DOCKER_RUN = 'docker run -p 6333:6333 -v "$PWD/qdrant_storage:/qdrant/storage" qdrant/qdrant'


@dataclass(frozen=True, slots=True)
class VaultIdentity:
    """What a collection holds and for whom: stored in its metadata, checked on open."""

    vault: str  # the vault's absolute path on the writer's machine
    model: str  # the embedding model id of the ``dense`` vectors
    dim: int  # their size
    chunker: str  # the chunker id (version, budget, title rule)
    schema: int = SCHEMA_VERSION
    host: str = ""  # the writer's host name (for the messages)

    @classmethod
    def from_json(cls, data: Any) -> VaultIdentity | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                vault=str(data["vault"]),
                model=str(data["model"]),
                dim=int(data["dim"]),
                chunker=str(data.get("chunker", "")),
                schema=int(data.get("schema", 0)),
                host=str(data.get("host", "")),
            )
        except (KeyError, TypeError, ValueError):
            return None


def this_host() -> str:
    try:
        return socket.gethostname()
    except OSError:
        return ""


def _filter(where: Where) -> Any:
    """``where`` as a server ``Filter`` (None: all points)."""
    return point_filter(where, m, lambda ids: m.HasIdCondition(has_id=ids))


def _schema(field: str) -> m.PayloadSchemaType | m.TextIndexParams:
    """The index of a payload field, as in the embedded store (``store._field_params``)."""
    if field in (PATH_FIELD, LANG_FIELD):
        return m.PayloadSchemaType.KEYWORD
    tokenizer = m.TokenizerType.MULTILINGUAL if field == CJK_FIELD else m.TokenizerType.WORD
    return m.TextIndexParams(
        type=m.TextIndexType.TEXT, tokenizer=tokenizer, lowercase=True, phrase_matching=True
    )


def _sparse(vector: Any) -> m.SparseVector:
    """A sparse vector of :class:`Bm25Encoder` (or the shard's) in the server's terms."""
    indices = [int(i) for i in vector.indices]
    return m.SparseVector(indices=indices, values=[float(v) for v in vector.values])


def _struct(pid: int, payload: Mapping[str, Any], vectors: Mapping[str, Any]) -> m.PointStruct:
    """A point as a collection holds it: its ``bm25`` sparse vector and its ``dense`` one, where
    ``vectors`` has them (a collection has no ``dense_ml``, :meth:`RemoteStore.ensure_vector`)."""
    vector: dict[str, Any] = {}
    if vectors.get(BM25) is not None:
        vector[BM25] = _sparse(vectors[BM25])
    if vectors.get(DENSE) is not None:
        vector[DENSE] = [float(x) for x in vectors[DENSE]]
    return m.PointStruct(id=pid, vector=vector, payload=dict(payload))


def _transient(exc: BaseException) -> bool:
    """Worth another try: the server did not answer, answered too late, or said 'later'."""
    if isinstance(exc, ResourceExhaustedResponse):
        return True
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in RETRY_STATUS
    if isinstance(exc, ResponseHandlingException):
        return isinstance(exc.source, httpx.TransportError)
    return isinstance(exc, httpx.TransportError | ConnectionError | TimeoutError)


def _describe(exc: BaseException) -> str:
    """A one-line reason for an error of the client (its own messages span lines)."""
    if isinstance(exc, ResponseHandlingException):
        src = exc.source
        if isinstance(src, httpx.ConnectError):
            return f"connection failed ({src})"
        if isinstance(src, httpx.TimeoutException):
            return f"no answer within {TIMEOUT_S} s ({type(src).__name__})"
        return f"{type(src).__name__}: {src}"
    if isinstance(exc, UnexpectedResponse):
        try:
            data = exc.structured()
        except ValueError:
            data = None
        status = data.get("status") if isinstance(data, dict) else None
        if isinstance(status, dict):
            detail = str(status.get("error", ""))
        else:
            detail = " ".join(exc.content[:200].decode("utf-8", "replace").split())
        return f"HTTP {exc.status_code} {exc.reason_phrase}" + (f": {detail}" if detail else "")
    return " ".join(str(exc).split()) or type(exc).__name__


def _unreachable(where: str, cause: BaseException | None) -> str:
    """The message for a server that cannot be used at all (at start, or for an export)."""
    if isinstance(cause, UnexpectedResponse) and cause.status_code in (401, 403):
        return (
            f"the Qdrant server at {where} refused the request ({_describe(cause)}); check the "
            "qdrantApiKey setting"
        )
    if cause is not None and not _transient(cause):
        return f"the Qdrant server at {where} failed: {_describe(cause)}"
    reason = _describe(cause) if cause is not None else "no answer"
    return (
        f"cannot reach the Qdrant server at {where} ({reason}; {ATTEMPTS} attempts). Start "
        f"one (e.g. `{DOCKER_RUN}`), check the qdrantUrl setting (and qdrantApiKey), or "
        "leave qdrantUrl empty to use the embedded index"
    )


def collection_name(index_dir: Path) -> str:
    """The collection of the vault whose index folder is ``index_dir``: ``zettel-`` and the
    folder's name (by default ``<vault name>-<hash of its path>``), so it follows from the
    vault and is the same at every start."""
    return "zettel-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", index_dir.name).strip("-") or "vault")


def _wait_before(attempt: int, exc: BaseException) -> float:
    if isinstance(exc, ResourceExhaustedResponse) and exc.retry_after_s > 0:
        return float(min(float(exc.retry_after_s), BACKOFF_MAX_S))
    return min(BACKOFF_S * 2.0 ** (attempt - 1), BACKOFF_MAX_S)


class RemoteStore(VectorStore):
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dim: int,
        bm25_avg_len: float,
        *,
        location: str = "",
        identity: VaultIdentity | None = None,
        previous_model: str | None = None,
    ) -> None:
        """Open (or create) ``collection``. With ``identity``: create it with that identity, or
        check an existing one against it (see the module's docstring); ``previous_model`` is
        the model this writer's own state says it stored there (None: no such state)."""
        self._client = client
        self.collection = collection
        self.dim = identity.dim if identity is not None else dim
        self.identity = identity
        self._where = location or collection
        self._bm25 = Bm25Encoder(bm25_avg_len)
        self._lock = threading.Lock()
        try:
            exists = self._call(
                "check the collection", lambda: client.collection_exists(collection)
            )
        except StoreError as exc:
            raise StoreError(_unreachable(self._where, exc.__cause__)) from exc.__cause__
        if not exists:
            self._create(self.dim)
        else:
            self._check(previous_model)

    @classmethod
    def connect(
        cls,
        url: str,
        api_key: str | None,
        collection: str,
        dim: int,
        bm25_avg_len: float,
        *,
        identity: VaultIdentity | None = None,
        previous_model: str | None = None,
    ) -> RemoteStore:
        client = (
            QdrantClient(location=url)
            if url == ":memory:"
            else QdrantClient(
                url=url, api_key=api_key, timeout=TIMEOUT_S, check_compatibility=False
            )
        )
        try:
            return cls(
                client,
                collection,
                dim,
                bm25_avg_len,
                location=url,
                identity=identity,
                previous_model=previous_model,
            )
        except BaseException:
            client.close()
            raise

    # ------------------------------------------------------------------ requests

    def _call(self, what: str, fn: Callable[[], T], *, write: bool = False) -> T:
        """``fn()`` under the lock, tried again on transient errors (back-off outside the
        lock); a :class:`StoreError` saying what failed where (for a ``write``: that nothing
        is lost), with the cause chained."""
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._lock:
                    return fn()
            except StoreError:
                raise
            except Exception as exc:
                if not _transient(exc) or attempt >= ATTEMPTS:
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    raise StoreError(
                        f"the Qdrant server at {self._where} failed to {what} "
                        f"(collection {self.collection}){tries}: {_describe(exc)}"
                        + (_NOTHING_LOST if write else "")
                    ) from exc
                wait = _wait_before(attempt, exc)
                log.warning(
                    "Qdrant at %s: %s failed (%s); try %d of %d in %.1f s",
                    self._where,
                    what,
                    _describe(exc),
                    attempt + 1,
                    ATTEMPTS,
                    wait,
                )
                time.sleep(wait)

    # ------------------------------------------------------------------ identity

    def _create(self, dim: int) -> None:
        meta = {IDENTITY_KEY: asdict(self.identity)} if self.identity is not None else None

        def create() -> None:
            # a retry after a timed-out create finds the collection made: that is success
            if not self._client.collection_exists(self.collection):
                self._client.create_collection(
                    self.collection,
                    vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
                    sparse_vectors_config={BM25: m.SparseVectorParams(modifier=m.Modifier.IDF)},
                    metadata=meta,
                )

        self._call("create the collection", create)
        for name in (PATH_FIELD, LANG_FIELD, TEXT_FIELD, CJK_FIELD):
            self._call(
                f"index the payload field {name}",
                partial(self._client.create_payload_index, self.collection, name, _schema(name)),
            )
        self.dim = dim

    def stored_identity(self) -> tuple[VaultIdentity | None, int | None, bool]:
        """(the identity in the collection's metadata, its ``dense`` size, whether it has the
        ``bm25`` sparse vector)."""
        info = self._call(
            "read the collection", lambda: self._client.get_collection(self.collection)
        )
        meta = info.config.metadata or {}
        vectors = info.config.params.vectors
        size = None
        if isinstance(vectors, dict) and DENSE in vectors:
            size = int(vectors[DENSE].size)
        sparse = info.config.params.sparse_vectors or {}
        return VaultIdentity.from_json(meta.get(IDENTITY_KEY)), size, BM25 in sparse

    def _check(self, previous_model: str | None) -> None:
        want = self.identity
        have, size, has_bm25 = self.stored_identity()
        where = f"collection {self.collection} on {self._where}"
        if size is None or not has_bm25:
            raise StoreError(
                f"{where} was not made by zettel-lsp (it has no '{DENSE}' and '{BM25}' "
                "vectors); choose another index folder (the collection is named after it) or "
                "another server"
            )
        if want is None:
            self.dim = size
            return
        if have is not None and have.vault != want.vault:
            by = f" by {have.host}" if have.host else ""
            raise StoreError(
                f"{where} holds the index of the vault {have.vault} (written{by}), not of "
                f"{want.vault}; one writer per collection: give this vault another index "
                "folder (the collection is named after it)"
            )
        theirs = have.model if have is not None else "an unknown model"
        if size != want.dim or (have is not None and have.model != want.model):
            if have is not None and previous_model is not None and have.model == previous_model:
                # this writer's own collection and model: the indexer re-embeds (reset_dense)
                self.dim = size
                return
            raise StoreError(
                f"{where} holds vectors of {theirs} (size {size}); this index uses "
                f"{want.model} (size {want.dim}). Set the model back to {theirs}, or point "
                "this vault at another collection (another index folder or server); if nobody "
                f"else needs it, delete the collection (curl -X DELETE "
                f"{self._where.rstrip('/')}/collections/{self.collection}) and index again"
            )
        self.dim = size
        if have != want:  # no identity yet (older zettel-lsp), or a new chunker: record ours
            self._set_identity(want)

    def _set_identity(self, identity: VaultIdentity) -> None:
        self._call(
            "record the collection's identity",
            lambda: self._client.update_collection(
                self.collection, metadata={IDENTITY_KEY: asdict(identity)}
            ),
        )

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._lock:
            self._client.close()

    def reset_dense(self, dim: int) -> bool:
        """Drop every dense vector for a new model (called by the indexer when its own state
        says the model changed, or when it starts a collection again). Same size: in place,
        BM25 points kept (True). Another size: a server cannot resize a vector, so this
        writer's collection (checked on open) is created again, empty (False)."""
        if dim == self.dim:
            self._call(
                "drop the dense vectors",
                lambda: self._client.delete_vectors(
                    self.collection,
                    vectors=[DENSE],
                    points=m.FilterSelector(filter=m.Filter()),
                    wait=True,
                ),
                write=True,
            )
            if self.identity is not None:
                self._set_identity(self.identity)
            return True
        log.warning(
            "recreating the collection %s on %s: its vectors have size %d, the model's %d",
            self.collection,
            self._where,
            self.dim,
            dim,
        )
        delete = partial(self._client.delete_collection, self.collection)
        self._call("delete the collection", delete, write=True)
        self._create(dim)
        return False

    # ------------------------------------------------------------------ writes

    def upsert(self, points: Sequence[ChunkPoint]) -> None:
        self.upsert_structs([_struct(p.id, p.payload, self._vectors(p)) for p in points])

    def upsert_structs(self, structs: Sequence[m.PointStruct]) -> None:
        """Write ready-made points, :data:`BATCH_POINTS` per request (each retried alone)."""
        self._in_batches(
            structs,
            "write {n} points",
            lambda part: self._client.upsert(self.collection, points=part, wait=True),
        )

    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = DENSE
    ) -> None:
        batch = [
            m.PointVectors(id=i, vector={using: [float(x) for x in v]})
            for i, v in zip(ids, vectors, strict=True)
        ]
        self._in_batches(
            batch,
            "store {n} vectors",
            lambda part: self._client.update_vectors(self.collection, points=part, wait=True),
        )

    def delete_paths(self, paths: Iterable[str]) -> None:
        self._in_batches(
            list(paths),
            "delete the points of {n} cards",
            lambda part: self._client.delete(
                self.collection, m.FilterSelector(filter=_filter(Where(part))), wait=True
            ),
        )

    def delete_ids(self, ids: Sequence[int]) -> None:
        self._in_batches(
            ids,
            "delete {n} points",
            lambda part: self._client.delete(
                self.collection, m.PointIdsList(points=part), wait=True
            ),
        )

    def _in_batches(
        self, items: Sequence[Any], what: str, request: Callable[[list[Any]], object]
    ) -> None:
        """``request(part)`` for each :data:`BATCH_POINTS` items, a write each (:meth:`_call`;
        ``what`` names it, ``{n}`` the part's length)."""
        for start in range(0, len(items), BATCH_POINTS):
            part = list(items[start : start + BATCH_POINTS])
            self._call(what.format(n=len(part)), partial(request, part), write=True)

    # ------------------------------------------------------------------ reads

    def _nearest(self, vector: Any, using: str, limit: int, where: Where) -> list[Hit]:
        query = _sparse(vector) if using == BM25 else vector
        res = self._call(
            "search",
            lambda: self._client.query_points(
                self.collection,
                query=query,
                using=using,
                limit=limit,
                query_filter=_filter(where),
                with_payload=True,
            ),
        )
        return as_hits(res.points)

    def _scroll(self, where: Where, limit: int) -> list[Hit]:
        records, _ = self._call(
            "search",
            lambda: self._client.scroll(
                self.collection, scroll_filter=_filter(where), limit=limit, with_payload=True
            ),
        )
        return as_hits(records, scored=False)

    def _count(self, where: Where) -> int:
        res = self._call(
            "count",
            lambda: self._client.count(self.collection, count_filter=_filter(where), exact=True),
        )
        return int(res.count)

    def _facet(self, limit: int) -> Any:
        res = self._call(
            "list the cards",
            lambda: self._client.facet(self.collection, key=PATH_FIELD, limit=limit, exact=True),
        )
        return res.hits

    def _retrieve(self, ids: Sequence[int], vectors: list[str] | bool) -> Any:
        return self._call(
            "read points",
            lambda: self._client.retrieve(
                self.collection, list(ids), with_payload=True, with_vectors=vectors
            ),
        )


# ---------------------------------------------------------------------- export (shard -> server)


@dataclass(slots=True)
class ExportReport:
    cards: int = 0
    points: int = 0
    with_dense: int = 0  # points copied with their dense vector
    removed: int = 0  # cards deleted from the collection (gone from the shard, or changed)
    multilingual_left_out: int = 0  # cards whose multilingual vectors were not copied


def export_points(
    source: Any,
    files: dict[str, int],
    target: RemoteStore,
    *,
    multilingual_cards: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ExportReport:
    """Copy every point of ``files`` (card path -> chunks, from the state) out of ``source``
    (the embedded store) into ``target``: payload, ``dense`` vector where there is one, and the
    ``bm25`` sparse vector exactly as the shard's encoder made it (the server's encoder is the
    same, :class:`Bm25Encoder`). Idempotent and resumable: point ids are the same on both sides,
    so running it again rewrites the same points; cards the collection holds that the shard
    does not (or with another number of chunks) are deleted first. ``progress(done, total)``
    is called per batch of :data:`BATCH_POINTS` points."""
    report = ExportReport(cards=len(files), multilingual_left_out=multilingual_cards)
    there = target.paths()
    stale = [p for p, n in there.items() if files.get(p) != n]
    if stale:
        target.delete_paths(stale)
        report.removed = sum(1 for p in stale if p not in files)
    ids = [point_id(path, i) for path in sorted(files) for i in range(files[path])]
    for start in range(0, len(ids), BATCH_POINTS):
        batch = ids[start : start + BATCH_POINTS]
        dense = {pid: vec for pid, _, vec in source.retrieve(batch, with_dense=True)}
        rows = source.retrieve(batch, with_dense=True, using=BM25)
        structs = [
            _struct(pid, payload, {BM25: bm25, DENSE: dense.get(pid)})
            for pid, payload, bm25 in rows
        ]
        report.with_dense += sum(dense.get(pid) is not None for pid, _, _ in rows)
        target.upsert_structs(structs)
        report.points += len(structs)
        if progress is not None:
            progress(report.points, len(ids))
    return report
