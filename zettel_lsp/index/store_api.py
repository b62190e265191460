"""What a vector store offers the indexer and search: the embedded Edge shard (``store.py``) and a
Qdrant server collection (``remote_store.py``) both provide this, with the same schema."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, NotRequired, TypedDict, cast

from zettel_lsp.notes.language import EN, HAS_CJK, SEGMENTED

if TYPE_CHECKING:
    from zettel_lsp.index.chunker import Chunk
    from zettel_lsp.index.store import Bm25Encoder


class ChunkPayload(TypedDict):
    """The payload of one chunk's point: written by the indexer (:func:`chunk_payload`), read by
    search, the server, ``llm/`` and ``index/verify.py``. A point keeps its payload until its card
    is indexed again, so readers take values with ``.get`` and a default."""

    path: str  # the card, vault-relative with "/" (keyword index: PATH_FIELD)
    title: str  # the card's title
    chunk: int  # the chunk's index in the card (0: the first)
    heading: str  # the heading path, " > "-joined ("" before the first heading)
    line_start: int  # zero-based, inclusive
    line_end: int  # zero-based, inclusive
    text: str  # the card's own lines (excerpts; full-text index: TEXT_FIELD)
    # text_hash() of the embedded text, to reuse a vector while that text is unchanged; absent
    # from the chunks search/fallback.py makes from cards (no index, no vector)
    embed_hash: NotRequired[str]
    # the card's language (ISO 639-1, notes/language.py; keyword index: LANG_FIELD): its BM25
    # stemmer, and whether the multilingual leg of an English query looks at it
    lang: NotRequired[str]
    # the text again, for chunks of Chinese, Japanese or Korean cards: full-text index with the
    # multilingual tokenizer (CJK_FIELD), which segments words without spaces between them
    cjk: NotRequired[str]


DENSE: Final = "dense"  # the dense vector (cosine) of the index's model
DENSE_ML: Final = "dense_ml"  # the multilingual model's dense vector (issue #17)
BM25: Final = "bm25"  # the sparse BM25 vector (IDF applied by the store)
PATH_FIELD: Final = "path"  # ChunkPayload key with a keyword index: path filters, deletes, facet
TEXT_FIELD: Final = "text"  # ChunkPayload key with a full-text index (phrases): the keyword leg
LANG_FIELD: Final = "lang"  # ChunkPayload key with a keyword index: the chunk's language
CJK_FIELD: Final = "cjk"  # ChunkPayload key with a multilingual full-text index (CJK chunks)


def point_id(path: str, index: int) -> int:
    """A stable unsigned 64-bit id per (card path, chunk index)."""
    digest = hashlib.blake2b(f"{path}\0{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def text_hash(text: str) -> str:
    """The hash stored with each chunk (``embed_hash``) to recognise the text it embedded."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def chunk_payload(path: str, title: str, chunk: Chunk, lang: str = "en") -> ChunkPayload:
    """The payload the indexer stores for ``chunk`` of the card ``path`` titled ``title``,
    written in ``lang``."""
    payload: ChunkPayload = {
        "path": path,
        "title": title,
        "chunk": chunk.index,
        "heading": " > ".join(chunk.heading_path),
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "text": chunk.text,
        "embed_hash": text_hash(chunk.embed_text),
        "lang": lang,
    }
    # only for cards written in such a language: its tokenizer's dictionaries take ~50 MB once
    # used, which one stray character in an English card should not cost
    if lang in SEGMENTED and HAS_CJK.search(chunk.text):
        payload["cjk"] = chunk.text
    return payload


def as_payload(raw: Mapping[str, Any] | None) -> ChunkPayload:
    """A payload as a store client returns it (untyped), copied, as a :class:`ChunkPayload`."""
    return cast(ChunkPayload, dict(raw or {}))


class IndexLockedError(RuntimeError):
    """Another process has this index open (Edge allows one open shard per folder)."""


class StoreError(RuntimeError):
    """The store could not be opened or used; the message carries the location and the fix."""


@dataclass(frozen=True, slots=True)
class ChunkPoint:
    id: int
    payload: ChunkPayload
    bm25_text: str  # what BM25 indexes (title/heading prefix + visible text)
    dense: Sequence[float] | None = None
    dense_ml: Sequence[float] | None = None  # the multilingual model's vector


@dataclass(frozen=True, slots=True)
class Hit:
    id: int
    score: float
    payload: ChunkPayload

    @property
    def path(self) -> str:
        return str(self.payload.get(PATH_FIELD, ""))


@dataclass(frozen=True, slots=True)
class Where:
    """Which points a store call is about; :func:`point_filter` writes it as either client's
    filter."""

    paths: Sequence[str] | None = None  # None: any card
    only_lang: str | None = None
    skip_lang: str | None = None
    text: str | None = None  # every word of it (or the phrase) by the full-text index
    phrase: bool = False
    not_ids: Sequence[int] = ()


def point_filter(where: Where, models: Any, has_id: Callable[[list[Any]], Any]) -> Any:
    """``where`` as a ``Filter`` of ``models`` (``qdrant_edge`` or ``qdrant_client.models``:
    the same classes and keywords, but for ``has_id``, which makes a condition on ids); None
    for all points."""
    match: Any
    must: list[Any] = []
    must_not: list[Any] = []
    if where.paths is not None:
        paths = list(where.paths)
        match = models.MatchValue(value=paths[0]) if len(paths) == 1 else models.MatchAny(any=paths)
        must.append(models.FieldCondition(key=PATH_FIELD, match=match))
    if where.only_lang is not None:
        match = models.MatchValue(value=where.only_lang)
        must.append(models.FieldCondition(key=LANG_FIELD, match=match))
    if where.text is not None:
        text = where.text
        match = models.MatchPhrase(phrase=text) if where.phrase else models.MatchText(text=text)
        # only the cjk field's tokenizer finds Chinese, Japanese or Korean words
        key = CJK_FIELD if HAS_CJK.search(text) else TEXT_FIELD
        must.append(models.FieldCondition(key=key, match=match))
    if where.skip_lang is not None:
        match = models.MatchValue(value=where.skip_lang)
        must_not.append(models.FieldCondition(key=LANG_FIELD, match=match))
    if where.not_ids:
        must_not.append(has_id(list(where.not_ids)))
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)


def as_hits(points: Iterable[Any], *, scored: bool = True) -> list[Hit]:
    """Either client's points (scored, or not: score 0) as hits."""
    return [
        Hit(int(p.id), float(p.score) if scored else 0.0, as_payload(p.payload)) for p in points
    ]


class VectorStore(ABC):
    """A vector store. The searches are made here, the same way for both stores, from the few
    calls each store makes its own way (:meth:`_nearest`, :meth:`_scroll`, :meth:`_count`,
    :meth:`_facet`, :meth:`_retrieve`)."""

    dim: int
    _bm25: Bm25Encoder

    @abstractmethod
    def close(self) -> None: ...
    def flush(self) -> None:  # noqa: B027 - a server store has nothing to flush
        """Make every write durable (none to do where a write is acknowledged once stored)."""

    def set_bm25_avg_len(self, avg_len: float) -> None:
        """BM25 document weights depend on the mean document length: fix it per index."""
        from zettel_lsp.index.store import Bm25Encoder

        self._bm25 = Bm25Encoder(avg_len)

    @abstractmethod
    def reset_dense(self, dim: int) -> bool:
        """Drop all dense vectors (new model). True if points and BM25 vectors were kept."""

    def ensure_vector(self, name: str, dim: int) -> bool:
        """Have a second dense vector ``name`` (the multilingual one). False: this store
        cannot add one (then the multilingual leg stays off)."""
        return False

    def drop_vector(self, name: str) -> None:  # noqa: B027 - nothing where none is added
        """Delete the dense vector ``name`` and all its values (none where it cannot be
        added)."""

    @abstractmethod
    def upsert(self, points: Sequence[ChunkPoint]) -> None: ...

    def _vectors(self, p: ChunkPoint) -> dict[str, Any]:
        """The vectors of ``p`` by name: its BM25 sparse vector, and its dense ones."""
        vectors = {BM25: self._bm25.document(p.bm25_text, p.payload.get("lang", EN))}
        for name, values in ((DENSE, p.dense), (DENSE_ML, p.dense_ml)):
            if values is not None:
                vectors[name] = [float(x) for x in values]
        return vectors

    @abstractmethod
    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = DENSE
    ) -> None: ...
    @abstractmethod
    def delete_paths(self, paths: Iterable[str]) -> None: ...
    @abstractmethod
    def delete_ids(self, ids: Sequence[int]) -> None: ...

    def dense_search_many(self, vectors: Sequence[Sequence[float]], limit: int) -> list[list[Hit]]:
        """One :meth:`dense_search` per vector, in order (one planned batch where the store
        has one)."""
        return [self.dense_search(v, limit) for v in vectors]

    def warm(
        self,
        ids: Iterable[int],
        dim: int,
        *,
        using: str = DENSE,
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """Search these points' dense vectors ``using`` once where the store reads them on
        demand, so the first searches of a session do not wait for it; stops early when
        ``should_stop`` says so. Returns points searched (none where the store keeps its
        vectors where its own settings say)."""
        return 0

    def retrieve(
        self, ids: Sequence[int], *, with_dense: bool = False, using: str = DENSE
    ) -> list[tuple[int, ChunkPayload, Any]]:
        """(id, payload, dense vector ``using`` or None) for the ids that exist."""
        if not ids:
            return []
        out = []
        for r in self._retrieve(ids, [using] if with_dense else False):
            vec = r.vector.get(using) if with_dense and isinstance(r.vector, dict) else None
            out.append((int(r.id), as_payload(r.payload), vec))
        return out

    # ------------------------------------------------------------------ each store's calls

    @abstractmethod
    def _nearest(self, vector: Any, using: str, limit: int, where: Where) -> list[Hit]:
        """The ``limit`` points of ``where`` nearest ``vector`` (dense floats, or a
        :class:`~zettel_lsp.index.store.Bm25Encoder` sparse vector) by the vector ``using``."""

    @abstractmethod
    def _scroll(self, where: Where, limit: int) -> list[Hit]:
        """Up to ``limit`` points of ``where`` in id order, with score 0."""

    @abstractmethod
    def _count(self, where: Where) -> int:
        """How many points ``where`` holds (exactly)."""

    @abstractmethod
    def _facet(self, limit: int) -> Any:
        """The facet hits (``value``, ``count``) of :data:`PATH_FIELD`, at most ``limit``."""

    @abstractmethod
    def _retrieve(self, ids: Sequence[int], vectors: list[str] | bool) -> Iterable[Any]:
        """The records of ``ids`` that exist, with their payload and the named ``vectors``."""

    # ------------------------------------------------------------------ searches

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
        """The nearest chunks by the vector ``using``; with ``skip_lang``, only chunks in
        other languages; with ``only_lang``, only chunks in that one."""
        where = Where(None if paths is None else list(paths), only_lang, skip_lang)
        return self._nearest(list(map(float, vector)), using, limit, where)

    def bm25_search(
        self,
        text: str,
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        langs: Sequence[str] = (EN,),
    ) -> list[Hit]:
        """BM25 with the query read in each of ``langs`` (see
        :class:`~zettel_lsp.index.store.Bm25Encoder`)."""
        sparse = self._bm25.query(text, langs)
        if not len(sparse.indices):
            return []
        return self._nearest(sparse, BM25, limit, Where(None if paths is None else list(paths)))

    def keyword_search(
        self, text: str, limit: int, *, phrase: bool = False, langs: Sequence[str] = (EN,)
    ) -> list[Hit]:
        """The :meth:`keyword_count` points (every word of ``text`` in their stored text, or
        the phrase, by the full-text index: ``cjk`` for Chinese, Japanese and Korean queries),
        best BM25 first (over the embedded text); the matches BM25 gives nothing (the words are
        in the stored text only, e.g. a link's target shown under another name, or they are
        all stopwords) follow with score 0, in id order."""
        where = Where(text=text, phrase=phrase)
        sparse = self._bm25.query(text, langs)
        hits = self._nearest(sparse, BM25, limit, where) if len(sparse.indices) else []
        if len(hits) < limit:
            seen = replace(where, not_ids=[h.id for h in hits])
            hits += self._scroll(seen, limit - len(hits))
        return hits

    def keyword_count(self, text: str, *, phrase: bool = False) -> int:
        """How many points hold every word of ``text`` (or the phrase) by the full-text index:
        the candidates :meth:`keyword_search` ranks (its tokenizer, not a caller's, decides
        what a word is: ``woman_farmer`` holds ``woman``, ``doesn't`` holds ``doesn``)."""
        return self._count(Where(text=text, phrase=phrase))

    def count(self, path: str | None = None) -> int:
        return self._count(Where(None if path is None else [path]))

    def paths(self) -> dict[str, int]:
        """Every card path in the store with its number of points (at least one: the facet
        can still list a path whose points were all deleted)."""
        hits = self._facet(max(16, self.count() + 1))
        return {str(h.value): int(h.count) for h in hits if int(h.count) > 0}
