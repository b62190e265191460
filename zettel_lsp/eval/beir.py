"""Judged IR collections in BEIR layout, evaluated as vaults (``zettel-lsp eval-beir``).

A collection folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``), ``qrels/test.tsv`` (``query-id``, ``corpus-id``, ``score``) and optionally
``links.tsv`` (``src``, ``dst``, ``type``: a citation graph or title mentions).

:func:`materialise` writes one Markdown card per document (:func:`render_card`) into a folder of
its own, never into the collection; :func:`prepare_work_dir` owns the folder that holds that
vault and its index (the rules of zettel_lsp/workdir.py). Nothing here deletes a folder; a stale
card is removed only when the vault's own manifest says this module wrote it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from zettel_lsp.eval.evaluate import GoldenQuery
from zettel_lsp.notes.title_rule import NOT_IN_FILE_NAMES
from zettel_lsp.workdir import WorkDirError as WorkDirError
from zettel_lsp.workdir import check_apart, claim_work_dir, write_marker

# Bump when the cards' names or text change: work folders made by an older version are rebuilt.
# 2: an empty text stays empty (the chunker gives such a card a chunk of its title).
MATERIALISE_VERSION = 2
TOOL = "zettel-lsp eval-beir"  # in every marker this module writes
WORK_MARKER = "zettel-lsp-beir-work.json"  # in the work folder (holds vault/ and index/)
VAULT_MARKER = ".zettel-lsp-beir-vault.json"  # in the vault folder (a dot-file: not a card)
MAX_STEM_CHARS = 100
MAX_STEM_BYTES = 180  # file names are limited to 255 bytes; room for a suffix and ".md"
MAX_SUFFIX_BYTES = 24
CITATION_TYPES = frozenset(
    {"citation", "co-citation", "bib-coupling", "xref", "cites", "cited-by", "reference"}
)
QUERY_TYPE_FIELDS = ("category", "type", "hops")  # the first one present is the category

_SPACES = re.compile(r"\s+")
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


class BeirError(Exception):
    """A collection file is missing or garbled; ``path`` and ``line`` say where."""

    def __init__(self, path: Path, problem: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class BeirDoc:
    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirQuery:
    id: str
    text: str
    category: str | None = None  # a query type field, when the collection has one


@dataclass(slots=True)
class BeirCollection:
    root: Path
    name: str
    docs: list[BeirDoc]
    queries: list[BeirQuery]
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}
    links: list[tuple[str, str]] = field(default_factory=list)  # (src, dst) doc ids, file order
    link_types: frozenset[str] = frozenset()

    @property
    def links_heading(self) -> str:
        """``Cites`` for a citation graph, ``Links`` otherwise."""
        if self.link_types and self.link_types <= CITATION_TYPES:
            return "Cites"
        return "Links"


# ---------------------------------------------------------------------------------- loading


def load_beir(root: Path) -> BeirCollection:
    """Read a collection folder. Raises :class:`BeirError` naming the file (and line)."""
    root = root.resolve()
    if not root.is_dir():
        raise BeirError(root, "not a folder; give a BEIR collection folder")
    corpus = root / "corpus.jsonl"
    docs = [
        BeirDoc(
            doc_id,
            _field_text(obj, "title", corpus, line),
            _field_text(obj, "text", corpus, line),
        )
        for line, doc_id, obj in _records(corpus)
    ]
    qpath = root / "queries.jsonl"
    queries = [
        BeirQuery(
            qid,
            _field_text(obj, "text", qpath, line),
            next((str(obj[k]) for k in QUERY_TYPE_FIELDS if obj.get(k) not in (None, "")), None),
        )
        for line, qid, obj in _records(qpath)
    ]
    qrels = _load_qrels(root / "qrels" / "test.tsv")
    links, types = _load_links(root / "links.tsv")
    return BeirCollection(root, root.name, docs, queries, qrels, links, types)


def _records(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line, ``_id``, object) of a JSONL file whose ids must be unique."""
    if not path.is_file():
        raise BeirError(path, "missing (a BEIR collection needs corpus.jsonl and queries.jsonl)")
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise BeirError(path, f"cannot be read ({exc.strerror or exc})") from exc
    seen: set[str] = set()
    for n, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise BeirError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})", n) from exc
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BeirError(path, f"not a JSON object ({exc.msg})", n) from exc
        if not isinstance(obj, dict):
            raise BeirError(path, "not a JSON object", n)
        rid = _field_id(obj, path, n)
        if rid in seen:
            raise BeirError(path, f"duplicate _id {rid!r}", n)
        seen.add(rid)
        yield n, rid, obj


def _field_id(obj: Mapping[str, Any], path: Path, line: int) -> str:
    value = obj.get("_id")
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise BeirError(path, "no _id (a non-empty string)", line)
    return str(value)


def _field_text(obj: Mapping[str, Any], key: str, path: Path, line: int) -> str:
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BeirError(path, f"{key!r} is not a string", line)
    return value


def _tsv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            for n, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
                if row and any(c.strip() for c in row):
                    yield n, [c.strip() for c in row]
    except UnicodeDecodeError as exc:
        raise BeirError(path, f"not UTF-8 ({exc.reason})") from exc
    except OSError as exc:
        raise BeirError(path, f"cannot be read ({exc.strerror or exc})") from exc


def _load_qrels(path: Path) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise BeirError(path, "missing (the judgments: query-id, corpus-id, score)")
    qrels: dict[str, dict[str, int]] = {}
    for n, row in _tsv_rows(path):
        if n == 1 and row[0].lower() in ("query-id", "query_id", "qid"):
            continue  # the header
        if len(row) < 3:
            raise BeirError(path, "expected 3 tab-separated columns: query-id corpus-id score", n)
        try:
            grade = int(float(row[2]))
        except ValueError as exc:
            raise BeirError(path, f"score {row[2]!r} is not a number", n) from exc
        qrels.setdefault(row[0], {})[row[1]] = grade
    return qrels


def _load_links(path: Path) -> tuple[list[tuple[str, str]], frozenset[str]]:
    if not path.exists():
        return [], frozenset()
    links: list[tuple[str, str]] = []
    types: set[str] = set()
    for n, row in _tsv_rows(path):
        if n == 1 and row[0].lower() == "src":
            continue
        if len(row) < 2 or not row[0] or not row[1]:
            raise BeirError(path, "expected tab-separated columns: src dst [type]", n)
        links.append((row[0], row[1]))
        if len(row) > 2 and row[2]:
            types.add(row[2].lower())
    return links, frozenset(types)


# ---------------------------------------------------------------------------------- naming


def safe_stem(title: str) -> str:
    """``title`` as a file-name stem: unsafe characters become spaces, spaces collapse, no
    leading dot, at most :data:`MAX_STEM_CHARS` characters (cut at a word). May be empty."""
    s = unicodedata.normalize("NFC", title)
    s = _SPACES.sub(" ", NOT_IN_FILE_NAMES.sub(" ", s)).strip()
    s = s.lstrip(". ").rstrip(". ")
    if len(s) > MAX_STEM_CHARS or len(s.encode("utf-8")) > MAX_STEM_BYTES:
        cut = s[:MAX_STEM_CHARS]
        while len(cut.encode("utf-8")) > MAX_STEM_BYTES:
            cut = cut[:-1]
        word_end = cut.rfind(" ")
        s = (cut[:word_end] if word_end > len(cut) // 2 else cut).rstrip(". ")
    if s.lower().endswith((".md", ".markdown")):
        s = s[: s.rfind(".")] + " " + s[s.rfind(".") + 1 :]
    if s.split(".")[0].lower() in _RESERVED:
        s = ""
    return s


def _key(stem: str) -> str:
    """Names that collide on a case-insensitive file system, or in link resolution."""
    return unicodedata.normalize("NFC", stem).casefold()


def _suffix(doc: BeirDoc) -> str:
    """A short, safe, unique-per-id tag: the id minus a leading title (``Title#afb4c947`` →
    ``afb4c947``), or a hash of the id when that is unsafe or long."""
    rest = doc.id
    if doc.title and rest.startswith(doc.title) and len(rest) > len(doc.title):
        rest = rest[len(doc.title) :].lstrip("#_-: ")
    tag = safe_stem(rest)
    if not tag or len(tag.encode("utf-8")) > MAX_SUFFIX_BYTES or tag != rest:
        tag = hashlib.blake2b(doc.id.encode("utf-8"), digest_size=4).hexdigest()
    return tag


def card_stems(docs: Sequence[BeirDoc]) -> dict[str, str]:
    """Doc id → file stem, unique up to case. A title that is a safe file name shared with no
    other document names its card; every other card gets ``<safe title> (<id tag>)``.
    Deterministic: depends only on the documents and their order."""
    bases = {d.id: safe_stem(d.title) for d in docs}
    counts = Counter(_key(b) for b in bases.values() if b)
    stems = {i: b for i, b in bases.items() if b and counts[_key(b)] == 1}
    taken = {_key(b) for b in stems.values()}
    for d in docs:
        if d.id in stems:
            continue
        b = bases[d.id]
        first = f"{b} ({_suffix(d)})" if b else f"doc {_suffix(d)}"
        stem, n = first, 2
        while _key(stem) in taken:
            stem, n = f"{first} {n}", n + 1
        stems[d.id] = stem
        taken.add(_key(stem))
    return stems


def card_paths(collection: BeirCollection) -> dict[str, str]:
    """Doc id → vault-relative card path (what :func:`materialise` writes)."""
    return {i: f"{s}.md" for i, s in card_stems(collection.docs).items()}


# ---------------------------------------------------------------------------------- cards


def _clean(s: str) -> str:
    """Text that can be written as UTF-8 and parsed back: newlines as ``\\n``, no NUL, no lone
    surrogates."""
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return s.encode("utf-8", errors="replace").decode("utf-8")


def _link(stem: str, title: str) -> str:
    """``- [[stem]]``, or ``- [[stem|title]]`` when the title (without ``[]|``) differs."""
    label = _SPACES.sub(" ", re.sub(r"[\[\]|]", " ", _clean(title))).strip()
    return f"- [[{stem}|{label}]]\n" if label and label != stem else f"- [[{stem}]]\n"


def render_card(
    doc: BeirDoc, stem: str, targets: Sequence[tuple[str, str]], heading: str = "Links"
) -> str:
    """One card's Markdown: frontmatter (``id``, and ``title`` when the file name is not the
    title), the text, and ``## <heading>`` with one :func:`_link` per ``(stem, title)`` target."""
    title = _clean(doc.title).strip()
    text = _clean(doc.text).strip()
    meta: dict[str, str] = {"id": _clean(doc.id)}
    if title and (title != stem or text.startswith("#")):  # an opening H1 would win over the stem
        meta["title"] = title
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=1 << 30)
    parts = [f"---\n{front}---\n"]
    if text:
        parts.append(text + "\n")
    if targets:
        parts.append(f"## {heading}\n\n" + "".join(_link(s, t) for s, t in targets))
    return "\n".join(parts)


def materialise(collection: BeirCollection, folder: Path) -> dict[str, str]:
    """Write one card per document into ``folder``; returns doc id → vault-relative path.

    Deterministic and idempotent: a card whose text is unchanged is not rewritten (its mtime
    stays, so the index sees no change), and a card an earlier run wrote that the collection no
    longer has is removed. ``folder`` must be new, empty, or made by this function (it holds
    :data:`VAULT_MARKER`, listing the files written); it must not be, hold or be inside the
    collection. Raises :class:`WorkDirError` otherwise.
    """
    folder = folder.resolve()
    previous = _claim(folder, collection, VAULT_MARKER, "vault folder")
    written = set(previous.get("files", []))
    paths = card_paths(collection)
    stems = {i: p[:-3] for i, p in paths.items()}
    titles = {d.id: d.title for d in collection.docs}
    targets: dict[str, dict[str, None]] = {}
    for src, dst in collection.links:
        if src in stems and dst in stems and src != dst:
            targets.setdefault(src, {})[dst] = None
    folder.mkdir(parents=True, exist_ok=True)
    new_files = set(paths.values())
    # the manifest covers every file this run may write before the first one is written
    _write_marker(folder / VAULT_MARKER, collection, files=sorted(written | new_files))
    heading = collection.links_heading
    for doc in collection.docs:
        text = render_card(
            doc,
            stems[doc.id],
            [(stems[t], titles[t]) for t in targets.get(doc.id, {})],
            heading,
        )
        path = folder / paths[doc.id]
        data = text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
    for rel in sorted(written - new_files):
        stale = folder / rel
        # only a plain Markdown file directly in the folder, named in our own manifest
        if "/" not in rel and "\\" not in rel and rel.endswith(".md") and stale.is_file():
            stale.unlink()
    _write_marker(folder / VAULT_MARKER, collection, files=sorted(new_files))
    return paths


def judged_queries(collection: BeirCollection, paths: Mapping[str, str]) -> list[GoldenQuery]:
    """The queries that have a relevant judgment (grade > 0), in the collection's order, as
    :class:`GoldenQuery` over card paths. Category: the query's type field, else the collection
    name. A judged document missing from the corpus stays relevant (it lowers recall)."""
    out = []
    for q in collection.queries:
        judged = collection.qrels.get(q.id, {})
        relevant = frozenset(
            paths.get(doc_id, f"(not in corpus) {doc_id}")
            for doc_id, grade in judged.items()
            if grade > 0
        )
        if relevant:
            out.append(GoldenQuery(q.id, q.text, relevant, category=q.category or collection.name))
    return out


# ---------------------------------------------------------------------------------- work folder


@dataclass(slots=True)
class WorkDir:
    root: Path  # holds the marker, vault/ and (by default) index/
    vault: Path
    index: Path
    paths: dict[str, str]  # doc id -> card path
    reused: bool  # the vault was up to date: nothing was written


def default_work_dir(collection_root: Path, cache_dir: Path | None = None) -> Path:
    """One folder per collection in the user cache, keyed by its absolute path."""
    from zettel_lsp.index.sync import default_cache_dir

    resolved = collection_root.resolve()
    key = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-.") or "collection"
    return (cache_dir or default_cache_dir()) / "beir" / f"{slug[:40]}-{key}"


def content_hash(collection_root: Path) -> str:
    """A hash of what the vault is made of: corpus.jsonl, links.tsv and the card format."""
    h = hashlib.sha256(f"materialise-v{MATERIALISE_VERSION}\0".encode())
    for name in ("corpus.jsonl", "links.tsv"):
        path = collection_root / name
        h.update(name.encode() + b"\0")
        if path.is_file():
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def prepare_work_dir(
    collection: BeirCollection, work: Path, index_dir: Path | None = None
) -> WorkDir:
    """Claim ``work`` (new, empty, or holding our marker), and materialise the collection into
    ``work/vault`` unless the marker says that copy is of the same content. The index goes to
    ``index_dir`` or ``work/index``; an index folder outside ``work`` must be new, empty or
    marked by eval-beir too (it gets :data:`zettel_lsp.workdir.MARKER`). Raises
    :class:`WorkDirError` for a folder it must not use, before writing anything."""
    work = work.resolve()
    vault = work / "vault"
    index = (index_dir or work / "index").resolve()
    check_apart(work, collection.root, what="work folder", vault_what="collection folder")
    check_apart(index, collection.root, what="index folder", vault_what="collection folder")
    check_apart(index, vault, what="index folder", vault_what="vault copy")
    marker = _claim(work, collection, WORK_MARKER, "work folder")
    if work not in index.parents:  # an index folder of its own
        claim_work_dir(index, vault=None, tool=TOOL, what="index folder")
        write_marker(index, tool=TOOL, collection=str(collection.root))
    digest = content_hash(collection.root)
    if (
        marker.get("content_hash") == digest
        and marker.get("version") == MATERIALISE_VERSION
        and (vault / VAULT_MARKER).is_file()
    ):
        return WorkDir(work, vault, index, card_paths(collection), reused=True)
    work.mkdir(parents=True, exist_ok=True)
    _write_marker(work / WORK_MARKER, collection, content_hash=None)
    paths = materialise(collection, vault)
    _write_marker(work / WORK_MARKER, collection, content_hash=digest)
    return WorkDir(work, vault, index, paths, reused=False)


def _claim(folder: Path, collection: BeirCollection, marker_name: str, what: str) -> dict[str, Any]:
    """The marker's content when ``folder`` is ours, ``{}`` when it is new or empty; raises
    :class:`WorkDirError` for a folder with anything else in it or overlapping the collection."""
    return claim_work_dir(
        folder,
        vault=collection.root,
        tool=TOOL,
        marker=marker_name,
        what=what,
        vault_what="collection folder",
    )


def _write_marker(path: Path, collection: BeirCollection, **fields: Any) -> None:
    write_marker(
        path.parent,
        tool=TOOL,
        marker=path.name,
        version=MATERIALISE_VERSION,
        collection=str(collection.root),
        **fields,
    )
