"""The graph's rows in the index database: parsed cards and their unlinked mentions, so a
start neither parses every note nor searches every card for every title again.

``cards``: per card its path, the SHA-256 of the text it was parsed from (the hash the index
state keeps), the parser version and title rule it was parsed under (:func:`parsed_as`), its
title, id and text, and its other parts as JSON (``details``). A row whose hash or
``parsed_as`` differs is not used: the note is parsed again. A card whose front matter JSON
cannot carry exactly (a YAML value without a JSON form) gets no row and is parsed at every
start.

``mentions``: per card the digest of the text searched, the spans found and the card each
names; with the phrases searched for (in ``meta``), :meth:`LinkGraph.build` reuses them for the
cards whose text is the same and holds none of the titles that changed since.

The rows are only a shortcut; the notes are the truth.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zettel_lsp.graph.mention_index import MENTION_FORMAT, CachedMentions, MentionCache
from zettel_lsp.index.db import IndexDB, put_meta
from zettel_lsp.index.state import text_sha256
from zettel_lsp.notes.model import BlockId, Card, Heading, Link, LinkKind, Span, Tag
from zettel_lsp.notes.scan import load_card
from zettel_lsp.notes.title_rule import TitleSource

log = logging.getLogger(__name__)

# bump when the parser or the Card type changes what a card holds
CARD_FORMAT = "cards-5"
_MENTIONS_KEY = "mentions"  # in meta: the format, minimum length and phrases searched for


def parsed_as(title_source: TitleSource | str) -> str:
    return f"{CARD_FORMAT}:{TitleSource(title_source)}"


def _fields(part: Any) -> list[Any]:
    """A card part's fields in order (a span among them as a list of its own), as
    :func:`_card` reads them back."""
    values = [getattr(part, name) for name in part.__slots__]
    return [_fields(v) if isinstance(v, Span) else v for v in values]


def _to_json(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    raise TypeError(f"{type(value).__name__} has no JSON form")


def _from_json(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$datetime" in obj:
            return dt.datetime.fromisoformat(obj["$datetime"])
        if "$date" in obj:
            return dt.date.fromisoformat(obj["$date"])
    return obj


def _details(card: Card) -> str | None:
    """The card's parts beside path, title, id and text as JSON; None when its front matter
    would not come back the same."""
    parts = {
        "aliases": card.aliases,
        "tags": [_fields(t) for t in card.tags],
        "headings": [_fields(h) for h in card.headings],
        "links": [_fields(k) for k in card.links],
        "blocks": [_fields(b) for b in card.block_ids],
        "body": card.body_start_line,
        "masked": card.masked,
        "problems": card.problems,
        "replaced": card.decoded_with_replacement,
        "fm": card.frontmatter,
    }
    try:
        details = json.dumps(parts, default=_to_json, ensure_ascii=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    if json.loads(details, object_hook=_from_json)["fm"] != card.frontmatter:
        return None  # e.g. keys that are not strings
    return details


def _card(path: str, title: str, card_id: str | None, text: bytes, details: str) -> Card:
    d = json.loads(details, object_hook=_from_json)
    return Card(
        path,
        title,
        text.decode("utf-8", "surrogatepass"),
        aliases=d["aliases"],
        tags=[Tag(n, Span(*s) if s else None) for n, s in d["tags"]],
        card_id=card_id,
        headings=[Heading(*h) for h in d["headings"]],
        links=[
            Link(LinkKind(k), raw, Span(*s), t, sub, label)
            for k, raw, s, t, sub, label in d["links"]
        ],
        block_ids=[BlockId(*b) for b in d["blocks"]],
        frontmatter=d["fm"],
        body_start_line=d["body"],
        masked=[(a, b) for a, b in d["masked"]],
        problems=d["problems"],
        decoded_with_replacement=d["replaced"],
    )


def stored_cards(
    db: IndexDB,
    root: Path,
    files: Iterable[tuple[str, str]],
    max_bytes: int,
    *,
    title_source: TitleSource | str = TitleSource.AUTO,
) -> tuple[list[Card], list[str]]:
    """Cards for ``files`` ((path, sha256) as the index state knows them): from their rows
    when the hash and the parse settings match, else read and parsed now (and their rows
    written). Returns the cards and their problems; rows of other paths are deleted."""
    want = dict(files)
    tag = parsed_as(title_source)
    cards: dict[str, Card] = {}
    stale: list[str] = []
    with db.reading() as conn:  # row by row: the rows are not all held at once
        for path, sha, how, title, card_id, text, details in conn.execute(
            "SELECT path, sha256, parsed_as, title, card_id, text, details FROM cards"
        ):
            if want.get(path) == sha and how == tag:
                cards[path] = _card(path, title, card_id, text, details)
            else:
                stale.append(path)
    hits = len(cards)
    fresh: list[tuple[Card, str]] = []
    problems: list[str] = []
    for rel in want:
        if rel in cards:
            continue
        loaded = load_card(root, rel, max_bytes, title_source=title_source)
        if loaded.card is None:
            problems.extend(loaded.read.problems)
            continue
        cards[rel] = loaded.card
        fresh.append((loaded.card, text_sha256(loaded.card.text)))
    if stale or fresh:
        save_cards(db, fresh, title_source, drop=stale)
    log.info("cards for the graph: %d from the database, %d parsed", hits, len(fresh))
    ordered = [cards[p] for p in want if p in cards]
    for card in ordered:
        problems.extend(card.problems)
    return ordered, problems


def save_cards(
    db: IndexDB,
    cards: Iterable[tuple[Card, str]],
    title_source: TitleSource | str,
    *,
    drop: Iterable[str] = (),
) -> None:
    """Write the rows of ``cards`` ((card, sha256 of its text)) and delete those of ``drop``,
    in one transaction."""
    tag = parsed_as(title_source)
    rows = []
    gone = [(p,) for p in drop]
    for card, sha in cards:
        details = _details(card)
        if details is None:
            gone.append((card.path,))
            continue
        text = card.text.encode("utf-8", "surrogatepass")  # a note may hold lone surrogates
        rows.append((card.path, sha, tag, card.title, card.card_id, text, details))
    with db.transaction() as conn:
        conn.executemany("DELETE FROM cards WHERE path = ?", gone)
        conn.executemany(
            "INSERT OR REPLACE INTO cards "
            "(path, sha256, parsed_as, title, card_id, text, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def load_mentions(db: IndexDB) -> MentionCache | None:
    """The mentions a graph of this vault found, as :meth:`LinkGraph.build` reuses them; None
    when there are none of this format."""
    about = db.get(_MENTIONS_KEY)
    if not isinstance(about, dict) or about.get("format") != MENTION_FORMAT:
        return None
    # one string object per card path, however many mentions name it (a vault's titles are
    # often common words: millions of mentions name a few thousand cards)
    paths: dict[str, str] = {}

    def shared(names: list[str]) -> tuple[str, ...]:
        return tuple([paths.setdefault(n, n) for n in names])

    cards: dict[str, CachedMentions] = {}
    with db.reading() as conn:  # row by row: the rows are not all held at once
        for path, digest, blob, targets in conn.execute(
            "SELECT path, digest, spans, targets FROM mentions"
        ):
            spans = array("i")
            spans.frombytes(blob)
            cards[path] = (digest, spans, shared(json.loads(targets)))
    phrases = {p: shared(o) for p, o in about["phrases"].items()}
    return MentionCache(MENTION_FORMAT, int(about["min_length"]), phrases, cards)


def save_mentions(db: IndexDB, cache: MentionCache) -> None:
    """Replace the kept mentions with ``cache``'s, in one transaction."""
    about = {"format": cache.format, "min_length": cache.min_length, "phrases": cache.phrases}
    rows = [
        (path, digest, spans.tobytes(), json.dumps(list(targets)))
        for path, (digest, spans, targets) in cache.cards.items()
    ]
    with db.transaction() as conn:
        conn.execute("DELETE FROM mentions")
        conn.executemany(
            "INSERT INTO mentions (path, digest, spans, targets) VALUES (?, ?, ?, ?)", rows
        )
        put_meta(conn, {_MENTIONS_KEY: about})
