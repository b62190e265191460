"""Which language is a text in? English or not is the question the multilingual routing asks
(issue #17); which language, the question the lexical legs ask (their stemmer and tokenizer).

The English model reads English; anything else goes to the multilingual one. So the decision is
binary, and it must be right on a three-word query as on a card:

1. **Script.** Letters outside the Latin script (Cyrillic, Han, kana, Hangul, Arabic, Greek,
   Hebrew, Devanagari, Thai, ...) make up most of the text: not English. This settles Russian,
   Chinese, Japanese and every other non-Latin language at once.
2. **Latin script: function words.** German, French, Spanish, Italian, Portuguese and Dutch
   text is full of short function words ("der", "und", "les", "el", "que", "het") that English
   does not use, and English of its own ("the", "and", "of"). The text is English unless the
   other languages' words clearly outnumber the English ones; letters English does not write
   (ä, ß, é, ñ, ç, ...) count as one such word each, up to three.
3. **No evidence** (a short query of content words, "search inside vault"): English, the
   default model's language; the lexical legs answer it either way.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from zettel_lsp.notes.model import Card

LATIN: Final = "latin"
OTHER: Final = "other"
NONE: Final = "none"  # no letters at all

# Function words of English and of the Latin-script languages the multilingual model covers
# best; only words that are not also common English words.
ENGLISH_WORDS: Final = frozenset(
    "the and of to in is are was were be been it this that these those with for on at by from "
    "as or but not what which who how why when where can do does did have has had will would "
    "should could my your our their its an a i you we they he she there here than then into "
    "about over under between after before also only just very all any each some".split()
)
# language code -> its function words that are not also common English words
FUNCTION_WORDS: Final = {
    code: frozenset(words.split()) - ENGLISH_WORDS
    for code, words in {
        "de": "der die das den dem des und ist nicht ein eine einer einen mit von zu auf für sich "
        "auch wie wird werden oder aber bei nach aus wenn kann sind war ich du wir ihr sie es im "
        "zum zur über noch nur",
        "fr": "le la les un une des du et est sont pas pour dans avec sur que qui ce cette ces au "
        "aux par plus ou mais comme il elle nous vous ils elles être avoir fait",
        "es": "el los las es son para con por una unos unas del al lo como más pero su sus se muy "
        "también está están que",
        "pt": "é são não com uma os as um ao dos das pelo pela para por que se mais também",
        "it": "il gli di che è sono per con una della delle degli nel nella non come anche più ma",
        "nl": "het een van en is zijn niet met voor op te dat die ook maar als bij naar dan",
    }.items()
}
OTHER_WORDS: Final = frozenset().union(*FUNCTION_WORDS.values())
# letters English does not write, and the language they point to when function words are silent
_LETTER_LANGUAGE: Final = {
    **dict.fromkeys("äöüß", "de"),
    **dict.fromkeys("àâæçéèêëîïôœùûÿ", "fr"),
    **dict.fromkeys("ñáíóú", "es"),
    **dict.fromkeys("ãõ", "pt"),
    **dict.fromkeys("ìò", "it"),
    **dict.fromkeys("åø", "da"),
    **dict.fromkeys("ąćęłńśźż", "pl"),
    **dict.fromkeys("čďěňřšťů", "cs"),
}
_FOREIGN_LETTERS = frozenset(_LETTER_LANGUAGE)
MAX_LETTER_EVIDENCE = 3
SAMPLE_CHARS = 1500  # a card's language is read from its first characters (of prose)

EN: Final = "en"
# Scripts other than Latin, by code point range, and the language each stands for. Han without
# kana is Chinese; any kana makes Japanese (Japanese text mixes both). Cyrillic is read as
# Russian, the Cyrillic language the multilingual model knows.
_SCRIPTS: Final = (
    ("ja", re.compile("[\u3040-\u30ff\u31f0-\u31ff]")),
    ("zh", re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")),
    ("ko", re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
    ("ru", re.compile("[\u0400-\u052f]")),
    ("el", re.compile("[\u0370-\u03ff\u1f00-\u1fff]")),
    ("ar", re.compile("[\u0600-\u06ff\u0750-\u077f]")),
    ("he", re.compile("[\u0590-\u05ff]")),
    ("th", re.compile("[\u0e00-\u0e7f]")),
    ("hi", re.compile("[\u0900-\u097f]")),
)
_LATIN_RUN = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]+")
# letters of the scripts above and the others between Greek and Latin Extended Additional
_OTHER_RUN = re.compile(
    "[\u0370-\u1dff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+"
)
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
# languages written without spaces between words: their text needs a word segmenter
SEGMENTED: Final = frozenset({"zh", "ja", "ko", "th"})
HAS_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def script_of(text: str) -> str:
    """``latin`` when most letters are Latin, ``other`` when most are not, ``none`` without
    letters."""
    sample = text[:SAMPLE_CHARS]
    latin = sum(map(len, _LATIN_RUN.findall(sample)))
    other = 0 if sample.isascii() else sum(map(len, _OTHER_RUN.findall(sample)))
    if latin == other == 0:
        return NONE
    return LATIN if latin >= other else OTHER


# "Clearly outnumber": at least this many other-language words, and more than this many times
# the English ones. A query has a few words; a card has up to SAMPLE_CHARS of prose, where a
# list of names, eras or apps holds a few "de", "a" or "la" by chance.
QUERY_EVIDENCE: Final = (2, 1)
CARD_EVIDENCE: Final = (5, 2)


def language_of(text: str, evidence: tuple[int, int] = QUERY_EVIDENCE) -> str:
    """The language of ``text`` as an ISO 639-1 code (see the module): the language of its
    script when most letters are not Latin (``xx`` for a script not listed); for Latin text,
    ``en`` unless another language's function words (and letters) clearly outnumber the
    English ones, then that language. No evidence: ``en``.

    A card's language is read while the vault is indexed, so the words are found and counted
    by C code (a regular expression, set lookups through ``map``), not a Python loop."""
    sample = text[:SAMPLE_CHARS]
    script = script_of(sample)
    if script == NONE:
        return EN
    if script == OTHER:
        counts = [(len(rx.findall(sample)), code) for code, rx in _SCRIPTS]
        if counts[0][0] and counts[1][0]:  # kana beside Han: Japanese
            return "ja"
        n, code = max(counts, key=lambda c: c[0])
        return code if n else "xx"
    words = _LATIN_RUN.findall(sample.casefold())
    others = [w for w in words if w in OTHER_WORDS]
    letters: list[str] = []  # one per word with a letter English does not write, up to 3
    if not sample.isascii():
        hits = (next((c for c in w if c in _FOREIGN_LETTERS), "") for w in words if not w.isascii())
        letters = [_LETTER_LANGUAGE[c] for c in islice(filter(None, hits), MAX_LETTER_EVIDENCE)]
    other = len(others) + len(letters)
    at_least, times = evidence
    if other < at_least or other <= times * sum(map(ENGLISH_WORDS.__contains__, words)):
        return EN
    votes = Counter(dict.fromkeys(FUNCTION_WORDS, 0))
    votes.update(code for w in others for code, vocab in FUNCTION_WORDS.items() if w in vocab)
    votes.update(letters)
    return max(votes, key=votes.__getitem__)


def prose_of(text: str, masked: list[tuple[int, int]]) -> str:
    """The first :data:`SAMPLE_CHARS` characters of ``text`` that are prose: without the
    ``masked`` spans (frontmatter, code, comments; sorted) and URLs, which are no language."""
    parts: list[str] = []
    size = 0
    pos = 0
    for start, end in [*masked, (len(text), len(text))]:
        if start > pos:
            part = text[pos:start]
            parts.append(part)
            size += len(part)
            if size >= SAMPLE_CHARS:
                break
        pos = max(pos, end)
    return _URL.sub(" ", "".join(parts)[:SAMPLE_CHARS])


def is_english(text: str) -> bool:
    """Whether ``text`` is English (see the module): False for a non-Latin script or for Latin
    text whose function words are another language's; True otherwise, no evidence included."""
    return language_of(text) == EN


def card_language(card: Card) -> str:
    """A card's language: its title and prose (front matter, code and comments left out)."""
    return language_of(f"{card.title}\n{prose_of(card.text, card.masked)}", CARD_EVIDENCE)
