"""The same index schema in a Qdrant server collection, through ``qdrant-client``: for vaults
that outgrow one machine or are shared by a team (setting ``qdrant_url``, optional API key).

Points, vectors (``dense`` cosine, ``bm25`` sparse with IDF), payload and payload indexes match
the embedded store exactly; BM25 sparse vectors come from the same encoder. The one difference:
a server collection cannot gain a named vector after it is created, so the multilingual vector
(``dense_ml``, issue #17) is not kept here yet and that leg stays off (:meth:`ensure_vector`).
One writer per
collection: the local state file (which files are indexed) lives with the writer. Calls are
serialised with a lock (the client's in-process mode, used by the tests, is not thread-safe).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as m

from zettel_lsp.index.store import BM25, DENSE, Bm25Encoder, keyword_field
from zettel_lsp.index.store_api import (
    CJK_FIELD,
    LANG_FIELD,
    PATH_FIELD,
    TEXT_FIELD,
    ChunkPayload,
    ChunkPoint,
    Hit,
    StoreError,
    as_payload,
    record_tuples,
)


def _path_filter(paths: Iterable[str] | None) -> m.Filter | None:
    if paths is None:
        return None
    return m.Filter(must=[m.FieldCondition(key=PATH_FIELD, match=m.MatchAny(any=list(paths)))])


class RemoteStore:
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dim: int,
        bm25_avg_len: float,
        *,
        location: str = "",
    ) -> None:
        self._client = client
        self.collection = collection
        self.dim = dim
        self._where = location or collection
        self._bm25 = Bm25Encoder(bm25_avg_len)
        self._lock = threading.Lock()
        try:
            if not client.collection_exists(collection):
                self._create(dim)
        except Exception as exc:
            raise StoreError(
                f"cannot reach the Qdrant server at {self._where}: {exc}. Check the qdrant_url "
                "setting (and qdrant_api_key), or leave qdrant_url empty to use the embedded index"
            ) from exc

    @classmethod
    def connect(
        cls, url: str, api_key: str | None, collection: str, dim: int, bm25_avg_len: float
    ) -> RemoteStore:
        client = (
            QdrantClient(location=url)
            if url == ":memory:"
            else QdrantClient(url=url, api_key=api_key)
        )
        return cls(client, collection, dim, bm25_avg_len, location=url)

    def _create(self, dim: int) -> None:
        self._client.create_collection(
            self.collection,
            vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
            sparse_vectors_config={BM25: m.SparseVectorParams(modifier=m.Modifier.IDF)},
        )
        for keyword in (PATH_FIELD, LANG_FIELD):
            self._client.create_payload_index(self.collection, keyword, m.PayloadSchemaType.KEYWORD)
        for name, tokenizer in (
            (TEXT_FIELD, m.TokenizerType.WORD),
            (CJK_FIELD, m.TokenizerType.MULTILINGUAL),
        ):
            self._client.create_payload_index(
                self.collection,
                name,
                m.TextIndexParams(
                    type=m.TextIndexType.TEXT,
                    tokenizer=tokenizer,
                    lowercase=True,
                    phrase_matching=True,
                ),
            )

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._lock:
            self._client.close()

    def flush(self) -> None:
        """Writes are acknowledged by the server (``wait=True``): nothing to do."""

    def set_bm25_avg_len(self, avg_len: float) -> None:
        self._bm25 = Bm25Encoder(avg_len)

    def reset_dense(self, dim: int) -> bool:
        with self._lock:
            if dim == self.dim:
                self._client.delete_vectors(
                    self.collection, vectors=[DENSE], points=m.FilterSelector(filter=m.Filter())
                )
                return True
            # A server cannot change a vector's size in place: start the collection again.
            self._client.delete_collection(self.collection)
            self._create(dim)
            self.dim = dim
            return False

    def ensure_vector(self, name: str, dim: int) -> bool:
        """A collection's named vectors are fixed when it is created: no second one here."""
        return False

    def drop_vector(self, name: str) -> None:
        """Nothing to drop (see :meth:`ensure_vector`)."""

    # ------------------------------------------------------------------ writes

    def upsert(self, points: Sequence[ChunkPoint]) -> None:
        structs = []
        for p in points:
            idx, val = self._bm25.document_pairs(p.bm25_text, p.payload.get("lang", "en"))
            vector: dict[str, Any] = {BM25: m.SparseVector(indices=idx, values=val)}
            if p.dense is not None:
                vector[DENSE] = [float(x) for x in p.dense]
            structs.append(m.PointStruct(id=p.id, vector=vector, payload=dict(p.payload)))
        if structs:
            with self._lock:
                self._client.upsert(self.collection, points=structs, wait=True)

    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = DENSE
    ) -> None:
        if not ids:
            return
        batch = [
            m.PointVectors(id=i, vector={using: [float(x) for x in v]})
            for i, v in zip(ids, vectors, strict=True)
        ]
        with self._lock:
            self._client.update_vectors(self.collection, points=batch, wait=True)

    def delete_paths(self, paths: Iterable[str]) -> None:
        values = list(paths)
        if values:
            with self._lock:
                self._client.delete(
                    self.collection,
                    points_selector=m.FilterSelector(
                        filter=m.Filter(
                            must=[m.FieldCondition(key=PATH_FIELD, match=m.MatchAny(any=values))]
                        )
                    ),
                    wait=True,
                )

    # ------------------------------------------------------------------ reads

    def dense_search(
        self,
        vector: Sequence[float],
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        using: str = DENSE,
        skip_lang: str | None = None,
        only_lang: str | None = None,
    ) -> list[Hit]:
        flt = _path_filter(paths)
        if skip_lang is not None or only_lang is not None:
            must: list[Any] = list(flt.must or []) if flt is not None else []
            if only_lang is not None:
                must.append(m.FieldCondition(key=LANG_FIELD, match=m.MatchValue(value=only_lang)))
            flt = m.Filter(
                must=must or None,
                must_not=[m.FieldCondition(key=LANG_FIELD, match=m.MatchValue(value=skip_lang))]
                if skip_lang is not None
                else None,
            )
        with self._lock:
            res = self._client.query_points(
                self.collection,
                query=[float(x) for x in vector],
                using=using,
                limit=limit,
                query_filter=flt,
                with_payload=True,
            )
        return [Hit(int(p.id), float(p.score), as_payload(p.payload)) for p in res.points]

    def dense_search_many(self, vectors: Sequence[Sequence[float]], limit: int) -> list[list[Hit]]:
        return [self.dense_search(v, limit) for v in vectors]

    def bm25_search(
        self,
        text: str,
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        langs: Sequence[str] = ("en",),
    ) -> list[Hit]:
        idx, val = self._bm25.query_pairs(text, langs)
        if not idx:
            return []
        with self._lock:
            res = self._client.query_points(
                self.collection,
                query=m.SparseVector(indices=idx, values=val),
                using=BM25,
                limit=limit,
                query_filter=_path_filter(paths),
                with_payload=True,
            )
        return [Hit(int(p.id), float(p.score), as_payload(p.payload)) for p in res.points]

    def keyword_search(
        self, text: str, limit: int, *, phrase: bool = False, langs: Sequence[str] = ("en",)
    ) -> list[Hit]:
        match: Any = m.MatchPhrase(phrase=text) if phrase else m.MatchText(text=text)
        flt = m.Filter(must=[m.FieldCondition(key=keyword_field(text), match=match)])
        idx, val = self._bm25.query_pairs(text, langs)
        with self._lock:
            if idx:
                res = self._client.query_points(
                    self.collection,
                    query=m.SparseVector(indices=idx, values=val),
                    using=BM25,
                    limit=limit,
                    query_filter=flt,
                    with_payload=True,
                )
                return [Hit(int(p.id), float(p.score), as_payload(p.payload)) for p in res.points]
            records, _ = self._client.scroll(
                self.collection, scroll_filter=flt, limit=limit, with_payload=True
            )
        return [Hit(int(r.id), 0.0, as_payload(r.payload)) for r in records]

    def keyword_count(self, text: str, *, phrase: bool = False) -> int:
        """How many points hold every word of ``text`` (or the phrase): see EdgeStore."""
        match: Any = m.MatchPhrase(phrase=text) if phrase else m.MatchText(text=text)
        flt = m.Filter(must=[m.FieldCondition(key=keyword_field(text), match=match)])
        with self._lock:
            return int(self._client.count(self.collection, count_filter=flt, exact=True).count)

    def retrieve(
        self, ids: Sequence[int], *, with_dense: bool = False, using: str = DENSE
    ) -> list[tuple[int, ChunkPayload, Any]]:
        if not ids:
            return []
        with self._lock:
            records = self._client.retrieve(
                self.collection,
                list(ids),
                with_payload=True,
                with_vectors=[using] if with_dense else False,
            )
        return record_tuples(records, using if with_dense else None)

    def count(self, path: str | None = None) -> int:
        flt = _path_filter([path]) if path is not None else None
        with self._lock:
            return int(self._client.count(self.collection, count_filter=flt, exact=True).count)

    def paths(self) -> dict[str, int]:
        limit = max(16, self.count() + 1)
        with self._lock:
            res = self._client.facet(self.collection, key=PATH_FIELD, limit=limit, exact=True)
        return {str(h.value): int(h.count) for h in res.hits}
