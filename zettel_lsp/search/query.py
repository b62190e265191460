"""Query hygiene: caps, words, stopwords (removed as BM25 removes them at index time)."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

MAX_QUERY_CHARS = 512
MAX_QUERY_WORDS = 48
_NON_SPACE = re.compile(r"\S+")


def words_around(text: str, at: int, n: int = MAX_QUERY_WORDS) -> str:
    """At most ``n`` words of ``text`` centred on offset ``at``: a long paragraph is asked
    about where the cursor is (hover's related notes, completion's meaning search)."""
    words = list(_NON_SPACE.finditer(text))
    if len(words) <= n:
        return text
    here = next((i for i, w in enumerate(words) if w.end() >= at), len(words) - 1)
    first = max(0, min(here - n // 2, len(words) - n))
    return text[words[first].start() : words[first + n - 1].end()]


_WORD = re.compile(r"[\w][\w'’-]*", re.UNICODE)

# English stopwords as Snowball lists them (what the BM25 leg drops from documents and queries).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can cannot could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other ought our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()
)


@dataclass(frozen=True, slots=True)
class Query:
    raw: str
    text: str  # whitespace-normalised, capped
    words: tuple[str, ...]  # lower-cased words
    terms: tuple[str, ...]  # words without stopwords; the words themselves if none is left

    @property
    def empty(self) -> bool:
        return not self.words

    @property
    def keyword_text(self) -> str:
        return " ".join(self.terms)


def normalise_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def parse_query(raw: str) -> Query:
    text = normalise_text(raw)[:MAX_QUERY_CHARS]
    words = tuple(w.lower() for w in _WORD.findall(text))[:MAX_QUERY_WORDS]
    if len(words) == MAX_QUERY_WORDS:
        # cap long queries at a word boundary so legs see the same text
        m = list(_WORD.finditer(text))
        text = text[: m[MAX_QUERY_WORDS - 1].end()]
    terms = tuple(w for w in words if w not in STOPWORDS) or words
    return Query(raw, text, words, terms)


@functools.lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A light English stem so 'maps'/'map' and 'links'/'linking'/'linked' meet (the BM25 leg
    stems properly; this serves the title leg and the rerank's evidence)."""
    w = word.lower()
    for suffix in ("ations", "ation", "ings", "ing", "edly", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w
