"""What a vector store offers the indexer and search: the embedded Edge shard (``store.py``) and a
Qdrant server collection (``remote_store.py``) both provide this, with the same schema."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class IndexLockedError(RuntimeError):
    """Another process has this index open (Edge allows one open shard per folder)."""


class StoreError(RuntimeError):
    """The store could not be opened or used; the message carries the location and the fix."""


@dataclass(frozen=True, slots=True)
class ChunkPoint:
    id: int
    payload: dict[str, Any]
    bm25_text: str  # what BM25 indexes (title/heading prefix + visible text)
    dense: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    id: int
    score: float
    payload: dict[str, Any]

    @property
    def path(self) -> str:
        return str(self.payload.get("path", ""))


def record_tuples(
    records: Iterable[Any], dense: str | None
) -> list[tuple[int, dict[str, Any], Any]]:
    """(id, payload, vector named ``dense`` or None) from either client's records."""
    out = []
    for r in records:
        vec = r.vector.get(dense) if dense and isinstance(r.vector, dict) else None
        out.append((int(r.id), dict(r.payload or {}), vec))
    return out


class VectorStore(Protocol):
    dim: int

    def close(self) -> None: ...
    def flush(self) -> None: ...
    def set_bm25_avg_len(self, avg_len: float) -> None: ...
    def reset_dense(self, dim: int) -> bool:
        """Drop all dense vectors (new model). True if points and BM25 vectors were kept."""
        ...

    def upsert(self, points: Sequence[ChunkPoint]) -> None: ...
    def set_dense(self, ids: Sequence[int], vectors: Sequence[Sequence[float]]) -> None: ...
    def delete_paths(self, paths: Iterable[str]) -> None: ...
    def dense_search(
        self, vector: Sequence[float], limit: int, paths: Iterable[str] | None = None
    ) -> list[Hit]: ...
    def bm25_search(
        self, text: str, limit: int, paths: Iterable[str] | None = None
    ) -> list[Hit]: ...
    def keyword_search(self, text: str, limit: int, *, phrase: bool = False) -> list[Hit]: ...
    def retrieve(
        self, ids: Sequence[int], *, with_dense: bool = False
    ) -> list[tuple[int, dict[str, Any], Any]]: ...
    def count(self, path: str | None = None) -> int: ...
    def paths(self) -> dict[str, int]: ...
