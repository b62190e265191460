"""What an indexer tells: a sync's report, its phases' progress, and what ``zettel.status`` and
the searches ask of an index (counts over its cards, their languages, whether multilingual
vectors exist). These are read without the indexer's lock (a sync holds it
for minutes in a large vault's lexical phase, and a search must answer with what is indexed,
issue #18), so each answer is taken from a copy of the card table and kept until it changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from zettel_lsp.index.state import FileState
from zettel_lsp.notes.language import EN
from zettel_lsp.notes.model import Card

# a language of at least this share of the cards is one the lexical legs read every query in
AUTO_SHARE = 0.02


@dataclass(slots=True)
class Progress:
    phase: str  # "scan", "lexical", "dense", "multilingual"
    done: int
    total: int
    detail: str = ""
    # the phase's work in model tokens, when its items differ in cost (embedding: a short
    # chunk costs a fraction of a long one); an ETA comes from these when set
    tokens_done: int = 0
    tokens_total: int = 0


ProgressFn = Callable[[Progress], None]


@dataclass(slots=True)
class SyncReport:
    cards: int = 0
    chunks: int = 0
    indexed: int = 0  # cards (re)chunked and stored: new + changed + renamed + re-chunked
    unchanged: int = 0
    deleted: int = 0
    renamed: int = 0
    new: int = 0  # cards not in the index before (a rename is not new)
    changed: int = 0  # cards whose text changed
    reused_vectors: int = 0
    embedded: int = 0  # chunks embedded by embed_pending
    embedded_multilingual: int = 0  # chunks embedded by embed_multilingual
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    cards_changed: list[Card] = field(default_factory=list)  # parsed cards, for the graph
    paths_removed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """'3 new, 1 changed, 89 renamed, 2 deleted' (counts that are 0 left out), or
        'no changes'. Each card is counted once: a renamed card is neither new nor deleted."""
        counts = ((getattr(self, what), what) for what in ("new", "changed", "renamed", "deleted"))
        return ", ".join(f"{n:,} {what}" for n, what in counts if n) or "no changes"


@dataclass(frozen=True, slots=True)
class Tally:
    """Counts over every card of the state, taken in one pass (see :meth:`Status.tally`)."""

    chunks: int = 0
    dense: int = 0  # cards with all their vectors
    multilingual: int = 0  # cards with all their multilingual vectors
    multilingual_foreign: int = 0  # of them, not English
    no_multilingual: int = 0  # cards without all their multilingual vectors
    no_multilingual_foreign: int = 0  # of them, not English


class Status:
    """The cached answers over the cards ``cards()`` returns (a copy of the card table). The
    indexer calls :meth:`changed` when cards or their flags change."""

    def __init__(self, cards: Callable[[], list[FileState]]) -> None:
        self._cards = cards
        self._version = 0  # bumped when cards or their flags change (see tally)
        self._tally: tuple[int, Tally] | None = None
        self._languages: dict[str, int] | None = None  # language -> cards
        self._multilingual_presence: tuple[bool, bool] | None = None  # see multilingual_presence

    def changed(self, *, languages: bool = False) -> None:
        """Cards or their flags changed (with ``languages``: cards were written)."""
        self._version += 1
        if languages:
            self._languages = None

    def tally(self) -> Tally:
        """Counts over every card (chunks, cards with vectors, ...), kept until the cards or
        their flags change (``zettel.status`` asks for them on every call)."""
        version = self._version
        cached = self._tally
        if cached is not None and cached[0] == version:
            return cached[1]
        files = self._cards()
        with_multilingual = [f for f in files if f.multilingual]
        multilingual_foreign = sum(f.lang != EN for f in with_multilingual)
        foreign = sum(f.lang != EN for f in files)
        tally = Tally(
            chunks=sum(f.chunks for f in files),
            dense=sum(f.dense for f in files),
            multilingual=len(with_multilingual),
            multilingual_foreign=multilingual_foreign,
            no_multilingual=len(files) - len(with_multilingual),
            no_multilingual_foreign=foreign - multilingual_foreign,
        )
        self._tally = (version, tally)  # a change meanwhile bumped the version: taken again
        return tally

    def languages(self) -> dict[str, int]:
        """The vault's languages with their numbers of cards, most cards first (read on every
        search and status, never under the lock: see the module docstring)."""
        langs = self._languages
        if langs is not None:
            return langs
        langs = self._languages = dict(Counter(f.lang for f in self._cards()).most_common())
        return langs

    def main_languages(self) -> tuple[str, ...]:
        """The languages of at least :data:`AUTO_SHARE` of the cards: those a query is also
        read in by the lexical legs (a few misread cards do not change every query's terms)."""
        langs = self.languages()
        floor = AUTO_SHARE * sum(langs.values())
        return tuple(lang for lang, n in langs.items() if n >= floor)

    def foreign_vault(self) -> bool:
        """``auto``'s test: some card is not in English. Its multilingual vectors are what an
        English query finds it by (the English model and BM25 cannot read it), so even one
        such card gets them; the English cards wait for a query in another language."""
        langs = self.languages()
        return sum(langs.values()) > langs.get(EN, 0)

    def multilingual_presence(self) -> tuple[bool, bool]:
        """(some card has multilingual vectors, some non-English card has): every search asks
        (whether the multilingual leg can run), so the cards are looked at once per opening
        and the answer then kept up to date as cards get their vectors. It may stay true after
        a card lost its vectors: that card is embedded again by the phase that follows."""
        if self._multilingual_presence is None:
            files = self._cards()
            self._multilingual_presence = (
                any(f.multilingual for f in files),
                any(f.multilingual and f.lang != EN for f in files),
            )
        return self._multilingual_presence

    def mark_multilingual(self, f: FileState) -> None:
        """The card got all its multilingual vectors."""
        f.multilingual = True
        if self._multilingual_presence is not None:
            self._multilingual_presence = (True, self._multilingual_presence[1] or f.lang != EN)

    def multilingual_dropped(self) -> None:
        """Every card lost its multilingual vectors (another model's)."""
        self._multilingual_presence = (False, False)
        self.changed()
