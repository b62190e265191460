"""Search without an index: titles plus a plain scan of the cards' text.

Used when the index cannot be opened (another zettel-lsp holds its lock, or it failed to open):
the server still answers, from the parsed cards it holds for the graph. Ranking is deliberately
simple (RRF of the title leg and a term-count scan); results say which leg found them.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterable

from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.notes.editing import paragraph_lines
from zettel_lsp.notes.model import Card
from zettel_lsp.search.fusion import CardResult, LegHit, fuse
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.titles import TitleIndex

_WORD = re.compile(r"\w+", re.UNICODE)


def scan_search(
    cards: Iterable[Card], titles: TitleIndex, text: str | Query, limit: int = 10
) -> list[CardResult]:
    """The cards for ``text`` (or the query as the caller already parsed it, whose terms then
    also serve the excerpts), best first."""
    query = text if isinstance(text, Query) else parse_query(text)
    if query.empty or limit <= 0:
        return []
    by_path = {c.path: c for c in cards}
    legs: dict[str, list[LegHit]] = {}
    matches = titles.search(query, limit * 3)
    legs["title"] = [
        LegHit(m.path, _chunk(by_path[m.path], [])) for m in matches if m.path in by_path
    ]
    terms = [t for t in query.terms if t] or [w.lower() for w in _WORD.findall(query.text)]
    scored: list[tuple[float, str]] = []
    for card in by_path.values():
        low = card.text.lower()
        counts = [low.count(t) for t in terms]
        if not all(counts):
            continue
        length = max(1, len(low) // 6)
        score = sum(math.log1p(c) for c in counts) / math.log(length + 10)
        scored.append((score, card.path))
    scored.sort(key=lambda x: (-x[0], x[1]))
    legs["scan"] = [LegHit(p, _chunk(by_path[p], terms)) for _, p in scored[: limit * 3]]
    return fuse(legs)[:limit]


def _chunk(card: Card, terms: list[str]) -> ChunkPayload:
    """The paragraph holding the first term (or the card's start), as a search-result chunk."""
    lines = card.text.split("\n")
    low_terms = [t.lower() for t in terms]
    body = range(card.body_start_line, len(lines))
    found = (i for i in body if any(t in lines[i].lower() for t in low_terms))
    hit_line = next(found, card.body_start_line)
    start, end = paragraph_lines(lines, hit_line, card.body_start_line)
    return _payload(card.path, card.title, start, end, "\n".join(lines[start : end + 1]))


def stored_title_search(db: IndexDB, query: Query, limit: int = 10) -> list[CardResult]:
    """Cards whose title, as the index database last stored it, holds every content word of
    ``query``: the query's own name first, then names that start with it, then shorter names.
    For the first seconds of a start, before the index and the graph are open; the titles may
    be a session old (the notes are read again as the start goes on). SQLite scans the titles
    (without the interpreter lock); its LIKE folds ASCII letters only, so each word is also
    asked for capitalised and in capitals."""
    terms = [w for w in query.terms if w]  # lower case
    if not terms or limit <= 0:
        return []
    clauses, params = [], []
    for w in terms:
        forms = dict.fromkeys((w, w[:1].upper() + w[1:], w.upper()))
        clauses.append("(" + " OR ".join(["title LIKE ? ESCAPE '\\'"] * len(forms)) + ")")
        params += ["%" + _LIKE_SPECIAL.sub(r"\\\g<0>", f) + "%" for f in forms]
    sql = (
        f"SELECT path, title FROM cards WHERE {' AND '.join(clauses)} "
        "ORDER BY length(title), title LIMIT ?"
    )
    try:
        with db.reading() as conn:
            rows = conn.execute(sql, (*params, limit * 20)).fetchall()
    except sqlite3.Error:  # a database of another version, or closed as the index opened
        return []
    wanted = query.text.casefold()
    words = [w.casefold() for w in terms]
    found: list[tuple[int, int, str, str]] = []
    for path, title in rows:
        name = title.casefold()
        if all(w in name for w in words):
            kind = 0 if name == wanted else 1 if name.startswith(wanted) else 2
            found.append((kind, len(name), path, title))
    found.sort()
    hits = [LegHit(path, _payload(path, title)) for _, _, path, title in found[:limit]]
    return fuse({"title": hits})


_LIKE_SPECIAL = re.compile(r"[%_\\]")


def _payload(path: str, title: str, start: int = 0, end: int = 0, text: str = "") -> ChunkPayload:
    """A search-result chunk of a card: its lines ``start``..``end``, ``text``."""
    return {
        "path": path,
        "title": title,
        "chunk": 0,
        "heading": "",
        "line_start": start,
        "line_end": end,
        "text": text,
    }
