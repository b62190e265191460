"""The index's own bookkeeping: what is indexed, for which file version, with which model.

``state.json`` beside the shard holds, per card path: size, mtime, content hash, chunk count and
whether its dense vectors are done. It is written atomically (temp file, fsync, rename) and only
*after* the shard is flushed, so after a crash the state never claims more than the shard holds.
The cards are stored as columns (format 2: a list of paths, a list per field): at 100k cards
that file is written in 0.10 s instead of 0.27 s and read in 0.17 s instead of 0.29 s, most of
which is building the entries (docs/performance.md, tenth pass). Format 1 (an object per card)
is still read; the next save writes format 2.

Before a batch touches the shard, the paths it will touch are recorded as ``pending`` (also
atomically): in ``pending.json``, a small file of their own, so that an edit does not write the
whole state twice (at 50k cards each save of ``state.json`` took 0.25 s); the next save of the
state takes them over and removes that file. On the next start, a pending path whose state entry
does not match the file is re-indexed, and a pending path that no longer exists has its points
deleted: a crash at any moment leads to redone work, never to phantom or missing cards.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

STATE_FORMAT = 2
READABLE_FORMATS = (1, 2)  # 1: an object per card
STATE_FILE = "state.json"
# Written by a clean close, after the last flush and state save, and removed as the index is
# opened: its absence at the next opening means the last writer may have stopped between a
# shard write and the state's (a crash, a kill), so the shard may hold points the state does
# not know, and the first full sync looks for them (a facet over every point: 3.4 s at 100k).
CLEAN_FILE = "closed-cleanly"
# The paths a pass is about to write, saved before it writes them (see save_pending)
PENDING_FILE = "pending.json"


@dataclass(slots=True)
class FileState:
    size: int
    mtime_ns: int
    sha256: str
    chunks: int
    dense: bool = False  # dense vectors stored for every chunk with the index's model
    lang: str = "en"  # the card's language (notes/language.py): its BM25 stemmer
    ml: bool = False  # multilingual vectors stored for every chunk (issue #17)


@dataclass(slots=True)
class IndexState:
    vault: str
    model: str
    chunker: str
    dim: int = 0
    bm25_avg_len: float = 0.0  # fixed when the shard is first filled (BM25 weights depend on it)
    backend: str = "edge"  # "edge", or "qdrant:<url>" for a Qdrant server
    files: dict[str, FileState] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason (binary, too large...)
    ml_model: str = ""  # the model of the multilingual vectors stored ("": none yet)
    ml_all: bool = False  # every card gets multilingual vectors (a query was not English)
    # points written to the shard (upserts, vector updates, deletes) since it was last compacted
    # (index/compact.py): a large appendable segment makes every later start slow
    uncompacted: int = 0
    # how the shard keeps its data (store.STORE_LAYOUT; 1: before it was recorded); an older
    # layout is moved by the next compaction
    store_layout: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "vault": self.vault,
            "model": self.model,
            "chunker": self.chunker,
            "dim": self.dim,
            "bm25_avg_len": self.bm25_avg_len,
            "backend": self.backend,
            "pending": sorted(set(self.pending)),
            "skipped": dict(sorted(self.skipped.items())),
            "ml_model": self.ml_model,
            "ml_all": self.ml_all,
            "uncompacted": self.uncompacted,
            "store_layout": self.store_layout,
            "files": _files_json(self.files),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexState:
        form = data.get("format")
        if form not in READABLE_FORMATS:
            raise ValueError(f"unknown state format {form!r}")
        raw = data.get("files", {})
        files = {p: FileState(**f) for p, f in raw.items()} if form == 1 else _files_from_json(raw)
        return cls(
            vault=str(data["vault"]),
            model=str(data["model"]),
            chunker=str(data["chunker"]),
            dim=int(data.get("dim", 0)),
            bm25_avg_len=float(data.get("bm25_avg_len", 0.0)),
            backend=str(data.get("backend", "edge")),
            files=files,
            pending=list(data.get("pending", [])),
            skipped=dict(data.get("skipped", {})),
            ml_model=str(data.get("ml_model", "")),
            ml_all=bool(data.get("ml_all", False)),
            # a state from before compaction existed: every point was written since
            uncompacted=int(
                data["uncompacted"]
                if "uncompacted" in data
                else sum(f.chunks for f in files.values())
            ),
            store_layout=int(data.get("store_layout", 1)),
        )

    @property
    def dense_done(self) -> int:
        return sum(1 for f in self.files.values() if f.dense)


def _files_json(files: dict[str, FileState]) -> dict[str, Any]:
    """The cards as columns: ``paths`` and a list per field in the same order; ``dense`` as a
    string of 0/1; ``lang`` only for the cards not in English (row -> language), ``ml`` the
    rows with multilingual vectors."""
    items = list(files.items())  # one copy: paths and fields in the same order
    rows = [f for _, f in items]
    return {
        "paths": [p for p, _ in items],
        "size": [f.size for f in rows],
        "mtime_ns": [f.mtime_ns for f in rows],
        "sha256": [f.sha256 for f in rows],
        "chunks": [f.chunks for f in rows],
        "dense": "".join("1" if f.dense else "0" for f in rows),
        "lang": {str(i): f.lang for i, f in enumerate(rows) if f.lang != "en"},
        "ml": [i for i, f in enumerate(rows) if f.ml],
    }


def _files_from_json(data: dict[str, Any]) -> dict[str, FileState]:
    """The cards of :func:`_files_json`; ValueError if the columns do not line up."""
    paths = data["paths"]
    if not isinstance(paths, list):
        raise ValueError("state column 'paths' is damaged")
    n = len(paths)
    columns = [data[k] for k in ("size", "mtime_ns", "sha256", "chunks")]
    dense = data["dense"]
    if any(not isinstance(c, list) or len(c) != n for c in columns) or len(paths) != len(
        set(paths)
    ):
        raise ValueError("state columns do not line up")
    if not isinstance(dense, str) or len(dense) != n or dense.strip("01"):
        raise ValueError("state column 'dense' is damaged")
    langs = ["en"] * n
    for row, lang in data.get("lang", {}).items():
        langs[int(row)] = str(lang)
    ml = [False] * n
    for row in data.get("ml", []):
        ml[int(row)] = True
    # map() calls FileState from C: 0.12 s for 100k cards, against 0.16-0.19 s for a
    # comprehension over one dict per card
    rows = map(FileState, *columns, map("1".__eq__, dense), langs, ml)
    return dict(zip(paths, rows, strict=True))


def load_state(folder: Path) -> IndexState | None:
    """The saved state, or None if there is none or it is unreadable (then: full reconcile)."""
    path = folder / STATE_FILE
    try:
        with path.open(encoding="utf-8") as fh:
            state = IndexState.from_json(json.load(fh))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    try:
        with (folder / PENDING_FILE).open(encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("format") not in READABLE_FORMATS or not isinstance(data.get("pending"), list):
            raise ValueError("not a pending file")
        extra = [str(p) for p in data["pending"]]
    except FileNotFoundError:
        return state
    except (OSError, ValueError, AttributeError) as exc:
        # written atomically, so only damage makes it unreadable; the paths it held are
        # unknown, and the state may lag the shard for any of them: every card is redone
        # (its chunks written again; its vectors are found by text hash, not embedded again)
        log.warning("%s is unreadable (%s): every card is indexed again", PENDING_FILE, exc)
        extra = list(state.files)
    state.pending = sorted(set(state.pending) | set(extra))
    return state


def _state_stamp(folder: Path) -> str:
    st = os.stat(folder / STATE_FILE)
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ino}"


def take_clean_mark(folder: Path) -> bool:
    """Whether the index in ``folder`` was closed cleanly (see :data:`CLEAN_FILE`) and its
    state file is still the one that close wrote (not, say, an older copy put back). The mark
    is removed, so a crash of this opening leaves none. Call under the folder's lock."""
    mark = folder / CLEAN_FILE
    try:
        stamp = mark.read_text(encoding="utf-8")
        os.unlink(mark)
        return stamp == _state_stamp(folder)
    except OSError:  # no mark, or one that cannot be read or removed: do not trust it
        return False


def mark_clean(folder: Path) -> None:
    """Record a clean close: call after the last shard flush and :func:`save_state`."""
    with contextlib.suppress(OSError):
        (folder / CLEAN_FILE).write_text(_state_stamp(folder), encoding="utf-8")


def save_state(folder: Path, state: IndexState) -> None:
    """Write atomically: a reader (or a crash) sees the old file or the new one, never a mix.
    The state's own ``pending`` then stands for what :func:`save_pending` recorded, and its
    file is removed (a crash before that leaves it: its paths are redone, nothing is lost)."""
    # json.dumps runs the C encoder; json.dump streams through the pure-Python one (10x
    # slower). ASCII escapes keep any path lossless, even one with lone surrogates.
    write_atomically(
        folder, STATE_FILE, json.dumps(state.to_json(), ensure_ascii=True, separators=(",", ":"))
    )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / PENDING_FILE)


def save_pending(folder: Path, pending: list[str]) -> None:
    """Record, atomically and without rewriting the whole state, that these paths are about to
    be written to the shard: :func:`load_state` adds them to the saved state's ``pending``, so
    a crash before the next :func:`save_state` has them redone."""
    data = {"format": STATE_FORMAT, "pending": sorted(set(pending))}
    write_atomically(
        folder, PENDING_FILE, json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    )


def write_atomically(folder: Path, name: str, data: str) -> None:
    """``data`` as ``folder / name``, through a ``.state-*`` temp file (the name an index
    folder's check knows), fsynced and renamed over it, the rename made durable too."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
