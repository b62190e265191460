"""The one table of card names: paths, file names, titles, aliases and ids, each with its cards.

The graph owns it (``LinkGraph.names``) and files each card as it comes, changes or goes; the
resolver (:mod:`zettel_lsp.graph.resolver`) reads it to resolve links, the diagnostics to name
ties, duplicates and near misses ("did you mean"). Names are normalised as ``resolver.norm``.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
from rapidfuzz import fuzz, process

from zettel_lsp.graph.resolver import Stage, norm, stage_names
from zettel_lsp.notes.model import Card, strip_md

SUGGESTIONS = 3  # "did you mean" names per unresolved link
# the similarity (difflib's ratio, 0..1) a "did you mean" name needs; rapidfuzz's ratio (of the
# longest common subsequence) is never lower, so its names at this cutoff hold every such name
CUTOFF = 0.7
CACHED = 50_000  # near() answers kept (each until a name change could alter it)
_BATCH = 256  # names compared at once by near_many (a matrix of _BATCH x every name)
_NEAR_STAGES = (Stage.TITLE, Stage.ALIAS, Stage.STEM)  # the names near() offers, as written
_filed_as = attrgetter("path", "title", "aliases", "card_id")  # what a card is filed under


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A near-miss card for an unresolved link."""

    path: str
    title: str
    name: str  # the name that matched (a title, alias or file name, as written)
    score: float  # difflib's ratio, 0..1


def add_owner(table: dict[str, tuple[str, ...]], name: str, path: str) -> None:
    """File ``path`` under ``name``. Owners are sorted tuples (nearly every name has one owner:
    far smaller than sets); equal names share one string (a file name is usually the title)."""
    owners = table.get(name)
    if owners is None:
        table[sys.intern(name)] = (path,)
    elif path not in owners:
        table[name] = tuple(sorted((*owners, path)))


def drop_owner(table: dict[str, tuple[str, ...]], name: str, path: str) -> None:
    """Undo :func:`add_owner` (the name goes with its last owner)."""
    owners = table.get(name)
    if owners is not None:
        rest = tuple(p for p in owners if p != path)
        if rest:
            table[name] = rest
        else:
            del table[name]


class NameTable:
    """Every name of ``cards`` (the graph's cards, read for titles and names as written), cheap
    to update one card at a time. Read it inside the vault's read lock."""

    def __init__(self, cards: Mapping[str, Card]) -> None:
        self._cards = cards
        self._paths: dict[str, str] = {}  # norm(path without .md) -> path
        # name -> the cards filed under it (add_owner)
        self._tables: dict[Stage, dict[str, tuple[str, ...]]] = {
            stage: {} for stage in (Stage.STEM, Stage.TITLE, Stage.ALIAS, Stage.ID)
        }
        self._choices: list[str] | None = None  # near()'s names, made when first asked
        # near()'s answers by key; a change drops only those it could alter (_changed)
        self._cache: dict[str, tuple[Suggestion, ...]] = {}

    def add(self, card: Card) -> None:
        self._paths[norm(strip_md(card.path))] = card.path
        added: set[str] = set()
        for stage, names in stage_names(card):
            for name in names:
                add_owner(self._tables[stage], name, card.path)
            if stage in _NEAR_STAGES:
                added |= names
        self._changed(added, "")

    def remove(self, card: Card) -> None:
        self._paths.pop(norm(strip_md(card.path)), None)
        for stage, names in stage_names(card):
            for name in names:
                drop_owner(self._tables[stage], name, card.path)
        self._changed(set(), card.path)

    def replace(self, old: Card | None, new: Card) -> None:
        """File ``new`` instead of ``old`` (the card at its path before, if any); a card whose
        names are the same (an edit of its text) changes nothing."""
        if old is not None:
            if _filed_as(old) == _filed_as(new):
                return
            self.remove(old)
        self.add(new)

    def _changed(self, added: set[str], removed: str) -> None:
        """A card's names were filed (``added``) or a card taken out (``removed``, its path):
        an answer can change only if it holds that card, or if a new name is within the cutoff
        of its key (rapidfuzz's ratio bounds difflib's from above)."""
        self._choices = None
        if not self._cache:
            return
        stale = [k for k, found in self._cache.items() if any(s.path == removed for s in found)]
        if added:
            keys = list(self._cache)
            for name in added:
                hits = process.extract(
                    name, keys, scorer=fuzz.ratio, score_cutoff=100 * CUTOFF, limit=None
                )
                stale += [h[0] for h in hits]
        for k in stale:
            self._cache.pop(k, None)

    def owners(self, stage: Stage, name: str) -> set[str]:
        """The cards ``name`` names at resolution ``stage`` (file name, title, alias or id)."""
        return set(self._tables[stage].get(norm(name), ()))

    def owners_of_key(self, stage: Stage, key: str) -> tuple[str, ...]:
        """The cards filed under ``key`` (a name normalised as ``norm``) at ``stage``."""
        table = self._tables.get(stage)
        return table.get(key, ()) if table is not None else ()

    def at_path(self, key: str) -> str | None:
        """The card whose vault path (without ``.md``, normalised as ``norm``) is ``key``."""
        return self._paths.get(key)

    def near(self, text: str) -> tuple[Suggestion, ...]:
        """At most ``SUGGESTIONS`` cards whose title, alias or file name is close to ``text`` (a
        ratio of at least ``CUTOFF``), each card once under its closest name, closest first
        (ties: by path)."""
        key = norm(text)
        if key not in self._cache:
            self.near_many((key,))
        return self._cache[key]

    def near_many(self, texts: Iterable[str]) -> None:
        """Answer :meth:`near` for every one of ``texts`` ahead (a pass over many cards): the
        names are compared with all of them at once, a few hundred at a time."""
        todo = list(dict.fromkeys(k for k in map(norm, texts) if k not in self._cache))
        names = self._names()
        for i in range(0, len(todo), _BATCH):
            batch = todo[i : i + _BATCH]
            scores = process.cdist(
                batch, names, scorer=fuzz.ratio, score_cutoff=100 * CUTOFF, dtype=np.uint8
            )
            for key, row in zip(batch, scores, strict=True):
                at = np.flatnonzero(row)
                at = at[np.argsort(-row[at], kind="stable")]
                # a whole number, maybe rounded down: one more bounds the ratio from above
                hits = [(names[j], float(row[j]) + 1) for j in at]
                if len(self._cache) >= CACHED:
                    self._cache.clear()
                self._cache[key] = self._rank(key, hits) if key else ()

    def _names(self) -> list[str]:
        if self._choices is None:
            self._choices = list(dict.fromkeys(k for s in _NEAR_STAGES for k in self._tables[s]))
        return self._choices

    def _rank(self, key: str, hits: list[tuple[str, float]]) -> tuple[Suggestion, ...]:
        """The answer from ``hits`` (names with rapidfuzz's ratio, highest first). difflib's
        ratio orders them: it counts matching runs, not letters scattered over a name
        (rapidfuzz's ratio puts "Region" before "Relation" for "Religion"). rapidfuzz's ratio
        is an upper bound: once n cards score above a hit's, none can."""
        n = SUGGESTIONS
        matcher = difflib.SequenceMatcher(autojunk=False, b=key)
        scored: list[tuple[float, str, str]] = []
        for name, bound in hits:
            if len({p for s, p, _ in scored if -s > bound / 100 + 1e-9}) >= n:  # float slack
                break
            matcher.set_seq1(name)
            score = matcher.ratio()
            if score >= CUTOFF:
                scored += [
                    (-score, p, name) for s in _NEAR_STAGES for p in self._tables[s].get(name, ())
                ]
        scored.sort()
        best: dict[str, tuple[float, str]] = {}  # path -> its closest (score, name)
        for score, path, name in scored:
            if len(best) >= n:
                break
            best.setdefault(path, (-score, name))
        return tuple(
            Suggestion(p, self._cards[p].title, _written(self._cards[p], name), round(s, 3))
            for p, (s, name) in best.items()
        )


def _written(card: Card, key: str) -> str:
    """The name of ``card`` that normalises to ``key``, as written (title, alias, file name)."""
    return next((w for w in (card.title, *card.aliases, card.stem) if norm(w) == key), card.stem)
