"""The embedded vector store: one Qdrant Edge shard per vault. The only module importing
``qdrant_edge`` (a beta API, pinned): a version bump touches this file alone.

Each chunk is a point with a dense vector ``dense`` (cosine; absent until embedded), a second one
``dense_ml`` for the multilingual model (created when that model is first used; absent where the
card is not in its scope), a sparse vector ``bm25`` (Edge's own BM25 embedder: stemming and
stopwords in the chunk's language, see :class:`Bm25Encoder`; IDF applied by the shard), and its
payload (``store_api.ChunkPayload``, which names the indexed fields). The ``cjk`` field's
full-text index uses Edge's multilingual tokenizer, which segments words where no spaces
separate them (on ``text`` it would change English: numbers like ``2023`` stop being words,
``naive`` finds ``naïve``). Search calls hold the GIL inside Edge, so writers use small batches.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any
from uuid import UUID

import qdrant_edge
from qdrant_edge import (
    Bm25,
    Bm25Config,
    CountRequest,
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    FacetRequest,
    Filter,
    HasIdCondition,
    HasVectorCondition,
    KeywordIndexParams,
    Memory,
    Modifier,
    Point,
    PointVectors,
    QuantizationSearchParams,
    Query,
    QueryBatchRequest,
    QueryRequest,
    ScalarQuantizationConfig,
    ScalarType,
    ScrollRequest,
    SearchParams,
    SparseVector,
    TextIndexParams,
    TokenizerType,
    UpdateOperation,
)

from zettel_lsp.index.folder_lock import holder_pid
from zettel_lsp.index.store_api import BM25 as BM25
from zettel_lsp.index.store_api import (
    CJK_FIELD,
    LANG_FIELD,
    PATH_FIELD,
    TEXT_FIELD,
    ChunkPoint,
    Hit,
    IndexLockedError,
    StoreError,
    VectorStore,
    Where,
    as_hits,
    point_filter,
)
from zettel_lsp.index.store_api import DENSE as DENSE
from zettel_lsp.index.store_api import DENSE_ML as DENSE_ML
from zettel_lsp.notes.language import EN

log = logging.getLogger(__name__)

SHARD_DIR = "shard"
# Dense search is exact up to this many points, then uses the HNSW graph that compaction builds,
# with this beam (index/compact.py)
EXACT_DENSE_POINTS = 100_000
HNSW_EF = 256

# Where the shard keeps what it holds: dense vectors, the BM25 inverted index and the payload
# indexes are memory-mapped files read on demand (``Memory.Cold``), not loaded into memory when
# the shard opens. Past EXACT_DENSE_POINTS, dense search walks the HNSW graph over an int8 copy
# of the dense vectors kept in memory (``Memory.Pinned``) and rescores twice the asked number of
# candidates on the originals; below it, search is exact on the originals. Declared through
# Edge's configuration when the shard is created; a vector added later gets Edge's default
# placement until the next compaction declares it (:meth:`EdgeStore.load_for_compaction`).
# STORE_LAYOUT numbers this layout: a shard whose index state records an older one is due for
# a compaction (index/compact.py).
STORE_LAYOUT = 3
_COLD = Memory.Cold
_INT8 = ScalarQuantizationConfig(type=ScalarType.Int8, quantile=0.99, memory=Memory.Pinned)
_RESCORED = QuantizationSearchParams(rescore=True, oversampling=2.0)
_ORIGINALS = QuantizationSearchParams(ignore=True)
# Points per warming query (EdgeStore.warm): a query holds the interpreter lock, so requests
# that arrive meanwhile wait for one slice at most.
WARM_SLICE = 2048


def _dense_params(dim: int, *, int8: bool = True) -> EdgeVectorParams:
    """A dense vector's placement: cold originals, and (``int8``) the int8 copy its HNSW graph
    is searched on. The multilingual vector has none: it exists in an English vault as soon as
    one query was not English, where a pinned copy would cost memory for nothing."""
    int8_copy = _INT8 if int8 else None
    return EdgeVectorParams(
        size=dim, distance=Distance.Cosine, memory=_COLD, quantization_config=int8_copy
    )


def _bm25_params() -> EdgeSparseVectorParams:
    return EdgeSparseVectorParams(modifier=Modifier.Idf, memory=_COLD)


def _field_params(name: str) -> KeywordIndexParams | TextIndexParams:
    if name in (PATH_FIELD, LANG_FIELD):
        return KeywordIndexParams(memory=_COLD)
    tokenizer = TokenizerType.Multilingual if name == CJK_FIELD else TokenizerType.Word
    return TextIndexParams(tokenizer=tokenizer, lowercase=True, phrase_matching=True, memory=_COLD)


_FIELDS = (PATH_FIELD, LANG_FIELD, TEXT_FIELD, CJK_FIELD)

# Snowball stemmers (and stopwords) of Edge's BM25, by language code (notes/language.py)
SNOWBALL: dict[str, str] = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
    "da": "danish",
    "ru": "russian",
    "el": "greek",
    "ar": "arabic",
}
# languages written without spaces: Edge's multilingual tokenizer segments them (with the
# language's stopwords where Edge has a list)
SEGMENTED_STOPWORDS: dict[str, str | None] = {
    "zh": "chinese",
    "ja": "japanese",
    "ko": None,
    "th": None,
}


def bm25_config(lang: str, avg_len: float) -> Bm25Config:
    """Edge's BM25 for text in ``lang``: a Snowball language (English included) stemmed in that
    language; Chinese, Japanese, Korean and Thai segmented into words; any other language split
    at spaces, neither stemmed nor stopped."""
    avg = max(1.0, float(avg_len))
    if lang in SNOWBALL:
        return Bm25Config(language=SNOWBALL[lang], avg_len=avg)
    if lang in SEGMENTED_STOPWORDS:
        return Bm25Config(
            language=SEGMENTED_STOPWORDS[lang], tokenizer=TokenizerType.Multilingual, avg_len=avg
        )
    return Bm25Config(language=None, avg_len=avg)


class Bm25Encoder:
    """Edge's BM25 as sparse vectors, in the text's language (a chunk's ``lang``; English
    unless told). A query is read in each of the given languages and the terms are united, so
    one query meets cards stemmed in any language of the vault. Also used by the remote store,
    so both index the same terms."""

    def __init__(self, avg_len: float) -> None:
        self._avg_len = avg_len
        self._by_lang: dict[str, Bm25] = {}

    def _model(self, lang: str) -> Bm25:
        model = self._by_lang.get(lang)
        if model is None:
            model = self._by_lang[lang] = Bm25(bm25_config(lang, self._avg_len))
        return model

    def document(self, text: str, lang: str = EN) -> Any:
        return self._model(lang).embed_document(text)

    def query(self, text: str, langs: Sequence[str] = (EN,)) -> Any:
        if len(langs) <= 1:
            return self._model(langs[0] if langs else EN).embed_query(text)
        terms: dict[int, float] = {}
        for lang in dict.fromkeys(langs):
            sv = self._model(lang).embed_query(text)
            for i, v in zip(sv.indices, sv.values, strict=True):
                terms[int(i)] = max(terms.get(int(i), 0.0), float(v))
        return SparseVector(indices=list(terms), values=list(terms.values()))


def _filter(where: Where) -> Any:
    """``where`` as an Edge ``Filter`` (None: all points)."""
    return point_filter(where, qdrant_edge, lambda ids: HasIdCondition(set(ids)))


def _vector_sizes(shard: EdgeShard) -> dict[str, int]:
    """The size of each dense vector of this module's (``dense``, ``dense_ml``) that some
    point of ``shard`` holds, from one such point."""
    sizes: dict[str, int] = {}
    for name in (DENSE, DENSE_ML):
        flt = Filter(must=[HasVectorCondition(name)])
        records, _ = shard.scroll(ScrollRequest(limit=1, filter=flt, with_vector=[name]))
        for r in records:
            vector = r.vector.get(name) if isinstance(r.vector, dict) else None
            if isinstance(vector, list):
                sizes[name] = len(vector)
    return sizes


def _optimize_in_child(path: Path, should_stop: Callable[[], bool]) -> bool:
    """:meth:`EdgeStore.optimize_folder` of the closed shard ``path`` in a child process;
    ``should_stop`` (asked every 0.2 s) ends it. True when it finished; :class:`StoreError`
    when it failed."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "zettel_lsp.index.compact", "--shard", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while True:
            if should_stop():
                return False
            try:
                _, err = proc.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise StoreError(f"compacting {path} failed: {' | '.join(tail)}")
    return True


class EdgeStore(VectorStore):
    """One open shard. Thread-safe for use from a writer thread and reader threads."""

    def __init__(self, folder: Path, dim: int, bm25_avg_len: float) -> None:
        self.folder = folder
        self.dim = dim
        self._bm25 = Bm25Encoder(bm25_avg_len)
        self._write_lock = threading.Lock()
        shard_dir = folder / SHARD_DIR
        # whether this opening created the shard (in STORE_LAYOUT)
        self.created = not ((shard_dir / "wal").exists() or (shard_dir / "segments").exists())
        self._shard = self._open(shard_dir, dim)
        # points so far (upserts add to it, never minus deletes: a bound for _dense_params)
        self._points = int(self._shard.info().points_count)

    # ------------------------------------------------------------------ lifecycle

    @staticmethod
    def _open(path: Path, dim: int) -> EdgeShard:
        loaded = (path / "wal").exists() or (path / "segments").exists()
        try:
            if loaded:
                shard = EdgeShard.load(str(path))
            else:
                path.mkdir(parents=True, exist_ok=True)
                shard = EdgeShard.create(
                    str(path),
                    EdgeConfig(
                        vectors={DENSE: _dense_params(dim)}, sparse_vectors={BM25: _bm25_params()}
                    ),
                )
            # also on load: a process killed right after creating the shard leaves it without
            # its payload indexes
            EdgeStore._index_fields(shard)
            return shard
        except Exception as exc:
            text = str(exc)
            if "WouldBlock" in text or "Resource temporarily unavailable" in text:
                pid = holder_pid(path.parent)
                who = f" (pid {pid})" if pid is not None else ""
                raise IndexLockedError(
                    f"index folder {path.parent} is in use by another zettel-lsp{who}; "
                    "close the other editor window or pass a different --index-dir"
                ) from exc
            raise StoreError(
                f"cannot open the index in {path}: {text}. The index can always be rebuilt: "
                f"delete {path.parent} and run zettel-lsp index again"
            ) from exc

    @staticmethod
    def _index_fields(shard: EdgeShard, *, cold: bool = False) -> None:
        """Create the payload indexes the shard lacks; with ``cold``, also build again the
        ones not kept cold (:data:`STORE_LAYOUT`)."""
        schema = shard.info().payload_schema
        for name in _FIELDS:
            info = schema.get(name)
            if info is not None and (not cold or getattr(info.params, "memory", None) == _COLD):
                continue
            if info is not None:
                shard.update(UpdateOperation.delete_field_index(name))
            shard.update(UpdateOperation.create_field_index(name, _field_params(name)))

    @staticmethod
    def load_for_compaction(path: Path) -> EdgeShard:
        """The shard at ``path`` (its ``shard`` folder) with its dense vectors and payload
        indexes declared as :data:`STORE_LAYOUT` says, for the optimizer to rewrite; takes no
        lock itself. Edge takes a configuration only with every vector the shard has: their
        sizes are read from a point holding each. A vector no point holds keeps its placement,
        and so does every vector when Edge refuses the configuration."""
        shard = EdgeShard.load(str(path))
        sizes = _vector_sizes(shard)
        if sizes:
            shard.close()
            vectors = {n: _dense_params(d, int8=n == DENSE) for n, d in sizes.items()}
            config = EdgeConfig(vectors=vectors, sparse_vectors={BM25: _bm25_params()})
            try:
                shard = EdgeShard.load(str(path), config)
            except Exception as exc:  # noqa: BLE001 - Edge's error types are not exported
                log.info("vectors keep their placement (%s)", exc)
                shard = EdgeShard.load(str(path))
        EdgeStore._index_fields(shard, cold=True)
        return shard

    @classmethod
    def optimize_folder(cls, path: Path) -> bool:
        """Optimize the closed shard folder ``path`` (:meth:`load_for_compaction`, then Edge's
        optimizer), as every compaction does; the caller holds the index folder's lock.
        Returns whether segments were rewritten."""
        shard = cls.load_for_compaction(path)
        try:
            changed = bool(shard.optimize())
            shard.flush()
        finally:
            shard.close()
        return changed

    def compact_in_place(self) -> bool:
        """:meth:`optimize_folder` of this shard, closed meanwhile, in this process: it holds the
        interpreter lock for the optimizer's whole run, so only for a caller no one waits on
        (``zettel-lsp index``). Returns whether the optimizer rewrote segments."""
        return self._closed_while(self.optimize_folder)

    def compact_in_child(self, should_stop: Callable[[], bool] = lambda: False) -> bool:
        """:meth:`compact_in_place` with the optimizer in a niced child process, so this
        process's interpreter lock stays free (the language server). The caller keeps every
        reader away meanwhile. ``should_stop`` stops the child: an optimization stopped midway
        loses nothing. Returns whether the child finished; the shard is open again either way."""
        return self._closed_while(lambda path: _optimize_in_child(path, should_stop))

    def _closed_while(self, run: Callable[[Path], bool]) -> bool:
        """``run(shard folder)`` with this shard flushed and closed, opened again after."""
        path = self.folder / SHARD_DIR
        with self._write_lock:
            self._shard.flush()
            self._shard.close()
            try:
                return run(path)
            finally:
                self._shard = self._open(path, self.dim)
                self._points = int(self._shard.info().points_count)

    def close(self) -> None:
        with self._write_lock:
            with contextlib.suppress(Exception):
                self._shard.flush()
            self._shard.close()

    def flush(self) -> None:
        with self._write_lock:
            self._shard.flush()

    @staticmethod
    def destroy(folder: Path) -> None:
        """Delete a (closed) index folder's shard."""
        shutil.rmtree(folder / SHARD_DIR, ignore_errors=True)

    # ------------------------------------------------------------------ writes

    def _update(self, *ops: Any) -> None:
        with self._write_lock:
            for op in ops:
                self._shard.update(op)

    def reset_dense(self, dim: int) -> bool:
        """Drop every dense vector and recreate the vector with ``dim`` (the model changed).
        BM25 vectors and payloads stay: lexical search keeps working meanwhile."""
        self._update(
            UpdateOperation.delete_vector_name(DENSE),
            UpdateOperation.create_dense_vector(DENSE, dim, Distance.Cosine),
        )
        self.dim = dim
        return True

    def ensure_vector(self, name: str, dim: int) -> bool:
        self._update(UpdateOperation.create_dense_vector(name, dim, Distance.Cosine))
        return True

    def drop_vector(self, name: str) -> None:
        self._update(UpdateOperation.delete_vector_name(name))

    def upsert(self, points: Sequence[ChunkPoint]) -> None:
        if points:
            batch = [
                Point(id=p.id, vector=self._vectors(p), payload=dict(p.payload)) for p in points
            ]
            with self._write_lock:
                self._shard.update(UpdateOperation.upsert_points(batch))
                self._points += len(batch)

    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = DENSE
    ) -> None:
        if ids:
            batch = [
                PointVectors(id=i, vector={using: list(map(float, v))})
                for i, v in zip(ids, vectors, strict=True)
            ]
            self._update(UpdateOperation.update_vectors(batch))

    def delete_paths(self, paths: Iterable[str]) -> None:
        values = list(paths)
        if values:
            self._update(UpdateOperation.delete_points_by_filter(_filter(Where(values))))

    def delete_ids(self, ids: Sequence[int]) -> None:
        """Delete these points. A point to be replaced is better overwritten by an upsert of
        its id than deleted first: the shard's BM25 counts deleted points in its document
        frequencies until it is reloaded (see :meth:`LexicalPass.write`)."""
        if ids:
            self._update(UpdateOperation.delete_points(list(ids)))

    # ------------------------------------------------------------------ reads

    def _dense_params(self) -> SearchParams:
        """Exact dense search while the shard is small enough for it to be fast, so that a
        compacted shard (whose segments have HNSW graphs) gives the answers of the uncompacted
        one; past :data:`EXACT_DENSE_POINTS`, the HNSW graph with a wide beam over the int8
        copy, rescored on the originals."""
        if self._points <= EXACT_DENSE_POINTS:
            return SearchParams(exact=True, quantization=_ORIGINALS)
        return SearchParams(hnsw_ef=HNSW_EF, quantization=_RESCORED)

    def dense_search_many(self, vectors: Sequence[Sequence[float]], limit: int) -> list[list[Hit]]:
        """One dense search per vector as one batch (a single pass over the segments; the
        related-card legs query every passage of a card)."""
        if not vectors:
            return []
        reqs = [self._request(list(map(float, v)), DENSE, limit, Where()) for v in vectors]
        return [as_hits(points) for points in self._shard.query_batch(QueryBatchRequest(reqs))]

    def warm(
        self,
        ids: Iterable[int],
        dim: int,
        *,
        using: str = DENSE,
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """One exact search per slice of :data:`WARM_SLICE` ids (a query holds the interpreter
        lock, so other requests wait one slice at most). Nothing to do where dense search walks
        the HNSW graph over the int8 copy (``dense`` past :data:`EXACT_DENSE_POINTS`): it reads
        the originals of the few candidates it rescores only."""
        if using == DENSE and self._points > EXACT_DENSE_POINTS:
            return 0
        probe = [1.0] * dim
        done = 0
        it = iter(ids)
        while part := set[int | UUID | str](islice(it, WARM_SLICE)):
            if should_stop is not None and should_stop():
                break
            req = QueryRequest(
                limit=1,
                query=Query.Nearest(probe, using=using),
                filter=Filter(must=[HasIdCondition(part)]),
                with_payload=False,
                params=SearchParams(exact=True, quantization=_ORIGINALS),
            )
            self._shard.query(req)
            done += len(part)
        return done

    def _nearest(self, vector: Any, using: str, limit: int, where: Where) -> list[Hit]:
        return as_hits(self._shard.query(self._request(vector, using, limit, where)))

    def _request(self, vector: Any, using: str, limit: int, where: Where) -> QueryRequest:
        return QueryRequest(
            limit=limit,
            query=Query.Nearest(vector, using=using),
            filter=_filter(where),
            with_payload=True,
            params=None if using == BM25 else self._dense_params(),
        )

    def _scroll(self, where: Where, limit: int) -> list[Hit]:
        req = ScrollRequest(limit=limit, filter=_filter(where), with_payload=True)
        records, _ = self._shard.scroll(req)
        return as_hits(records, scored=False)

    def _count(self, where: Where) -> int:
        return int(self._shard.count(CountRequest(exact=True, filter=_filter(where))))

    def _facet(self, limit: int) -> Any:
        return self._shard.facet(FacetRequest(key=PATH_FIELD, limit=limit, exact=True)).hits

    def _retrieve(self, ids: Sequence[int], vectors: list[str] | bool) -> Any:
        return self._shard.retrieve(list(ids), with_payload=True, with_vector=vectors)
