"""The embedded vector store: one Qdrant Edge shard per vault. The only module importing
``qdrant_edge`` (a beta API, pinned): a version bump touches this file alone.

Each chunk is a point with a dense vector ``dense`` (cosine; absent until embedded), a second one
``dense_ml`` for the multilingual model (created when that model is first used; absent where the
card is not in its scope), and a sparse vector ``bm25`` (Edge's own BM25 embedder: stemming and
stopwords in the chunk's language, see :class:`Bm25Encoder`; IDF applied by the shard), and a
payload (``store_api.ChunkPayload``): ``path``, ``title``, ``chunk``, ``heading``,
``line_start``, ``line_end``, ``text``, ``embed_hash``, ``lang``, and ``cjk`` for the chunks
of Chinese, Japanese or Korean cards. ``path`` and ``lang`` have keyword indexes (filters, deletes);
``text`` a full-text index with phrase matching (the keyword leg), and ``cjk`` the same with
Edge's multilingual tokenizer, which segments words where no spaces separate them (on ``text`` it
would change English: numbers like ``2023`` stop being words, ``naive`` finds ``naïve``). Search
calls hold the GIL inside Edge, so writers use small batches.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any
from uuid import UUID

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
    FieldCondition,
    Filter,
    HasIdCondition,
    KeywordIndexParams,
    MatchAny,
    MatchPhrase,
    MatchText,
    MatchValue,
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

from zettel_lsp.index.page_cache import cached, release_mapped
from zettel_lsp.index.store_api import (
    CJK_FIELD,
    LANG_FIELD,
    PATH_FIELD,
    TEXT_FIELD,
    ChunkPayload,
    ChunkPoint,
    Hit,
    IndexLockedError,
    StoreError,
    as_payload,
    record_tuples,
)
from zettel_lsp.notes.language import EN, HAS_CJK

log = logging.getLogger(__name__)

DENSE = "dense"
DENSE_ML = "dense_ml"  # the multilingual model's vectors (issue #17)
BM25 = "bm25"
SHARD_DIR = "shard"
# Dense search is exact up to this many points (linear: 4.1 ms at 45k points on 2 cores), then
# uses the HNSW graph that compaction builds, with this beam (measured, index/compact.py)
EXACT_DENSE_POINTS = 100_000
HNSW_EF = 256
_OWNER_FILE = "owner.json"

# Where the shard keeps what it holds (issue #18): dense vectors, the BM25 inverted index and the
# payload indexes are memory-mapped files read on demand ("cold"), not loaded into memory when
# the shard opens. Measured on the 100k-card shard (178,340 points, compacted; 2 cores):
# ``EdgeShard.load`` 0.63-1.18 s -> 0.08 s, the loading process's peak RSS 721 -> 148 MB;
# BM25 and keyword queries the same once the pages are read (median 0.9 vs 1.0 ms), and at 25k
# cards (45k points) exact dense search 4.8 ms against 3.3 ms (docs/performance.md).
# Shards written before (layout 1) are moved to it by their next compaction (index/compact.py),
# and so is a vector created later (the multilingual one, a model change: Edge gives it its
# default placement; see vectors_in_memory).
#
# Layout 3: past EXACT_DENSE_POINTS, dense search walks the HNSW graph over an int8 copy of the
# vectors that stays in memory (pinned: 66 MB at 178k points of 384 dimensions) and rescores
# twice the asked number of candidates on the originals, which stay on disk. Measured on the
# 100k-card shard (178,340 points; 152 queries, 2 cores): recall@10 against exact search 0.991
# (0.992 without the int8 copy), the first round of queries median 3.0 / p95 6.1 ms against
# 6.8 / 77.7 ms, and 346 MB of RSS against 535 MB for the searching process; the originals need
# no reading ahead (EdgeStore.warm: 261 MB of pages at 100k). Below EXACT_DENSE_POINTS search is
# exact on the originals, as before. Layout-2 shards get the int8 copy at their next compaction.
STORE_LAYOUT = 3
_COLD = Memory.Cold
_INT8 = ScalarQuantizationConfig(type=ScalarType.Int8, quantile=0.99, memory=Memory.Pinned)
_RESCORED = QuantizationSearchParams(rescore=True, oversampling=2.0)
_ORIGINALS = QuantizationSearchParams(ignore=True)
# Points per warming query (EdgeStore.warm): one query holds the interpreter lock for ~25 ms at
# 100k cards, so requests that arrive meanwhile wait at most that long.
WARM_SLICE = 2048
# The keyword leg without its full-text index (EdgeStore.keyword_index) checks the words in
# this many of the best BM25 points: 5-6 ms per search on a never-compacted 100k-card shard
# (1,024: 38 ms per query; docs/performance.md, ninth pass)
KEYWORD_DEPTH = 256
_READ_BLOCK = 1 << 20  # read_ahead's reads


def _dense_params(
    dim: int, distance: Distance = Distance.Cosine, *, int8: bool = True
) -> EdgeVectorParams:
    """A dense vector's placement: cold originals, and (``int8``) the int8 copy its HNSW graph
    is searched on. The multilingual vector has none: it exists in an English vault as soon as
    one query was not English, and a pinned copy of its 178k points would take 91 MB there."""
    return EdgeVectorParams(
        size=dim, distance=distance, memory=_COLD, quantization_config=_INT8 if int8 else None
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
    """Edge's BM25 for text in ``lang``: English exactly as before languages were told apart;
    a Snowball language stemmed in that language; Chinese, Japanese, Korean and Thai segmented
    into words; any other language split at spaces, neither stemmed nor stopped."""
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
    one query meets cards stemmed in any language of the vault (for an English vault: English
    alone, as before). Also used by the remote store, so both index the same terms."""

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

    def document_pairs(self, text: str, lang: str = EN) -> tuple[list[int], list[float]]:
        sv = self.document(text, lang)
        return list(sv.indices), list(sv.values)

    def query_pairs(self, text: str, langs: Sequence[str] = (EN,)) -> tuple[list[int], list[float]]:
        sv = self.query(text, langs)
        return list(sv.indices), list(sv.values)


def keyword_field(text: str) -> str:
    """The full-text field a keyword query searches: ``cjk`` when it holds Chinese, Japanese or
    Korean (only that field's tokenizer finds such words), else ``text``."""
    return CJK_FIELD if HAS_CJK.search(text) else TEXT_FIELD


def _cold_config(path: Path) -> EdgeConfig | None:
    """The shard's own vectors (names, sizes, distances, from the configuration Edge keeps in
    ``edge_config.json``), each declared cold, or None when that file cannot be read (then the
    vectors keep their placement: only a slower open, nothing lost)."""
    try:
        data = json.loads((path / "edge_config.json").read_text(encoding="utf-8"))
        vectors = {
            str(name): _dense_params(
                int(v["size"]), getattr(Distance, str(v["distance"])), int8=str(name) == DENSE
            )
            for name, v in dict(data.get("vectors") or {}).items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        log.info("shard configuration unreadable (%s): vectors keep their placement", exc)
        return None
    return EdgeConfig(vectors=vectors or None, sparse_vectors={BM25: _bm25_params()})


def vectors_in_memory(path: Path) -> list[str]:
    """The dense vectors that some segment of the shard at ``path`` keeps in memory (read in
    full when the shard loads) rather than cold. A vector added to an existing shard (the
    multilingual one when its model is first used, the dense one again after a model change)
    gets Edge's default placement in every segment it is added to: ``create_dense_vector``
    takes no placement. At 100k cards the multilingual vector's storage (512-d, 178k points)
    is then 352 MB of the server's RSS from its first open, whatever it holds. A compaction
    rewrites such segments cold (the shard is loaded with every vector declared cold), so
    :func:`~zettel_lsp.index.compact.uncompacted` asks for one when this is not empty."""
    hot: set[str] = set()
    for vectors in _segment_vectors(path):
        for name, v in vectors.items():
            kind = str(v.get("storage_type", ""))
            if kind.startswith("InRam") or kind == "Memory":
                hot.add(name)
    return sorted(hot)


def graph_without_int8(path: Path, name: str = DENSE) -> bool:
    """Whether some segment of the shard at ``path`` has an HNSW graph for the vector ``name``
    but no int8 copy of it (a shard in layout 2, until its next compaction): its searches then
    read the original vectors, which :meth:`EdgeStore.warm` should read ahead."""
    for vectors in _segment_vectors(path):
        v = vectors.get(name)
        if v is None:
            continue
        index = v.get("index")
        graph = isinstance(index, dict) and index.get("type") == "hnsw"
        if graph and not v.get("quantization_config"):
            return True
    return False


def searched_originals(path: Path, dim: int) -> list[Path]:
    """The files of the original dense vectors of the shard at ``path`` that searches read only
    a few of (see :func:`drop_cached_originals`): none below :data:`EXACT_DENSE_POINTS`."""
    originals: list[Path] = []
    points = 0
    for seg in (path / "segments").glob(f"*/vector_storage-{DENSE}"):
        matrix = seg / "matrix.dat"
        with contextlib.suppress(OSError):
            points += matrix.stat().st_size // (4 * max(1, dim))
            if (seg / "quantized.data").is_file():
                originals.append(matrix)
    return originals if points > EXACT_DENSE_POINTS else []


def drop_cached_originals(path: Path, dim: int) -> int:
    """Drop the original dense vectors of the shard at ``path`` from the page cache (clean pages
    only: ``posix_fadvise(DONTNEED)``, nothing is lost) where searches read only a few of them:
    past :data:`EXACT_DENSE_POINTS` points, in the segments with an int8 copy to search on
    (layout 3). Returns the bytes of the files advised.

    Those searches rescore a few dozen candidates on the originals (``matrix.dat``). When the
    file sits in the page cache as large folios, as a compaction or any sequential read leaves
    it, each touch maps a whole folio into the process: in-process at 100k cards, 257 MB of it
    after 102 searches, against 26 MB with the file read on demand. In the language server over
    a whole `lsp_latency.py` run: 229-246 MB before, 155 MB after, and the peak RSS 2,216-2,245
    -> 2,145-2,158 MB (docs/performance.md). Read again on demand, it costs a disk read per
    rescored candidate that is not cached (no latency moved in that run)."""
    if not hasattr(os, "posix_fadvise"):
        return 0
    done = 0
    for matrix in searched_originals(path, dim):
        try:
            fd = os.open(matrix, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            done += os.fstat(fd).st_size
        except OSError:
            pass
        finally:
            os.close(fd)
    return done


def read_ahead(path: Path) -> int:
    """Read the files of the shard at ``path`` that Edge's open reads, once, in order, before
    it loads: all but the dense vectors' storage (``matrix.dat``, ``chunk_*``), which searches
    read on demand (:meth:`EdgeStore.warm` reads them where that pays), the files of compacted
    segments that the open only maps (:func:`_read_on_demand`; :func:`read_searched` reads
    them), and the files already wholly in the page cache
    (:func:`~zettel_lsp.index.page_cache.cached`). Returns the bytes read.

    ``EdgeShard.load`` reads a little of many files through memory maps, a page fault at a time,
    and holds the interpreter lock meanwhile. With the shard's files not in the page cache it
    took 2.0-2.5 s at 100k cards in the server; read here first (plain reads, which release
    the lock), the open took 0.9-1.4 s and the first answer came after 0.9-1.5 s instead of
    2.2-2.7 s. With the files cached it costs 0.1 s and the first answer did not move (0.64-0.77
    s against 0.74-0.82 s); peak RSS moved by +65 MB or less (docs/performance.md)."""
    on_demand = _read_on_demand(path)
    return _read_files(path, lambda rel: not on_demand(rel), "read ahead")


def read_searched(path: Path) -> int:
    """Read the files :func:`read_ahead` leaves out for the open (a compacted segment's
    payloads, postings, BM25 index and vectors, map files), so that the searches after a
    start find them in the page cache; the server does it on the read-ahead's thread once the
    open may go (:class:`ReadAhead`). Returns the bytes read."""
    return _read_files(path, _read_on_demand(path), "read for the searches")


def _read_files(path: Path, pick: Callable[[str], bool], what: str) -> int:
    """Read once the files under ``path`` that ``pick`` takes (given the path relative to
    ``path``, with ``/``), but not the dense vectors' storage, nor the files already wholly in
    the page cache. Plain reads: they release the interpreter lock."""
    t0 = time.perf_counter()
    done = 0
    for folder, _, files in os.walk(path):
        for name in sorted(files):
            if name == "matrix.dat" or name.startswith("chunk_"):
                continue
            file = os.path.join(folder, name)
            if not pick(os.path.relpath(file, path).replace(os.sep, "/")):
                continue
            if cached(file):  # nothing to gain (0.27 s of reads at 100k cards, all cached)
                continue
            with contextlib.suppress(OSError), open(file, "rb") as fh:
                while block := fh.read(_READ_BLOCK):
                    done += len(block)
    log.debug("%s %d MB of the shard in %.2f s", what, done >> 20, time.perf_counter() - t0)
    return done


def _appendable_segments(shard_dir: Path) -> dict[str, bool]:
    """The shard's segment folders by name, each with whether it is appendable (Edge keeps a
    mutable id tracker in those); empty when the folder cannot be read."""
    try:
        return {
            p.name: (p / "mutable_id_tracker.mappings").exists()
            for p in (shard_dir / "segments").iterdir()
            if p.is_dir()
        }
    except OSError:
        return {}


# files of a compacted (not appendable) segment that EdgeShard.load maps without reading and
# a search reads a part of: payloads, full-text postings, the BM25 index and stored sparse
# vectors, the path and language maps
_ON_DEMAND_DIRS = ("payload_storage", "vector_storage-bm25")
_ON_DEMAND_FILES = frozenset(
    {"postings.dat", "inverted_index.dat", "point_to_values.bin", "values_to_points.bin"}
)


def _read_on_demand(shard_dir: Path) -> Callable[[str], bool]:
    """The shard's files (relative paths) that Edge's open only maps, which :func:`read_ahead`
    leaves to :func:`read_searched`: at 100k cards, 470 of its 794 MB. Read before the open,
    they cost the open of a shard not in the page cache 0.63 s against 0.33 s; left to the
    searches' page faults, they cost the searches after a cold start (symbol p95 58-68 ms
    against 19-24; docs/performance.md, fifteenth pass). An appendable segment's files are
    read before the open: it builds its in-memory indexes from them."""
    appendable = _appendable_segments(shard_dir)

    def which(rel: str) -> bool:
        parts = rel.split("/")
        if len(parts) < 4 or parts[0] != "segments" or appendable.get(parts[1], True):
            return False
        return parts[2] in _ON_DEMAND_DIRS or parts[-1] in _ON_DEMAND_FILES

    return which


class ReadAhead:
    """The shard's files read on a thread of its own, to pass to :class:`EdgeStore`: first
    what its open reads (:func:`read_ahead`), while the caller reads the index state (0.41 s
    at 100k cards, before the shard's 0.45-0.75 s), then, with the open under way, what the
    first searches read (:func:`read_searched`). The reads release the interpreter lock."""

    def __init__(self, folder: Path) -> None:
        """Start reading the shard of the index folder ``folder``."""
        self._for_open = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(folder / SHARD_DIR,), name="zettel-read-ahead", daemon=True
        )
        self.thread.start()

    def _run(self, path: Path) -> None:
        try:
            read_ahead(path)
        finally:
            self._for_open.set()
        read_searched(path)

    def wait_for_open(self) -> None:
        """Until the files the open reads are read."""
        self._for_open.wait()


def _segment_vectors(path: Path) -> list[dict[str, dict[str, Any]]]:
    """Per segment of the shard at ``path``: its dense vectors' configuration, as Edge records
    it in ``segment.json`` (unreadable ones left out: Edge says so when it loads)."""
    out: list[dict[str, dict[str, Any]]] = []
    for seg in sorted((path / "segments").glob("*/segment.json")):
        try:
            data = json.loads(seg.read_text(encoding="utf-8"))
            vectors = dict(data["config"]["vector_data"])
        except (OSError, ValueError, TypeError, KeyError):
            continue
        out.append({str(k): v for k, v in vectors.items() if isinstance(v, dict)})
    return out


def _path_filter(paths: Iterable[str] | None) -> Filter | None:
    if paths is None:
        return None
    values = list(paths)
    if len(values) == 1:
        return Filter(must=[FieldCondition(key=PATH_FIELD, match=MatchValue(value=values[0]))])
    return Filter(must=[FieldCondition(key=PATH_FIELD, match=MatchAny(any=values))])


def _read_once(shard_dir: Path) -> Callable[[str], bool]:
    """The shard's files (relative paths) that its open reads whole and a search reads little
    or none of: the write-ahead log, and the payload index pages of its appendable segments
    (after a compaction the last one is nearly empty, with 32 MB preallocated per full-text
    field; in a shard never compacted, what a search reads of them maps back from the page
    cache). For :func:`~zettel_lsp.index.page_cache.release_mapped`."""
    appendable = _appendable_segments(shard_dir)

    def which(rel: str) -> bool:
        parts = rel.split("/")
        if parts[0] == "wal":
            return True
        return (
            len(parts) > 3
            and parts[0] == "segments"
            and appendable.get(parts[1], False)
            and parts[2] == "payload_index"
            and parts[-1].startswith("page_")
        )

    return which


class EdgeStore:
    """One open shard. Thread-safe for use from a writer thread and reader threads."""

    def __init__(
        self,
        folder: Path,
        dim: int,
        bm25_avg_len: float,
        *,
        read_ahead_by: ReadAhead | None = None,
    ) -> None:
        """``read_ahead_by``: a thread already reading the shard's files ahead (see
        :class:`ReadAhead`), waited for instead of reading them here."""
        self.folder = folder
        self.dim = dim
        self._bm25 = Bm25Encoder(bm25_avg_len)
        self._write_lock = threading.Lock()
        shard_dir = folder / SHARD_DIR
        self._created = not ((shard_dir / "wal").exists() or (shard_dir / "segments").exists())
        self._shard = self._open(shard_dir, dim, read_ahead_by)
        info = self._shard.info()
        # points so far (upserts add to it, never minus deletes: a bound for _dense_params)
        self._points = int(info.points_count)
        self._keyword_indexed = TEXT_FIELD in info.payload_schema  # see keyword_index
        self._write_owner()

    # ------------------------------------------------------------------ lifecycle

    @staticmethod
    def _open(path: Path, dim: int, read_ahead_by: ReadAhead | None = None) -> EdgeShard:
        loaded = (path / "wal").exists() or (path / "segments").exists()
        try:
            if loaded:
                if read_ahead_by is not None:
                    read_ahead_by.wait_for_open()
                else:
                    read_ahead(path)
                drop_cached_originals(path, dim)
                shard = EdgeShard.load(str(path))
            else:
                path.mkdir(parents=True, exist_ok=True)
                shard = EdgeShard.create(
                    str(path),
                    EdgeConfig(
                        vectors={DENSE: _dense_params(dim)}, sparse_vectors={BM25: _bm25_params()}
                    ),
                )
            # Also on load: a process killed right after creating the shard leaves it without
            # its payload indexes (found by the SIGKILL test under load). The keyword leg's
            # index only on creation: on load its owner decides (keyword_index).
            EdgeStore._ensure_indexes(shard, text=not loaded)
            # what the load or creation touched whole and a search reads little of (the
            # write-ahead log, the appendable segments' payload index pages): 117 MB of
            # resident memory at 100k cards, 77 MB for any shard (_read_once)
            released = release_mapped(path, _read_once(path))
            log.debug("%s: %d MB of mappings released after the open", path, released >> 20)
            return shard
        except Exception as exc:
            text = str(exc)
            if "WouldBlock" in text or "Resource temporarily unavailable" in text:
                owner = EdgeStore._read_owner(path.parent)
                who = f" (pid {owner['pid']})" if owner.get("pid") else ""
                raise IndexLockedError(
                    f"index folder {path.parent} is in use by another zettel-lsp{who}; "
                    "close the other editor window or pass a different --index-dir"
                ) from exc
            raise StoreError(
                f"cannot open the index in {path}: {text}. The index can always be rebuilt: "
                f"delete {path.parent} and run zettel-lsp index again"
            ) from exc

    @staticmethod
    def _ensure_indexes(shard: EdgeShard, *, text: bool = True) -> None:
        schema = shard.info().payload_schema
        for name in _FIELDS:
            if name not in schema and (text or name != TEXT_FIELD):
                shard.update(UpdateOperation.create_field_index(name, _field_params(name)))

    @staticmethod
    def load_for_compaction(path: Path) -> EdgeShard:
        """The shard at ``path`` (its ``shard`` folder), moved to :data:`STORE_LAYOUT` where it
        is not there yet: its vectors and BM25 index declared cold (the optimizer then writes
        them so) and its payload indexes rebuilt cold (22 s for the text index at 178k
        points), or built when missing (the keyword leg's, which waits for this compaction
        while many points are uncompacted: :meth:`keyword_index`). For the compactor, which
        optimizes it next; takes no lock itself."""
        config = _cold_config(path)
        shard = (
            EdgeShard.load(str(path), config) if config is not None else EdgeShard.load(str(path))
        )
        schema = shard.info().payload_schema
        for name in _FIELDS:
            info = schema.get(name)
            if info is not None and getattr(info.params, "memory", None) == _COLD:
                continue
            if info is not None:
                shard.update(UpdateOperation.delete_field_index(name))
            shard.update(UpdateOperation.create_field_index(name, _field_params(name)))
        return shard

    @classmethod
    def optimize_folder(cls, path: Path) -> bool:
        """Optimize the closed shard folder ``path`` (:meth:`load_for_compaction`, then Edge's
        optimizer); the caller holds the index folder's lock. Returns whether segments were
        rewritten."""
        shard = cls.load_for_compaction(path)
        try:
            changed = bool(shard.optimize())
            shard.flush()
        finally:
            shard.close()
        return changed

    def compact_in_place(self) -> bool:
        """Compact this shard now, in this process (what the detached compactor does, see
        :mod:`zettel_lsp.index.compact`): close it, optimize it as loaded for compaction, open
        it again. Holds the interpreter lock for the optimizer's whole run (tens of seconds at
        100k cards), so only for a caller no one waits on: ``zettel-lsp index`` between its
        lexical and dense phases. Returns whether the optimizer rewrote segments."""
        path = self.folder / SHARD_DIR
        with self._write_lock:
            self._shard.flush()
            self._shard.close()
            try:
                changed = self.optimize_folder(path)
            finally:
                self._shard = self._open(path, self.dim)
            info = self._shard.info()
            self._points = int(info.points_count)
            self._keyword_indexed = TEXT_FIELD in info.payload_schema
        return changed

    def compact_in_child(self, should_stop: Callable[[], bool] = lambda: False) -> bool:
        """:meth:`compact_in_place` with the optimizer in a child process
        (``python -m zettel_lsp.index.compact --shard PATH``, niced), so this process's
        interpreter lock stays free: for the language server between a vault's first lexical
        phase and its dense phase. The shard is closed meanwhile: the caller keeps every reader
        away (the server answers from its graph). ``should_stop`` (asked every 0.2 s) stops the
        child: an optimization stopped midway loses nothing (the shard opens with every point).
        Returns whether the child finished; the shard is open again either way."""
        import subprocess
        import sys

        path = self.folder / SHARD_DIR
        with self._write_lock:
            self._shard.flush()
            self._shard.close()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "zettel_lsp.index.compact", "--shard", str(path)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                try:
                    while True:
                        if should_stop():
                            proc.terminate()
                            proc.communicate()
                            return False
                        try:
                            _, err = proc.communicate(timeout=0.2)
                            break
                        except subprocess.TimeoutExpired:
                            continue
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                if proc.returncode != 0:
                    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
                    raise StoreError(f"compacting {path} failed: {' | '.join(tail)}")
                return True
            finally:
                self._shard = self._open(path, self.dim)
                info = self._shard.info()
                self._points = int(info.points_count)
                self._keyword_indexed = TEXT_FIELD in info.payload_schema

    @property
    def created(self) -> bool:
        """Whether this opening created the shard (in :data:`STORE_LAYOUT`)."""
        return self._created

    def _write_owner(self) -> None:
        with contextlib.suppress(OSError):
            (self.folder / _OWNER_FILE).write_text(
                json.dumps({"pid": os.getpid(), "since": time.time()}), encoding="utf-8"
            )

    @staticmethod
    def _read_owner(folder: Path) -> dict[str, Any]:
        try:
            data = json.loads((folder / _OWNER_FILE).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def close(self) -> None:
        with self._write_lock:
            with contextlib.suppress(Exception):
                self._shard.flush()
            self._shard.close()
        with contextlib.suppress(OSError):
            (self.folder / _OWNER_FILE).unlink()

    def flush(self) -> None:
        with self._write_lock:
            self._shard.flush()

    @staticmethod
    def destroy(folder: Path) -> None:
        """Delete a (closed) index folder's shard."""
        shutil.rmtree(folder / SHARD_DIR, ignore_errors=True)

    # ------------------------------------------------------------------ writes

    def reset_dense(self, dim: int) -> bool:
        """Drop every dense vector and recreate the vector with ``dim`` (the model changed).
        BM25 vectors and payloads stay: lexical search keeps working meanwhile."""
        with self._write_lock:
            self._shard.update(UpdateOperation.delete_vector_name(DENSE))
            self._shard.update(UpdateOperation.create_dense_vector(DENSE, dim, Distance.Cosine))
            self.dim = dim
        return True

    def ensure_vector(self, name: str, dim: int) -> bool:
        """Create the dense vector ``name`` of ``dim`` (cosine) if the shard has none yet (the
        multilingual one, when its model is first used). True: the store holds such vectors."""
        with self._write_lock:
            self._shard.update(UpdateOperation.create_dense_vector(name, dim, Distance.Cosine))
        return True

    def drop_vector(self, name: str) -> None:
        """Delete the dense vector ``name`` and all its values (a model change)."""
        with self._write_lock:
            self._shard.update(UpdateOperation.delete_vector_name(name))

    def keyword_index(self, on: bool) -> bool:
        """Build (``on``) or drop the keyword leg's full-text index of the ``text`` field;
        True when that changed something. Without the index the keyword leg checks the words
        in the best BM25 points only (:meth:`_keyword_among_best`: the same answers when every
        match is among them), which costs a few milliseconds per query instead of seconds at
        every load.

        Why drop it: Edge rebuilds the full-text index of the appendable segment in memory at
        every load, re-reading and re-tokenizing every payload there. On a shard that was
        never compacted (the first index of a vault, stopped mid-embedding) that was 85% of
        the open: 4.2-5.4 s at 100k cards against 0.72-0.77 s without the index, and 365 MB
        (docs/performance.md, seventh pass). The indexer drops it while many points wait for a
        compaction, which builds it again on disk (:meth:`load_for_compaction`)."""
        with self._write_lock:
            if on == self._keyword_indexed:
                return False
            if on:
                op = UpdateOperation.create_field_index(TEXT_FIELD, _field_params(TEXT_FIELD))
            else:
                op = UpdateOperation.delete_field_index(TEXT_FIELD)
            self._shard.update(op)
            self._keyword_indexed = on
            return True

    @property
    def keyword_indexed(self) -> bool:
        """Whether the keyword leg has its full-text index (see :meth:`keyword_index`)."""
        return self._keyword_indexed

    def set_bm25_avg_len(self, avg_len: float) -> None:
        """BM25 document weights depend on the mean document length: fix it per index."""
        self._bm25 = Bm25Encoder(avg_len)

    def upsert(self, points: Sequence[ChunkPoint]) -> None:
        if not points:
            return
        sparse = [self._bm25.document(p.bm25_text, p.payload.get("lang", EN)) for p in points]
        batch = []
        for p, sv in zip(points, sparse, strict=True):
            vector: dict[str, Any] = {BM25: sv}
            if p.dense is not None:
                vector[DENSE] = list(map(float, p.dense))
            if p.dense_ml is not None:
                vector[DENSE_ML] = list(map(float, p.dense_ml))
            batch.append(Point(id=p.id, vector=vector, payload=dict(p.payload)))
        with self._write_lock:
            self._shard.update(UpdateOperation.upsert_points(batch))
            self._points += len(batch)

    def set_dense(
        self, ids: Sequence[int], vectors: Sequence[Sequence[float]], *, using: str = DENSE
    ) -> None:
        if not ids:
            return
        batch = [
            PointVectors(id=i, vector={using: list(map(float, v))})
            for i, v in zip(ids, vectors, strict=True)
        ]
        with self._write_lock:
            self._shard.update(UpdateOperation.update_vectors(batch))

    def delete_paths(self, paths: Iterable[str]) -> None:
        flt = _path_filter(paths)
        if flt is None or not flt.must:
            return
        with self._write_lock:
            self._shard.update(UpdateOperation.delete_points_by_filter(flt))

    def delete_ids(self, ids: Sequence[int]) -> None:
        """Delete these points. A point to be replaced is better overwritten by an upsert of
        its id than deleted first: the shard's BM25 counts deleted points in its document
        frequencies until it is reloaded (see :meth:`Indexer._write_batch`)."""
        if ids:
            with self._write_lock:
                self._shard.update(UpdateOperation.delete_points(list(ids)))

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
        """The nearest chunks by the vector ``using``; with ``skip_lang``, only chunks in
        other languages; with ``only_lang``, only chunks in that one."""
        query = Query.Nearest(list(map(float, vector)), using=using)
        flt = _path_filter(paths)
        if skip_lang is not None or only_lang is not None:
            must = list(flt.must or []) if flt is not None else []
            if only_lang is not None:
                must.append(FieldCondition(key=LANG_FIELD, match=MatchValue(value=only_lang)))
            not_lang: list[Any] = []
            if skip_lang is not None:
                not_lang.append(FieldCondition(key=LANG_FIELD, match=MatchValue(value=skip_lang)))
            flt = Filter(must=must or None, must_not=not_lang or None)
        return self._query(query, limit, flt, self._dense_params())

    def _dense_params(self) -> SearchParams:
        """Exact dense search while the shard is small enough for it to be fast, so that a
        compacted shard (whose segments have HNSW graphs, index/compact.py) gives the answers
        of the uncompacted one; past :data:`EXACT_DENSE_POINTS`, the HNSW graph with a wide
        beam (recall@30 0.989 against exact at 45k points, 2.3 ms against 4.1 ms) over the
        int8 copy, rescored on the originals (:data:`STORE_LAYOUT` 3)."""
        if self._points <= EXACT_DENSE_POINTS:
            return SearchParams(exact=True, quantization=_ORIGINALS)
        return SearchParams(hnsw_ef=HNSW_EF, quantization=_RESCORED)

    def dense_search_many(self, vectors: Sequence[Sequence[float]], limit: int) -> list[list[Hit]]:
        """One dense search per vector as one batch (a single pass over the segments; the
        related-card legs query every passage of a card)."""
        if not vectors:
            return []
        params = self._dense_params()
        reqs = [
            QueryRequest(
                limit=limit,
                query=Query.Nearest(list(map(float, v)), using=DENSE),
                with_payload=True,
                params=params,
            )
            for v in vectors
        ]
        return [
            [Hit(int(p.id), float(p.score), as_payload(p.payload)) for p in points]
            for points in self._shard.query_batch(QueryBatchRequest(reqs))
        ]

    def bm25_search(
        self,
        text: str,
        limit: int,
        paths: Iterable[str] | None = None,
        *,
        langs: Sequence[str] = (EN,),
    ) -> list[Hit]:
        """BM25 with the query read in each of ``langs`` (see :class:`Bm25Encoder`)."""
        sparse = self._bm25.query(text, langs)
        if not len(sparse.indices):
            return []
        return self._query(Query.Nearest(sparse, using=BM25), limit, _path_filter(paths))

    def keyword_search(
        self, text: str, limit: int, *, phrase: bool = False, langs: Sequence[str] = (EN,)
    ) -> list[Hit]:
        """Points whose text holds every word of ``text`` (or the exact phrase), ranked by BM25
        among themselves (in id order when the words are all stopwords). Chinese, Japanese and
        Korean queries search the ``cjk`` field (see :func:`keyword_field`)."""
        field = keyword_field(text)
        match = MatchPhrase(phrase=text) if phrase else MatchText(text=text)
        flt = Filter(must=[FieldCondition(key=field, match=match)])
        sparse = self._bm25.query(text, langs)
        if len(sparse.indices) and field == TEXT_FIELD and not self._keyword_indexed:
            return self._keyword_among_best(sparse, flt, limit)
        if len(sparse.indices):
            return self._query(Query.Nearest(sparse, using=BM25), limit, flt)
        records, _ = self._shard.scroll(ScrollRequest(limit=limit, filter=flt, with_payload=True))
        return [Hit(int(r.id), 0.0, as_payload(r.payload)) for r in records]

    def _keyword_among_best(self, sparse: Any, flt: Filter, limit: int) -> list[Hit]:
        """The keyword leg without its full-text index (:meth:`keyword_index`): the points
        among the :data:`KEYWORD_DEPTH` (or twice ``limit``) best BM25 points that hold the
        words, checked by Edge itself (its tokenizer) on those points alone, in BM25 order.
        The same answer as with the index whenever every match is among those points; a
        match further down is missed. Letting Edge check every point instead (the filter
        alone) took 0.7 s per query on a never-compacted 100k-card shard."""
        depth = max(KEYWORD_DEPTH, 2 * limit)
        req = QueryRequest(limit=depth, query=Query.Nearest(sparse, using=BM25), with_payload=False)
        scores = {int(p.id): float(p.score) for p in self._shard.query(req)}
        if not scores:
            return []
        among = Filter(must=[HasIdCondition(set[int | UUID | str](scores)), *(flt.must or [])])
        records, _ = self._shard.scroll(
            ScrollRequest(limit=len(scores), filter=among, with_payload=False)
        )
        found = sorted((int(r.id) for r in records), key=lambda i: (-scores[i], i))[:limit]
        payloads = {pid: payload for pid, payload, _ in self.retrieve(found)}
        return [Hit(i, scores[i], payloads[i]) for i in found if i in payloads]

    def warm(
        self,
        ids: Iterable[int],
        dim: int,
        *,
        using: str = DENSE,
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """Read the dense vectors ``using`` of these points once, a slice at a time, so that
        the first searches do not pay for it. The vectors are memory-mapped and read on demand
        (``_COLD``): the first dense search of a session at 100k cards took 32 ms (median) and
        103 ms (p95) against 4-5 ms once its pages were read, while reading all of them this
        way took 1.2 s. Each slice is one exact search restricted to the slice's ids (a query
        holds the interpreter lock, so slices keep other requests waiting briefly).
        Returns how many points were read; stops early when ``should_stop`` says so.

        Nothing is read when searches go through the HNSW graph over the int8 copy (past
        :data:`EXACT_DENSE_POINTS`, :data:`STORE_LAYOUT` 3): they touch only the originals of
        the candidates they rescore, and reading every one would add them all to the process's
        RSS (261 MB at 100k cards) for nothing."""
        if self._points > EXACT_DENSE_POINTS and not graph_without_int8(
            self.folder / SHARD_DIR, using
        ):
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

    def keyword_count(self, text: str, *, phrase: bool = False) -> int:
        """How many points hold every word of ``text`` (or the phrase) by the full-text index:
        the candidates :meth:`keyword_search` ranks (its tokenizer, not a caller's, decides
        what a word is: ``woman_farmer`` holds ``woman``, ``doesn't`` holds ``doesn``)."""
        match = MatchPhrase(phrase=text) if phrase else MatchText(text=text)
        flt = Filter(must=[FieldCondition(key=keyword_field(text), match=match)])
        return int(self._shard.count(CountRequest(exact=True, filter=flt)))

    def _query(
        self, query: Any, limit: int, flt: Filter | None, params: SearchParams | None = None
    ) -> list[Hit]:
        req = QueryRequest(limit=limit, query=query, filter=flt, with_payload=True, params=params)
        return [
            Hit(int(p.id), float(p.score), as_payload(p.payload)) for p in self._shard.query(req)
        ]

    def retrieve(
        self, ids: Sequence[int], *, with_dense: bool = False, using: str = DENSE
    ) -> list[tuple[int, ChunkPayload, Any]]:
        """(id, payload, dense vector ``using`` or None) for the ids that exist."""
        if not ids:
            return []
        records = self._shard.retrieve(
            list(ids), with_payload=True, with_vector=[using] if with_dense else False
        )
        return record_tuples(records, using if with_dense else None)

    def count(self, path: str | None = None) -> int:
        flt = _path_filter([path]) if path is not None else None
        return int(self._shard.count(CountRequest(exact=True, filter=flt)))

    def paths(self) -> dict[str, int]:
        """Every card path in the shard with its number of points (at least one: the facet
        can still list a path whose points were all deleted)."""
        limit = max(16, self.count() + 1)
        resp = self._shard.facet(FacetRequest(key=PATH_FIELD, limit=limit, exact=True))
        return {str(h.value): int(h.count) for h in resp.hits if int(h.count) > 0}
