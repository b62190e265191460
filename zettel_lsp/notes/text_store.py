"""Card texts kept in a file instead of in memory (issue #18).

The link graph keeps every card for as long as the server runs, and its texts took 95 MB at
100k generated cards; what reads a card's text reads one card at a time (an outline, a rename,
an excerpt, a code action), or every card in one pass (the search for a title that came or
changed). So the graph snapshot (:mod:`zettel_lsp.snapshot`) writes the texts after its pickle
and the cards it restores keep a reference into that file: ``card.text`` reads the card's
bytes there (one ``pread``, a few microseconds) and :func:`texts_of` reads many in file order,
a block at a time. The page cache holds the file, not the server's heap.

A store's file is never written again once a store reads it: a new snapshot is a new file put
in place by a rename, and an open store keeps reading the one it opened. A reference is one
integer, ``offset << 32 | length`` in bytes of UTF-8.

Writing: pickle the cards inside :func:`writing`, whose :class:`TextSink` takes each card's
text as the card is pickled (:meth:`Card.__reduce__ <zettel_lsp.notes.model.Card.__reduce__>`)
and gives back the reference the pickle holds. Reading: unpickle inside :func:`reading`, which
hands the store to every card restored meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from zettel_lsp.notes.model import Card

_LENGTH_BITS = 32
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
# texts_of reads this much at a time (texts written one after another share a read)
BLOCK_BYTES = 1 << 20
_ENCODING = ("utf-8", "surrogatepass")  # decoded notes may hold lone surrogates


class TextStoreError(OSError):
    """A store's file no longer holds what a card refers to (truncated under the server)."""


class TextStore:
    """Texts read from ``path`` at ``base`` + a reference's offset; the file stays open as
    long as a card refers to the store."""

    __slots__ = ("__weakref__", "_fd", "base", "path")

    def __init__(self, path: Path, base: int) -> None:
        self.path = path
        self.base = base
        self._fd = os.open(path, os.O_RDONLY)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
            self._fd = -1

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a TextStore is not pickled: its cards write their texts instead")

    def _pread(self, size: int, offset: int) -> bytes:
        data = os.pread(self._fd, size, self.base + offset)
        if len(data) != size:
            raise TextStoreError(
                f"{self.path}: {size} bytes expected at {self.base + offset}, {len(data)} read"
            )
        return data

    def read(self, ref: int) -> str:
        return self.read_bytes(ref).decode(*_ENCODING)

    def read_bytes(self, ref: int) -> bytes:
        return self._pread(ref & _LENGTH_MASK, ref >> _LENGTH_BITS)

    def read_sorted(self, refs: Iterable[int]) -> Iterator[tuple[int, str]]:
        """``(ref, text)`` for each of ``refs``, in file order: a block read serves every text
        that lies in it."""
        for ref, data in self.read_sorted_bytes(refs):
            yield ref, data.decode(*_ENCODING)

    def read_sorted_bytes(self, refs: Iterable[int]) -> Iterator[tuple[int, bytes]]:
        """:meth:`read_sorted`, the bytes as stored."""
        block, start = b"", 0
        for ref in sorted(refs):
            at, size = ref >> _LENGTH_BITS, ref & _LENGTH_MASK
            if at < start or at + size > start + len(block):
                start = at
                block = self._pread(size, at) if size > BLOCK_BYTES else self._read_block(at)
                if len(block) < size:
                    raise TextStoreError(f"{self.path}: text at {self.base + at} cut short")
            yield ref, block[at - start : at - start + size]

    def _read_block(self, at: int) -> bytes:
        return os.pread(self._fd, BLOCK_BYTES, self.base + at)


def texts_of(cards: Iterable[Card]) -> Iterator[tuple[Card, str]]:
    """``(card, card.text)`` for every card: first those whose text is in memory, then those
    of each store in file order (read by blocks, not one ``pread`` per card)."""
    stored: dict[TextStore, list[tuple[int, Card]]] = {}
    for card in cards:
        where = card.text_ref()
        if where is None:
            yield card, card.text
        else:
            stored.setdefault(where[0], []).append((where[1], card))
    for store, refs in stored.items():
        by_ref: dict[int, list[Card]] = {}
        for ref, card in refs:
            by_ref.setdefault(ref, []).append(card)
        for ref, text in store.read_sorted(by_ref):
            for card in by_ref[ref]:
                yield card, text


# ---------------------------------------------------------------------- writing, reading

_context = threading.local()


class TextSink:
    """Takes texts (and other bytes: a graph's mention spans) while a snapshot is pickled;
    they follow the pickle in its file. Once the file is in place, :meth:`saved` lets what was
    pickled read them there."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._size = 0
        self.taken: list[tuple[Card, int]] = []  # each card pickled meanwhile, its reference
        self._after: list[Callable[[TextStore], None]] = []

    def add(self, card: Card, text: str) -> int:
        ref = self.add_bytes(text.encode(*_ENCODING), card.path)
        self.taken.append((card, ref))
        return ref

    def add_bytes(self, data: bytes, what: str = "") -> int:
        if len(data) > _LENGTH_MASK:
            raise ValueError(f"{what}: {len(data)} bytes, more than a reference can hold")
        ref = self._size << _LENGTH_BITS | len(data)
        self._file.write(data)
        self._size += len(data)
        return ref

    def after(self, then: Callable[[TextStore], None]) -> None:
        """Call ``then`` with the written file's store when it is in place."""
        self._after.append(then)

    def saved(self, store: TextStore) -> None:
        for card, ref in self.taken:
            card.keep_text_in(store, ref)
        for then in self._after:
            then(store)

    @property
    def size(self) -> int:
        return self._size

    def copy_to(self, out: IO[bytes]) -> None:
        self._file.flush()
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, BLOCK_BYTES)

    def close(self) -> None:
        self._file.close()


def current_sink() -> TextSink | None:
    sink: TextSink | None = getattr(_context, "sink", None)
    return sink


def current_store() -> TextStore:
    store = store_being_read()
    if store is None:
        raise TextStoreError("a card that refers to a text store was unpickled outside one")
    return store


def store_being_read() -> TextStore | None:
    """The store of the snapshot unpickled in this thread now, if one is."""
    store: TextStore | None = getattr(_context, "store", None)
    return store


@contextlib.contextmanager
def writing() -> Iterator[TextSink]:
    """Cards pickled in this thread meanwhile give their texts to the sink."""
    sink = TextSink()
    _context.sink = sink
    try:
        yield sink
    finally:
        _context.sink = None
        sink.close()


@contextlib.contextmanager
def reading(store: TextStore) -> Iterator[TextStore]:
    """Cards unpickled in this thread meanwhile read their texts from ``store``."""
    _context.store = store
    try:
        yield store
    finally:
        _context.store = None
