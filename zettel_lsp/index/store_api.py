"""What a vector store offers the indexer and search: the embedded Edge shard (``store.py``) and a
Qdrant server collection (``remote_store.py``) both provide this, with the same schema."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NotRequired, Protocol, TypedDict, cast

from zettel_lsp.notes.language import HAS_CJK, SEGMENTED

if TYPE_CHECKING:
    from zettel_lsp.index.chunker import Chunk


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


def record_tuples(records: Iterable[Any], dense: str | None) -> list[tuple[int, ChunkPayload, Any]]:
    """(id, payload, vector named ``dense`` or None) from either client's records."""
    out = []
    for r in records:
        vec = r.vector.get(dense) if dense and isinstance(r.vector, dict) else None
        out.append((int(r.id), as_payload(r.payload), vec))
    return out


class VectorStore(Protocol):
    dim: int

    def close(self) -> None: ...
    def flush(self) -> None: ...
    def set_bm25_avg_len(self, avg_len: float) -> None: ...
    def reset_dense(self, dim: int) -> bool:
        """Drop all dense vectors (new model). True if points and BM25 vectors were kept."""
        ...

    def ensure_vector(self, name: str, dim: int) -> bool:
        """Have a second dense vector ``name`` (the multilingual one). False: this store
        cannot add one (then the multilingual leg stays off)."""
        ...

    def drop_vector(self, name: str) -> None: ...
    def upsert(self, points: Sequence[ChunkPoint]) -> None: ...
    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = ...
    ) -> None: ...
    def delete_paths(self, paths: Iterable[str]) -> None: ...
    def delete_ids(self, ids: Sequence[int]) -> None: ...
    def dense_search(
        self,
        vector: Sequence[float],
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        using: str = ...,
        skip_lang: str | None = None,
        only_lang: str | None = None,
    ) -> list[Hit]: ...
    def dense_search_many(self, vectors: Sequence[Sequence[float]], limit: int) -> list[list[Hit]]:
        """One :meth:`dense_search` per vector, in order (one planned batch where the store
        has one)."""
        ...

    def warm(
        self,
        ids: Iterable[int],
        dim: int,
        *,
        using: str = ...,
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """Search these points' dense vectors ``using`` once where the store reads them on
        demand, so the first searches of a session do not wait for it. Returns points
        searched."""
        ...

    def bm25_search(
        self,
        text: str,
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        langs: Sequence[str] = ...,
    ) -> list[Hit]: ...
    def keyword_search(
        self, text: str, limit: int, *, phrase: bool = False, langs: Sequence[str] = ...
    ) -> list[Hit]:
        """The :meth:`keyword_count` points (every word of ``text`` in their stored text, or
        the phrase), best BM25 first, the ones BM25 gives nothing after them (score 0)."""
        ...

    def keyword_count(self, text: str, *, phrase: bool = False) -> int: ...
    def retrieve(
        self, ids: Sequence[int], *, with_dense: bool = False, using: str = ...
    ) -> list[tuple[int, ChunkPayload, Any]]: ...
    def count(self, path: str | None = None) -> int: ...
    def paths(self) -> dict[str, int]: ...
