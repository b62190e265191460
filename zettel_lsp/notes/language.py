"""Is a text English? The one question the multilingual routing asks (issue #17).

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

Why not a packaged language identifier: ``py3langid`` 0.4.0 (measured here on the 58 golden
queries) called 5 of the 52 English ones French, Danish, Latin or Nigerian Pidgin; it is a
4.6 MB wheel that takes 0.9 s to load its model, then 0.1 ms a query. The rules above need no
data file and call all 52 English, all 6 Russian and all 52 translated Russian queries right
(``tests/notes/test_language.py``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

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
_GERMAN = (
    "der die das den dem des und ist nicht ein eine einer einen mit von zu auf für sich auch wie "
    "wird werden oder aber bei nach aus wenn kann sind war ich du wir ihr sie es im zum zur über "
    "noch nur"
)
_FRENCH = (
    "le la les un une des du et est sont pas pour dans avec sur que qui ce cette ces au aux par "
    "plus ou mais comme il elle nous vous ils elles être avoir fait"
)
_SPANISH_PORTUGUESE = (
    "el los las y es son para con por una unos unas del al lo como más pero su sus se muy "
    "también está están é são não com uma os as um ao dos das pelo pela"
)
_ITALIAN = "il gli di che è sono per con una della delle degli nel nella non come anche più ma"
_DUTCH = "het een van en is zijn niet met voor op te dat die ook maar als bij naar dan"
OTHER_WORDS: Final = (
    frozenset(" ".join((_GERMAN, _FRENCH, _SPANISH_PORTUGUESE, _ITALIAN, _DUTCH)).split())
    - ENGLISH_WORDS
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_FOREIGN_LETTERS = frozenset("äöüßàâæçéèêëîïôœùûÿñáíóúãõåøìòąćęłńśźżčďěňřšťůž")
MAX_LETTER_EVIDENCE = 3
SAMPLE_CHARS = 4000  # a card's language is read from its first characters


def script_of(text: str) -> str:
    """``latin`` when most letters are Latin, ``other`` when most are not, ``none`` without
    letters."""
    latin = other = 0
    for ch in text[:SAMPLE_CHARS]:
        if not ch.isalpha():
            continue
        if ch.isascii() or "LATIN" in unicodedata.name(ch, ""):
            latin += 1
        else:
            other += 1
    if latin == other == 0:
        return NONE
    return LATIN if latin >= other else OTHER


def is_english(text: str) -> bool:
    """Whether ``text`` is English (see the module): False for a non-Latin script or for Latin
    text whose function words are another language's; True otherwise, no evidence included."""
    script = script_of(text)
    if script == OTHER:
        return False
    if script == NONE:
        return True
    english = other = 0
    letters = 0
    for m in _WORD.finditer(text[:SAMPLE_CHARS]):
        word = m.group(0).casefold()
        if word in ENGLISH_WORDS:
            english += 1
        elif word in OTHER_WORDS:
            other += 1
        if letters < MAX_LETTER_EVIDENCE and any(c in _FOREIGN_LETTERS for c in word):
            letters += 1
    other += letters
    # "clearly outnumber": more than the English words, and at least two of them
    return not (other >= 2 and other > english)
