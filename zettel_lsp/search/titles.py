"""The title/alias leg: cards whose title or alias matches the query, strongest match first.

Match kinds, in rank order:
1. **exact**: the whole query is a title or alias ("bm25", "Reciprocal rank fusion");
2. **prefix**: a title or alias starts with the query (typing in a search box);
3. **covers**: a title or alias holds every content word of the query ("rank fusion" →
   "Reciprocal rank fusion"), shorter names first;
4. **inside**: a title or alias of two or more words (or one rare word) appears inside the query
   ("how does reciprocal rank fusion work"), longer names first.

A single common word that is a title ("Data", "Parser") only counts through kinds 1-3: found
inside a keyword query, it would push such cards above the right answer.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zettel_lsp.notes.mentions import normalise, phrases_in
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import STOPWORDS, Query, light_stem, normalise_text


@dataclass(frozen=True, slots=True)
class TitleMatch:
    path: str
    kind: str  # exact, prefix, covers, inside
    name: str  # the title or alias that matched


class TitleIndex:
    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        """``names``: (title or alias, card path) pairs."""
        owners: dict[str, set[str]] = {}
        for name, path in names:
            key = normalise(normalise_text(name))
            if key:
                owners.setdefault(key, set()).add(path)
        # tuples, not sets, once built (the index never changes; a new one replaces it): most
        # names have one owner and one stemmed form, and a tuple of one is a fifth of a set's size
        self._owners: dict[str, tuple[str, ...]] = {k: tuple(sorted(v)) for k, v in owners.items()}
        self._sorted = sorted(self._owners)
        word_index: dict[str, set[str]] = {}  # light stem -> names holding it
        stemmed: dict[str, set[str]] = {}  # stemmed name -> names
        for key in self._owners:
            for w in set(key.split()):
                word_index.setdefault(light_stem(w), set()).add(key)
            stemmed.setdefault(_stem_all(key), set()).add(key)
        # tuples here too (a query intersects a few)
        self._word_index = {k: tuple(v) for k, v in word_index.items()}
        self._stemmed = {k: tuple(sorted(v)) for k, v in stemmed.items()}
        # names inside a query are looked up span by span (notes/mentions.py, phrases_in), not
        # by an automaton over every name: queries are short, the vault's names many
        self._longest = max(map(len, self._owners), default=0)

    def search(self, query: Query, limit: int) -> list[TitleMatch]:
        if query.empty:
            return []
        q = normalise(query.text)
        out: dict[str, TitleMatch] = {}  # each card at its first (strongest) match

        def add(key: str, kind: str) -> None:
            for path in sorted(self._owners.get(key, ())):
                out.setdefault(path, TitleMatch(path, kind, key))

        if q in self._owners:
            add(q, "exact")
        for key in sorted(self._stemmed.get(_stem_all(q), ())):  # "map of content" = "Maps of..."
            add(key, "exact")
        i = bisect_left(self._sorted, q)
        prefixed: list[str] = []
        while i < len(self._sorted) and self._sorted[i].startswith(q) and len(prefixed) < limit * 4:
            prefixed.append(self._sorted[i])
            i += 1
        for key in sorted(prefixed, key=len):
            add(key, "prefix")
        content = [w for w in query.terms if w not in STOPWORDS] or list(query.terms)
        if content:
            holders = sorted((self._word_index.get(light_stem(w), ()) for w in content), key=len)
            common = set(holders[0]).intersection(*holders[1:]) if holders else set()
            for key in sorted(common, key=lambda k: (len(k.split()), k)):
                add(key, "covers")
        inside = {m.phrase for m in phrases_in(query.text, self._owners, self._longest, 3)}
        for key in sorted(inside, key=lambda k: (-len(k.split()), k)):
            rare_word = len(self._word_index.get(light_stem(key), ())) <= 1 and len(key) >= 6
            if len(key.split()) >= 2 or rare_word:
                add(key, "inside")
        return list(out.values())[:limit]


def exact_first(results: Sequence[CardResult], matches: Sequence[TitleMatch]) -> list[CardResult]:
    """Cards whose title or alias is the query (an ``exact`` match, up to case and plurals) move
    to the front, in their fused order: typing a card's name is asking for that card, as in a
    quick switcher, whatever the legs think of a card this short or generic ("Home", "Data")."""
    exact = {m.path for m in matches if m.kind == "exact"}
    if not exact:
        return list(results)
    first = [r for r in results if r.path in exact]
    for r in first:
        r.notes["exact_title"] = 1.0
    return first + [r for r in results if r.path not in exact]


def _stem_all(name: str) -> str:
    return " ".join(light_stem(w) for w in name.split())
