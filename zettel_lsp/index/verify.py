"""Prove that an index holds exactly what its vault says it should (issue #12, "keep proving it").

:func:`verify` takes an open :class:`~zettel_lsp.index.sync.Indexer` (it holds the folder lock,
the store and the embedder) and compares, without changing anything:

1. **cards**: the notes the indexer would index (the same scan and reader) against the state's
   files and the shard's paths: missing, phantom, stale (the file changed since it was indexed),
   pending paths left over, and per-card point counts;
2. **chunks**: every card re-chunked as the indexer chunks it (same parser, title rule and token
   budget); each stored point must carry the payload the indexer would write (title, chunk index,
   heading, line range, text, embed hash) under the id :func:`point_id` gives it;
3. **keyword probes**: for a sample of cards, the rarest word of one chunk (and a two-word phrase
   starting with it) must find that card through ``store.keyword_search``;
4. **vectors**: for a sample of cards whose state says their vectors are done, every chunk has a
   dense vector, and re-embedding the chunk's embedded text gives the stored vector back (cosine
   at least :data:`MIN_COSINE`; the same text embedded twice gives 1.0 up to float rounding).

The report lists each mismatch with its kind, card and reason; ``ok`` is True when there is none.
A drifted vector is matched against the other re-embedded chunks, so a vector that belongs to
another card (a swap, a rename that kept old vectors) is named.

:func:`verify_folder` opens an index folder for checking only: it refuses (with an ``index``
mismatch) a folder whose state belongs to another vault, backend or model, which opening an
:class:`Indexer` would wipe or re-embed. :func:`quick_check` needs no lock: it compares the
saved state (``index.db``) with the folder while another process (a server) holds the index.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from zettel_lsp.index.chunker import Chunk, chunk_cards
from zettel_lsp.index.lexical import parse_note
from zettel_lsp.index.state import IndexState, read_state, text_sha256
from zettel_lsp.index.store_api import ChunkPayload, chunk_payload, point_id
from zettel_lsp.index.sync import Indexer, IndexSettings, chunker_id
from zettel_lsp.notes.language import card_language
from zettel_lsp.notes.reader import ReadResult, read_note
from zettel_lsp.notes.scan import ScanReport, iter_note_paths

MIN_COSINE = 0.99  # below this a stored vector is not the embedding of its chunk's text
PARSE_BATCH = 256  # cards chunked per tokenizer call
RETRIEVE_BATCH = 512  # point ids per store.retrieve call
EMBED_BATCH = 64  # texts per embedder.embed call

# Words the store's text index surely tokenizes as one token (ASCII letters, no digits or
# underscores around them): a probe that misses is then the index's fault, not the tokenizer's.
_WORD = re.compile(r"(?<![\w'’-])[A-Za-z]{4,}(?![\w'’-])")
_NEXT_WORD = re.compile(r"(?<![ \t])[ \t]+([A-Za-z]{3,})(?![\w'’-])")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One difference: ``kind`` is ``index`` (the folder cannot be judged), ``missing``,
    ``phantom``, ``stale``, ``pending``, ``miscounted``, ``chunk``, ``keyword``, ``vector`` (a
    vector missing) or ``drift`` (a vector not of its chunk's text): see the module docstring."""

    kind: str
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.path}: {self.reason}"


@dataclass(slots=True)
class VerifyReport:
    vault: str
    index_dir: str
    cards_on_disk: int = 0
    cards_in_state: int = 0
    cards_in_shard: int = 0
    chunks_expected: int = 0
    points_checked: int = 0
    keyword_probes: int = 0
    phrase_probes: int = 0
    gap_probes: int = 0  # words of the stored text that its BM25 text lacks (see _probe)
    vector_cards: int = 0  # cards whose vectors were re-embedded and compared
    vectors_checked: int = 0
    vectors_present: int = 0  # chunks whose vector presence was checked (all dense-done cards)
    cards_not_embedded: int = 0  # state says dense not done (vectors not judged)
    min_cosine: float | None = None
    mismatches: list[Mismatch] = field(default_factory=list)
    # keyword-leg misses of words only the stored text holds: a search limitation, not an
    # index inconsistency (they do not make ``ok`` False)
    gaps: list[Mismatch] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def add(self, kind: str, path: str, reason: str) -> None:
        self.mismatches.append(Mismatch(kind, path, reason))

    def counts(self) -> dict[str, int]:
        return dict(Counter(m.kind for m in self.mismatches))

    def to_json(self, limit: int = 200) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "min_cosine":
                out[f.name] = None if value is None else round(value, 6)
            elif f.name == "mismatches":
                out["mismatch_counts"] = self.counts()
                out[f.name] = [asdict(m) for m in value[:limit]]
            elif f.name == "gaps":
                out["keyword_gaps"] = len(value)
                out["keyword_gap_examples"] = [
                    {"path": m.path, "reason": m.reason} for m in value[:limit]
                ]
            else:
                out[f.name] = value
        return out

    def format(self, limit: int = 30) -> str:
        cos = "n/a" if self.min_cosine is None else f"{self.min_cosine:.4f}"
        lines = [
            f"Verify {'OK' if self.ok else 'FAILED'}: {self.cards_on_disk:,} notes, "
            f"{self.cards_in_state:,} cards in the state, {self.cards_in_shard:,} in the shard",
            f"  chunks: {self.points_checked:,} of {self.chunks_expected:,} points compared",
            f"  keyword probes: {self.keyword_probes:,} words, {self.phrase_probes:,} phrases, "
            f"{self.gap_probes:,} text-only words",
            f"  vectors: {self.vectors_present:,} present, {self.vectors_checked:,} re-embedded "
            f"({self.vector_cards:,} cards, min cosine {cos}); {self.cards_not_embedded:,} cards "
            "not embedded yet",
        ]
        if self.mismatches:
            kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(self.counts().items()))
            lines.append(f"  {len(self.mismatches):,} mismatches: {kinds}")
            lines.extend(f"  {m}" for m in self.mismatches[:limit])
            if len(self.mismatches) > limit:
                lines.append(f"  ... {len(self.mismatches) - limit:,} more")
        if self.gaps:
            lines.append(
                f"  note: {len(self.gaps):,} of {self.gap_probes:,} words found only in stored "
                "text (not in the BM25 text) are missed by keyword search (not an index "
                f"inconsistency), e.g. {self.gaps[0]}"
            )
        return "\n".join(lines)


def verify(
    indexer: Indexer,
    sample: int | None = 200,
    seed: int = 0,
    *,
    focus: Iterable[str] = (),
) -> VerifyReport:
    """Compare ``indexer``'s index with its vault (read-only; see the module docstring).

    Cards and chunks are checked for every card; keyword probes and re-embedded vectors for
    ``sample`` random cards (``None`` or a negative number: every card) plus the ``focus``
    cards (e.g. the ones a benchmark renamed or edited), drawn with ``seed``."""
    t0 = time.perf_counter()
    ix, state = indexer, indexer.state
    report = VerifyReport(str(ix.vault), str(ix.index_dir))
    chunker = chunker_id(ix.settings)
    if state.chunker != chunker:
        report.add(
            "index",
            str(ix.index_dir),
            f"chunked as {state.chunker}, the settings chunk as {chunker}: the next sync "
            "re-chunks every card",
        )
    texts: dict[str, ReadResult] = {}
    for rel in _note_paths(ix.vault, ix.settings):
        res = read_note(ix.vault / rel, ix.settings.max_file_bytes)
        if res.ok:
            texts[rel] = res
    hashes = {rel: text_sha256(res.text) for rel, res in texts.items()}
    shard = {p: n for p, n in ix.store.paths().items() if n > 0}
    stale = _compare_cards(report, hashes, state, shard)
    report.seconds["cards"] = round(time.perf_counter() - t0, 3)

    t1 = time.perf_counter()
    comparable = sorted((set(texts) & set(state.files)) - stale)
    chunks_of, titles = _chunk(ix, texts, comparable)
    report.chunks_expected = sum(len(c) for c in chunks_of.values())
    vectors: dict[int, Any] = {}  # point id -> stored dense vector (dense-done cards only)
    for start in range(0, len(comparable), RETRIEVE_BATCH // 4):
        batch = comparable[start : start + RETRIEVE_BATCH // 4]
        _check_points(ix, batch, chunks_of, titles, report, vectors)
    report.seconds["chunks"] = round(time.perf_counter() - t1, 3)

    t2 = time.perf_counter()
    rng = random.Random(seed)
    focus_set = {p for p in focus if p in chunks_of}
    chosen = _sample(sorted(chunks_of), sample, rng, focus_set)
    doc_freq: Counter[str] = Counter()
    for chunks in chunks_of.values():
        for chunk in chunks:
            doc_freq.update({w.lower() for w in _WORD.findall(chunk.text)})
    for rel in chosen:
        _probe(ix, rel, chunks_of[rel], doc_freq, rng, report)
    report.seconds["keywords"] = round(time.perf_counter() - t2, 3)

    t3 = time.perf_counter()
    _check_vectors(ix, [p for p in chosen if state.files[p].dense], chunks_of, vectors, report)
    report.seconds["vectors"] = round(time.perf_counter() - t3, 3)
    report.seconds["total"] = round(time.perf_counter() - t0, 3)
    return report


def _note_paths(vault: Path, settings: IndexSettings) -> Iterator[str]:
    """The notes of the vault, as the indexer scans them."""
    return iter_note_paths(
        vault,
        settings.ignore_globs,
        ScanReport(),
        follow_external_symlinks=settings.follow_external_symlinks,
    )


def _compare_cards(
    report: VerifyReport,
    hashes: Mapping[str, str],
    state: IndexState,
    shard: Mapping[str, int] | None,
    *,
    dense: bool = False,
) -> set[str]:
    """Report the notes (path -> content hash) the state (and the ``shard``'s point counts, when
    given) lacks, holds beyond them or holds in another version; returns the stale paths. With
    ``dense``, a card without all its vectors is a mismatch too."""
    on_disk, known = set(hashes), set(state.files)
    report.cards_on_disk = len(on_disk)
    report.cards_in_state = len(known)
    for rel in sorted(on_disk - known):
        report.add("missing", rel, "readable note not in the index state")
    if shard is not None:
        report.cards_in_shard = len(shard)
        for rel in sorted(on_disk - set(shard)):
            report.add("missing", rel, "readable note without points in the shard")
    for rel in sorted(known - on_disk):
        report.add("phantom", rel, "in the index state but not a readable note of the vault")
    if shard is not None:
        for rel in sorted(set(shard) - on_disk):
            report.add("phantom", rel, f"{shard[rel]} points in the shard, no such note")
    for rel in sorted(set(state.pending)):
        report.add("pending", rel, "left pending in the state (interrupted update)")
    stale: set[str] = set()
    for rel in sorted(on_disk & known):
        f = state.files[rel]
        if f.sha256 != hashes[rel]:
            stale.add(rel)
            report.add("stale", rel, "file content differs from the indexed version (sha256)")
        elif dense and not f.dense:
            report.add("vector", rel, "vectors not done yet")
        if shard is None:
            report.cards_not_embedded += not f.dense
        elif shard.get(rel, 0) not in (0, f.chunks):
            report.add(
                "miscounted", rel, f"{shard[rel]} points in the shard, state says {f.chunks}"
            )
    return stale


def _chunk(
    ix: Indexer, texts: Mapping[str, ReadResult], paths: list[str]
) -> tuple[dict[str, list[Chunk]], dict[str, tuple[str, str]]]:
    """The chunks of these notes as the indexer cuts them, and their (title, language)."""
    chunks_of: dict[str, list[Chunk]] = {}
    titles: dict[str, tuple[str, str]] = {}
    for start in range(0, len(paths), PARSE_BATCH):
        cards = [
            parse_note(rel, texts[rel], ix.settings.title_source)
            for rel in paths[start : start + PARSE_BATCH]
        ]
        counter, budget = ix.embedder.count_tokens, ix.settings.chunk_tokens
        for card, chunks in zip(cards, chunk_cards(cards, counter, budget), strict=True):
            chunks_of[card.path] = chunks
            titles[card.path] = (card.title, card_language(card))
    return chunks_of, titles


def _check_vectors(
    ix: Indexer,
    paths: list[str],
    chunks_of: dict[str, list[Chunk]],
    vectors: dict[int, Any],
    report: VerifyReport,
) -> None:
    """Re-embed the chunks of these dense-done cards and compare with their stored vectors."""
    todo: list[tuple[str, Chunk, Any]] = []
    for rel in paths:
        report.vector_cards += 1
        for chunk in chunks_of[rel]:
            vec = vectors.get(point_id(rel, chunk.index))
            if vec is not None:
                todo.append((rel, chunk, vec))
    fresh_of: list[tuple[str, int, Any]] = []  # (path, chunk, fresh embedding)
    drifted: list[tuple[str, Chunk, Any, float]] = []
    for start in range(0, len(todo), EMBED_BATCH):
        part = todo[start : start + EMBED_BATCH]
        fresh = ix.embedder.embed([chunk.embed_text for _, chunk, _ in part])
        for (rel, chunk, stored), new in zip(part, fresh, strict=True):
            fresh_of.append((rel, chunk.index, new))
            cos = cosine(stored, new)
            report.vectors_checked += 1
            report.min_cosine = cos if report.min_cosine is None else min(report.min_cosine, cos)
            if cos < MIN_COSINE:
                drifted.append((rel, chunk, stored, cos))
    for rel, chunk, stored, cos in drifted:
        report.add(
            "drift",
            rel,
            f"chunk {chunk.index}: stored vector has cosine {cos:.4f} with the embedding of its "
            f"text {_short(chunk.embed_text)!r}{_owner(stored, fresh_of)}",
        )


def _owner(vec: Any, fresh: list[tuple[str, int, Any]]) -> str:
    """Which re-embedded chunk the stored vector ``vec`` really is the embedding of, if any."""
    if not fresh:
        return ""
    mat = np.asarray([f[2] for f in fresh], dtype=np.float64)
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    v = np.asarray(vec, dtype=np.float64)
    sims = mat @ (v / max(float(np.linalg.norm(v)), 1e-12))
    i = int(np.argmax(sims))
    best, cos = fresh[i], float(sims[i])
    if cos < MIN_COSINE:
        return f"; closest re-embedded chunk: {best[0]} chunk {best[1]} (cosine {cos:.4f})"
    return f"; it is the embedding of {best[0]} chunk {best[1]} (cosine {cos:.4f})"


def verify_folder(
    vault: Path,
    index_dir: Path,
    settings: IndexSettings | None = None,
    *,
    cache_dir: Path | None = None,
    sample: int | None = 200,
    seed: int = 0,
    focus: Iterable[str] = (),
) -> VerifyReport:
    """Verify an index folder as it is, without syncing it first.

    Takes the folder's lock (``IndexLockedError`` while another process holds it). A folder the
    :class:`Indexer` would not take as it is (no state, a state of another vault, backend or
    model: opening it would wipe or re-embed it) is left untouched and reported as one
    ``index`` mismatch."""
    settings = settings or IndexSettings()
    report, state = _folder_report(vault, index_dir, settings)
    if state is None:
        return report
    with Indexer(vault, index_dir, settings, cache_dir=cache_dir) as ix:
        return verify(ix, sample, seed, focus=focus)


def _folder_report(
    vault: Path, index_dir: Path, settings: IndexSettings
) -> tuple[VerifyReport, IndexState | None]:
    """A report on the folder and its state; None (an ``index`` mismatch) if it cannot be judged."""
    report = VerifyReport(str(vault.resolve()), str(index_dir.resolve()))
    state = read_state(index_dir)
    if state is None:
        problem = "no index state (index.db): not indexed yet, or not an index folder"
    elif state.vault != str(vault.resolve()):
        problem = f"the index belongs to the vault {state.vault}"
    elif state.backend != settings.backend:
        problem = f"the index uses the backend {state.backend}, the settings {settings.backend}"
    elif not state.model.startswith(settings.model):
        problem = f"the index was embedded with {state.model}, the settings say {settings.model}"
    else:
        return report, state
    report.add("index", str(index_dir), problem)
    return report, None


def quick_check(
    vault: Path,
    index_dir: Path,
    settings: IndexSettings | None = None,
    *,
    dense: bool = True,
    memo: HashMemo | None = None,
) -> VerifyReport:
    """The cheap part of :func:`verify`, from the saved state alone (no lock, no shard, no
    model): every readable note in the state with its current content hash, nothing else in
    it, nothing pending and (with ``dense``) every card's vectors done. Usable while a server
    holds the index, to see when its saved state has caught up with the folder. Pass the same
    ``memo`` to repeated calls: only files whose size or mtime changed are read again."""
    settings = settings or IndexSettings()
    t0 = time.perf_counter()
    report, state = _folder_report(vault, index_dir, settings)
    if state is None:
        return report
    hashes = _disk_hashes(vault.resolve(), settings, {} if memo is None else memo)
    _compare_cards(report, hashes, state, None, dense=dense)
    report.seconds["total"] = round(time.perf_counter() - t0, 3)
    return report


HashMemo = dict[str, tuple[int, int, str | None]]  # path -> (size, mtime_ns, sha256 or None)


def _disk_hashes(vault: Path, settings: IndexSettings, memo: HashMemo) -> dict[str, str]:
    """sha256 of every readable note, as the indexer scans and reads them (``memo``: those
    known by size and mtime, updated)."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    for rel in _note_paths(vault, settings):
        seen.add(rel)
        try:
            st = (vault / rel).stat()
        except OSError:
            continue
        known = memo.get(rel)
        if known is None or known[:2] != (st.st_size, st.st_mtime_ns):
            res = read_note(vault / rel, settings.max_file_bytes)
            sha = text_sha256(res.text) if res.ok else None
            known = memo[rel] = (st.st_size, st.st_mtime_ns, sha)
        if known[2] is not None:
            out[rel] = known[2]
    for rel in set(memo) - seen:
        del memo[rel]
    return out


def _check_points(
    ix: Indexer,
    batch: Sequence[str],
    chunks_of: dict[str, list[Chunk]],
    titles: dict[str, tuple[str, str]],
    report: VerifyReport,
    vectors: dict[int, Any],
) -> None:
    """Compare the stored points of ``batch`` (cards in state and on disk) with their chunks."""
    state = ix.state
    # the ids the chunks should have, and any the state's count claims beyond them
    ids = [
        point_id(rel, i)
        for rel in batch
        for i in range(max(len(chunks_of[rel]), state.files[rel].chunks))
    ]
    stored: dict[int, tuple[ChunkPayload, Any]] = {}
    for start in range(0, len(ids), RETRIEVE_BATCH):
        for pid, payload, vec in ix.store.retrieve(
            ids[start : start + RETRIEVE_BATCH], with_dense=True
        ):
            stored[pid] = (payload, vec)
    for rel in batch:
        chunks = chunks_of[rel]
        f = state.files[rel]
        if len(chunks) != f.chunks:
            report.add(
                "miscounted", rel, f"re-chunking gives {len(chunks)} chunks, state says {f.chunks}"
            )
        for i in range(len(chunks), f.chunks):
            if point_id(rel, i) in stored:
                report.add("chunk", rel, f"chunk {i}: stored, but re-chunking gives {len(chunks)}")
        if not f.dense:
            report.cards_not_embedded += 1
        for chunk in chunks:
            pid = point_id(rel, chunk.index)
            got = stored.get(pid)
            if got is None:
                report.add("chunk", rel, f"chunk {chunk.index}: no point with id {pid}")
                continue
            report.points_checked += 1
            payload, vec = got
            have: Mapping[str, object] = payload
            title, lang = titles[rel]
            want: Mapping[str, object] = chunk_payload(rel, title, chunk, lang)
            diff = [k for k in want if have.get(k) != want[k]]
            if diff:
                detail = "; ".join(
                    f"{k} {_short(have.get(k))!r} != {_short(want[k])!r}" for k in diff[:3]
                )
                report.add("chunk", rel, f"chunk {chunk.index}: {detail}")
            if f.dense:
                report.vectors_present += 1
                if vec is None:
                    report.add(
                        "vector", rel, f"chunk {chunk.index}: no dense vector, state says embedded"
                    )
                else:
                    vectors[pid] = vec


def _sample(paths: list[str], sample: int | None, rng: random.Random, focus: set[str]) -> list[str]:
    if sample is None or sample < 0 or sample >= len(paths):
        return paths
    rest = [p for p in paths if p not in focus]
    picked = set(rng.sample(rest, min(sample, len(rest)))) | focus
    return [p for p in paths if p in picked]


def _probe(
    ix: Indexer,
    rel: str,
    chunks: list[Chunk],
    doc_freq: Counter[str],
    rng: random.Random,
    report: VerifyReport,
) -> None:
    """The rarest word of a random chunk (and the phrase it starts) must find the card.

    The probe word is one the chunk's BM25 text holds too (``keyword_search`` ranks the text
    matches by BM25, so that is what the index promises). A word that only the stored text holds
    (a heading line merged into the chunk, a link target shown by its alias) is probed as well;
    a miss there is a *gap* of the keyword leg, reported apart from the mismatches."""
    order = list(chunks)
    rng.shuffle(order)
    for chunk in order:
        words = [(m.group(0), m.end()) for m in _WORD.finditer(chunk.text)]
        if not words:
            continue
        in_bm25 = {w.lower() for w in _WORD.findall(chunk.embed_text)}
        rank = lambda w: (doc_freq[w[0].lower()], w[0].lower())  # noqa: E731
        both = [w for w in words if w[0].lower() in in_bm25]
        text_only = [w for w in words if w[0].lower() not in in_bm25]
        if both:
            word, end = min(both, key=rank)
            report.keyword_probes += 1
            if not _finds(ix, word, rel):
                df = doc_freq[word.lower()]
                report.add(
                    "keyword",
                    rel,
                    f"chunk {chunk.index}: word {word!r} (in {df} chunks) does not find the card",
                )
            nxt = _NEXT_WORD.match(chunk.text, end)
            if nxt is not None:
                phrase = f"{word} {nxt.group(1)}"
                report.phrase_probes += 1
                if not _finds(ix, phrase, rel, phrase=True):
                    report.add(
                        "keyword",
                        rel,
                        f"chunk {chunk.index}: phrase {phrase!r} does not find the card",
                    )
        if text_only:
            word, _ = min(text_only, key=rank)
            report.gap_probes += 1
            if not _finds(ix, word, rel):
                report.gaps.append(
                    Mismatch(
                        "keyword-gap",
                        rel,
                        f"chunk {chunk.index}: word {word!r} is in the stored text but not in "
                        "the BM25 text, and keyword_search does not return the card",
                    )
                )
        return
    # no probe-able word (e.g. a title of digits only): nothing to probe


def _finds(ix: Indexer, query: str, rel: str, *, phrase: bool = False) -> bool:
    """Whether ``query`` finds the card ``rel`` among every candidate the full-text index holds
    (its tokenizer counts more than ours: "woman_farmer" holds "woman"), so that a ranking
    cannot push the card out."""
    limit = ix.store.keyword_count(query, phrase=phrase) + 10
    return any(h.path == rel for h in ix.store.keyword_search(query, limit, phrase=phrase))


def cosine(a: Any, b: Any) -> float:
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norms if norms else 0.0


def _short(value: object, n: int = 60) -> str:
    text = str(value)
    return text if len(text) <= n else text[: n - 3] + "..."
