"""Parsed cards kept beside the index, so a restart does not parse every note again.

Measured on zettelkasten-13k (13,415 cards, 2 cores): reading and parsing every note for the graph
took 4.3 s of the ~9 s from ``initialized`` to "ready"; loading the cache takes about 1 s.

Entries are keyed by (vault-relative path, SHA-256 of the decoded text), the same hash the index
state keeps, and the file records :data:`CARD_FORMAT` (bump it whenever the parser or the
:class:`~zettel_lsp.notes.model.Card` type changes what a card holds) and the title rule the
cards were parsed under (``titleSource``). A missing, damaged or older cache, or one written
under another title rule, is ignored: the notes are parsed again. The cache is only ever a
shortcut; the notes are the truth.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

from zettel_lsp.notes.model import Card
from zettel_lsp.notes.pickle_file import read_pickle, write_pickle
from zettel_lsp.notes.scan import load_card
from zettel_lsp.notes.title_rule import TitleSource

log = logging.getLogger(__name__)

CACHE_FILE = "cards.pickle"
CARD_FORMAT = "cards-4"  # parser + Card layout version (3: front matter depth bounded; 4: packed)

Key = tuple[str, str]  # (path, sha256 of the text)


def text_sha256(text: str) -> str:
    """The content hash the index state records for a note."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_cache(folder: Path, title_source: TitleSource | str = TitleSource.AUTO) -> dict[Key, Card]:
    """The cached cards, if the cache was written by this format under ``title_source``."""
    path = folder / CACHE_FILE
    data = read_pickle(path, "parsing the notes again")
    if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
        return {}
    if data.get("title_source") != str(TitleSource(title_source)):
        log.info("card cache %s was parsed under another title rule; parsing again", path)
        return {}
    cards = data.get("cards")
    return cards if isinstance(cards, dict) else {}


def save_cache(
    folder: Path, cards: dict[Key, Card], title_source: TitleSource | str = TitleSource.AUTO
) -> None:
    """Write atomically (a crash leaves the old cache or none, never half of one)."""
    data = {"format": CARD_FORMAT, "title_source": str(TitleSource(title_source)), "cards": cards}
    write_pickle(folder / CACHE_FILE, data, "card cache")


def cached_cards(
    root: Path,
    files: Iterable[tuple[str, str]],
    cache_folder: Path,
    max_bytes: int,
    *,
    title_source: TitleSource | str = TitleSource.AUTO,
    shas: dict[str, str] | None = None,
) -> tuple[list[Card], list[str]]:
    """Cards for ``files`` ((path, sha256) as the index state knows them): from the cache when
    the (path, hash) is there and the cache was parsed under ``title_source``, else read and
    parsed now. Returns the cards and their problems, and rewrites the cache to hold exactly
    these cards. ``shas``, when given, receives each returned card's path and the hash of the
    text it was parsed from."""
    cache = load_cache(cache_folder, title_source)
    cards: list[Card] = []
    problems: list[str] = []
    fresh: dict[Key, Card] = {}
    hits = 0
    for rel, sha in files:
        card = cache.get((rel, sha))
        if card is not None:
            hits += 1
        else:
            loaded = load_card(root, rel, max_bytes, title_source=title_source)
            if loaded.card is None:
                problems.extend(loaded.read.problems)
                continue
            card = loaded.card
            sha = text_sha256(card.text)  # the file may have changed since the index saw it
        cards.append(card)
        problems.extend(card.problems)
        fresh[(rel, sha)] = card
        if shas is not None:
            shas[card.path] = sha
    if hits != len(cache) or hits != len(fresh):
        save_cache(cache_folder, fresh, title_source)
    log.info("cards for the graph: %d from the cache, %d parsed", hits, len(cards) - hits)
    return cards, problems
