"""Which name is a card's title, and whether its opening H1 is one more name (an alias).

Vaults follow one of two conventions:

- **The file name is the title** (Obsidian, most vaults): ``[[links]]`` use it and the app shows
  it. An H1 that opens such a note is usually a section ("Definition", "Todo", "Process"), and
  only sometimes another name for the card ("PSU" in ``Power Supply Unit.md``).
- **The file name is an identifier** (zk, Luhmann's Folgezettel, timestamp or UUID names): the
  opening H1 is the title.

:func:`card_title` applies one of four rules (:class:`TitleSource`); ``auto`` tells the two
conventions apart card by card, from the file name alone (:func:`is_identifier`). Everything
here is pure and local to one card: no vault-wide counts, because cards are parsed and cached
one at a time. docs/notes-and-links.md ("Titles") gives the figures this rule was chosen from
(``benchmarks/title_rule.py``).
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum


class TitleSource(StrEnum):
    """Where a card's title comes from (the ``titleSource`` setting)."""

    AUTO = "auto"  # frontmatter title > (opening H1 if the file name is an identifier) > file name
    FILENAME = "filename"  # always the file name
    H1 = "h1"  # opening H1 > frontmatter title > file name
    FRONTMATTER = "frontmatter"  # frontmatter title > file name; the H1 is never a name


TITLE_SOURCES: tuple[str, ...] = tuple(s.value for s in TitleSource)


# ------------------------------------------------------------------ identifiers

# Timestamps: 8 to 14 digits, a date (YYYYMMDD) then optionally hours and minutes (and seconds),
# with or without one separator between the parts: 20231121, 2023-11-21, 202311211530,
# 2023-11-21T15.30, 20231121153045. Also any bare run of 8-14 digits (Unix seconds, ...).
_TIMESTAMP = re.compile(
    r"\d{4}([-_.]?)\d{2}\1\d{2}(?:[-_.T ]?\d{2}[-_.:h]?\d{2}(?:[-_.:]?\d{2})?)?|\d{8,14}"
)
# zk's random ids (its default is 4 characters of [a-z0-9]): 4 to 8 lowercase letters and
# digits with at least one digit and one letter ("8m3k", "a1b2c3"). An all-letter id cannot
# be told from a word ("todo"); numbers are Folgezettel or timestamps.
_RANDOM_ID = re.compile(r"(?<![a-z0-9])(?=[a-z]{0,8}\d)(?=\d{0,8}[a-z])[a-z0-9]{4,8}")
# Luhmann's Folgezettel: a number of up to 4 digits, then numbers after a separator ("-", ".",
# "," or "_") and letter groups of one or two that alternate with numbers: "21", "1a", "1a2b",
# "21-3a2", "21.3a2", "1,1a", "1.2.3". Not "abc1" (three letters in a row), nor "12345" (five
# digits or more in a row; 8 to 14 are a timestamp).
_FOLGEZETTEL = re.compile(
    r"\d{1,4}(?:[-.,_]\d{1,4})*(?:[-.,_]?[a-z]{1,2}[-.,_]?\d{1,4}(?:[-.,_]\d{1,4})*)*"
    r"(?:[-.,_]?[a-z]{1,2})?"
)
_UUID = re.compile(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE
)


_IDENTIFIERS = (
    ("timestamp", _TIMESTAMP),
    ("Folgezettel", _FOLGEZETTEL),
    ("zk id", _RANDOM_ID),
    ("UUID", _UUID),
)


def identifier_kind(stem: str) -> str | None:
    """What kind of identifier a file name (without ``.md``) is: "timestamp", "Folgezettel",
    "zk id" or "UUID"; None for a name. A word ("notes", "todo") or a name with an id in front
    ("202311211530 Atomic notes") is a name. Tool names shaped like zk ids ("boto3",
    "flake8") are read as identifiers: their opening H1 is the title unless a section heading."""
    s = stem.strip()
    return next((kind for kind, p in _IDENTIFIERS if p.fullmatch(s)), None)


def is_identifier(stem: str) -> bool:
    """Whether a file name is an identifier rather than a name (:func:`identifier_kind`)."""
    return identifier_kind(stem) is not None


# File names that say where a note sits rather than what it is about: the H1 of such a note may
# be its only real name ("Home.md" opens with "# Obsidian Help"), so it is kept as an alias even
# though it shares no word with the file name (it must still pass the other tests).
PLACEHOLDER_STEMS = frozenset(
    "readme index _index home license licence copying untitled welcome start".split()
)
_UNTITLED_N = re.compile(r"untitled(?: \d+)?")

# ------------------------------------------------------------------ section words

# Words that name a section's role (what kind of text follows), not a topic. An H1 made only of
# these (plus stop words and numbers: "Todo", "Definition", "Example 1", "Table of Contents",
# "Key Concepts", "Thought Experiment") is a section heading: it is never an alias, and it is
# not a title even in a note named by an identifier. Grounded in the opening H1s that differ
# from the file name on the shared vaults zettelkasten-13k and vaultofknowledge: every word of
# a heading that opens two cards or more there is here, except topics ("Electricity", "XML",
# "Local (Kerala, India)"); plus the usual headings of documentation, note templates and course
# notes. Misspellings are matched too (:func:`_typo_of`: "Defintion", "Installaiton").
SECTION_WORDS = frozenset(
    """
    todo to-do tasks task done ideas idea questions question goals goal plan plans log journal
    agenda inbox review reviews reflection reflections thoughts takeaways highlights quotes quote
    status progress next later issues issue problems problem bugs fixes changes changelog
    updates update read reading watch watching refer listen misc miscellaneous other others more
    extra extras additional various general main core key important basic basics fundamental
    fundamentals advanced essentials formal simple specific specifics details detail info
    information overview introduction intro summary abstract background foreword preface outline
    contents content toc table tables index appendix references reference sources source
    resources links link related see also further bibliography footnotes notes note template
    templates boilerplate draft list lists description purpose scope rationale context
    considerations aspects principles points chapter chap section part parts week day lesson lecture
    module step steps stage stages phase phases case cases study studies
    definition definitions theorem theorems lemma lemmas corollary corollaries proof proofs
    example examples exercise exercises solution solutions answer answers formula formulas
    formulae equation equations notation axiom axioms property properties law laws rule rules
    criterion criteria claim claims argument arguments premise premises conclusion conclusions
    thesis theses hypothesis intuition motivation explanation remark remarks observation
    observations derivation statement proposition conjecture method methods methodology approach
    procedure procedures process processes technique techniques strategy strategies test tests
    experiment experiments thought analysis result results discussion findings evaluation
    comparison concept concepts terms term terminology glossary vocabulary definitions types type
    kinds categories classification characteristics features feature advantages disadvantages
    pros cons benefits drawbacks limitations uses use usage applications application
    implementation implementations structure anatomy components diagram figure visualization
    installation install installing setup set configuration configurations config settings
    commands command options requirements prerequisites dependencies getting started quickstart
    guide guides tutorial tutorials how-to code snippet snippets syntax tools tool tips
    tricks troubleshooting debugging testing maintenance deployment build building running run
    output outputs input inputs errors error faq recon enumeration exploitation vulnerabilities
    vulnerability mitigation mitigations detection challenge challenges writeup standards
    standard protocol protocols plugins plugin apps talks writings papers given objection
    objections soln wts corrolary
    """.split()
)

_STOP_WORDS = frozenset(
    """
    a an the of and or in on at to for with by from vs v via as is are be into about its it this
    that these those what how why when where which who my your our their do does not no though
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:['’\-+][^\W_]+)*\+*", re.UNICODE)
# What ends a wikilink's name or starts its label, heading or block part: no title holds it.
_BREAKS_WIKILINKS = r"|#^\[\]"
_NOT_IN_TITLES = re.compile(rf"[{_BREAKS_WIKILINKS}\n\r]")
# What a card's file name cannot hold: what breaks a path or a wikilink, control characters, and
# what Windows file names cannot hold (``: * ? " < >``), which Obsidian refuses everywhere. Off
# Windows a vault may hold names with "?" or ">", and a rename may give them back (..._HERE).
_BREAKS_LINKS = rf"\\/{_BREAKS_WIKILINKS}\x00-\x1f\x7f"
NOT_IN_FILE_NAMES = re.compile(rf'[{_BREAKS_LINKS}:*?"<>]')
NOT_IN_FILE_NAMES_HERE = NOT_IN_FILE_NAMES if os.name == "nt" else re.compile(f"[{_BREAKS_LINKS}]")
_COMPACT = re.compile(r"[\s\-_.·]+")
_LIST_NUMBER = re.compile(r"(?<!\d)\d+[.)]\s")
# A capital after the first letter, or a digit: "PSU", "MicroSD", "IPv6" (not "Transformations")
_NAME_LIKE_WORD = re.compile(r"\w[A-Z]|\d")
MAX_ALIAS_WORDS = 10  # a longer opening H1 is a sentence, not a name
MAX_EXTRA_WORDS = 1  # an alias may name the file name plus one word ("Smartphone GPUs")


def _fold(s: str) -> str:
    return " ".join(unicodedata.normalize("NFC", s).casefold().split())


def same_name(a: str, b: str) -> bool:
    """Equal up to case, spacing and the characters a file name cannot hold (``?``, ``:``,
    ``#``, ...): "Lattice From Basis" is the file name ``Lattice from Basis.md``, and
    "What is DevOps?" is ``What is DevOps.md``."""
    return _fold(NOT_IN_FILE_NAMES.sub(" ", a)) == _fold(NOT_IN_FILE_NAMES.sub(" ", b))


def can_be_title(text: str) -> bool:
    """Whether a title or heading may be ``text``: not blank, no leading or trailing blanks, no
    line break, nothing that ends a wikilink's name (``| # ^ [ ]``)."""
    return bool(text.strip()) and text == text.strip() and not _NOT_IN_TITLES.search(text)


def _singular(w: str) -> str:
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _words(s: str) -> list[str]:
    """Content words, case-folded and singular: no stop words, no numbers."""
    found = _WORD.findall(unicodedata.normalize("NFC", s).casefold())
    words = (w.removesuffix("'s").removesuffix("’s") for w in found)
    return [_singular(w) for w in words if w not in _STOP_WORDS and any(c.isalpha() for c in w)]


MIN_TYPO_LETTERS = 8  # shorter words are not matched up to a typo ("format" is not "formal")


def _typo_of(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with two neighbouring letters swapped ("Installaiton") or one
    letter left out or doubled ("Defintion", "Comparrison"), away from its first two and last
    two letters: a changed letter, or a change at either end, makes another word more often
    than a typo ("rotation" / "notation", "rational" / "rationale", "imitation" /
    "limitation")."""
    if len(a) < MIN_TYPO_LETTERS or abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return (
            len(diff) == 2
            and 2 <= diff[0] == diff[1] - 1 < len(a) - 3
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(2, len(long) - 2))


_SECTION_FOLDED = frozenset(_singular(w) for w in SECTION_WORDS) | SECTION_WORDS


@functools.lru_cache(maxsize=8192)
def _is_section_word(word: str) -> bool:
    """A section word (case-folded, singular), or a misspelling of one (:func:`_typo_of`)."""
    if word in _SECTION_FOLDED:
        return True
    return len(word) >= MIN_TYPO_LETTERS and any(_typo_of(word, v) for v in _SECTION_FOLDED)


def is_section_heading(text: str) -> bool:
    """A heading made only of section words, stop words and numbers ("Todo", "Example 1",
    "Table of Contents", "Formal Defintion"), or of no words at all ("2025")."""
    return all(_is_section_word(w) for w in _words(text))


def _is_name_shaped(h1: str) -> bool:
    """Not a formula, a question, a label, a numbered list item or a sentence."""
    s = h1.strip()
    return not (
        "$" in s
        or s.endswith(("?", ":"))
        or _LIST_NUMBER.match(s)
        or len(s.split()) > MAX_ALIAS_WORDS
        or not any(ch.isalpha() for ch in s)
    )


_ACRONYM = re.compile(r"[A-Za-z]{2,8}")


def _acronyms(raw: str) -> set[str]:
    """Words written as acronyms (two capitals or more: "PSU", "OSI", "IUPAC"), case-folded."""
    return {t.casefold() for t in _ACRONYM.findall(raw) if sum(ch.isupper() for ch in t) >= 2}


def _distinctive(words: list[str]) -> list[bool]:
    """Which of a name's content words are distinctive: those that are not section words, or
    all of them when every one is ("Motivation", "Types of Experiments")."""
    flags = [not _is_section_word(w) for w in words]
    return flags if any(flags) else [True] * len(words)


def _extra_words(name: str, h1: str) -> int | None:
    """How many distinctive words ``h1`` adds to ``name``, or None when it does not name every
    distinctive word of ``name`` (see :func:`_distinctive`). A word is
    named by the same word (singular or plural), a misspelling of it (:func:`_typo_of`), two
    neighbouring words written as one ("Life Cycle" / "Lifecycle"), or initials, either way
    ("PSU" / "Power Supply Unit", "OSI" / "Open Systems Interconnection")."""
    nw, hw = _words(name), _words(h1)
    covered = [False] * len(nw)
    used = [False] * len(hw)
    for i, w in enumerate(nw):  # the same word, a misspelling, two words written as one
        for k, h in enumerate(hw):
            if w == h or _typo_of(w, h):
                covered[i] = used[k] = True
                break
            if k + 1 < len(hw) and w == h + hw[k + 1]:
                covered[i] = used[k] = used[k + 1] = True
                break
    h_acr = _acronyms(h1)
    for k, a in enumerate(hw):  # an acronym in the H1 for a run of the name's words
        if a in h_acr:
            for i in range(len(nw) - len(a) + 1):
                if "".join(w[0] for w in nw[i : i + len(a)]) == a:
                    covered[i : i + len(a)] = [True] * len(a)
                    used[k] = True
    n_acr = {_singular(a) for a in _acronyms(name)}
    for i, w in enumerate(nw):  # an acronym in the name for a run of the H1's words
        if w in n_acr and not covered[i]:
            for k in range(len(hw) - len(w) + 1):
                if "".join(x[0] for x in hw[k : k + len(w)]) == w:
                    covered[i] = True
                    used[k : k + len(w)] = [True] * len(w)
                    break
    if any(d and not c for d, c in zip(_distinctive(nw), covered, strict=True)):
        return None
    return sum(1 for k, h in enumerate(hw) if not used[k] and not _is_section_word(h))


@dataclass(frozen=True, slots=True)
class H1Verdict:
    """What :func:`judge_opening_h1` made of an opening H1 that is not the title."""

    alias: bool
    reason: str  # "alias", or why not: see REASONS


REASONS = {
    "same name": "the title or file name up to case and characters a file name cannot hold",
    "not a name": "a formula, question, label, numbered item or sentence",
    "section heading": "only section words (Todo, Definition, Example 1, Table of Contents)",
    "part of the name": "names only some of the file name's distinctive words: a broader term",
    "unrelated": "does not name the file name's distinctive words",
    "alias": "kept as an alias",
}


def judge_opening_h1(h1: str, title: str, stem: str) -> H1Verdict:
    """Whether an opening H1 that lost the title to ``title`` is an alias of the card.

    An alias is another name for the same card, so it must look like a name and name what the
    title or the file name names. The *distinctive words* of a name are its content words
    (no stop words, no numbers; plurals folded) that are not :data:`SECTION_WORDS`. In order:

    1. **same name**: equal to the title or file name up to case and the characters a file name
       cannot hold: nothing to add;
    2. **not a name**: contains ``$`` (a formula), ends in ``?`` or ``:``, starts like a list
       item ("1. "), has more than :data:`MAX_ALIAS_WORDS` words, or no letter;
    3. **section heading**: no distinctive word ("Todo", "Example 1", "Table of Contents");
    4. **part of the name**: its distinctive words are some, not all, of the title's or file
       name's ("Supply" in ``Supply & Demand.md``, "Theorem" is caught by 3): a broader term;
    5. **alias** when it names every distinctive word of the title or of the file name (see
       :func:`_extra_words`: plurals, misspellings, "Lifecycle" / "Life Cycle", acronyms either
       way) and adds at most :data:`MAX_EXTRA_WORDS` distinctive word: the same name in another
       form ("Inelastic Collisions", "PSU" in ``Power Supply Unit.md``, "Open Systems
       Interconnection Model" in ``OSI Model.md``) or that name with a qualifier or a section
       word ("Camera Serial Interface (CSI)", "Types of Cameras" in ``Camera.md``); or when it
       is that name without spaces or hyphens ("MicroSD" / ``Micro SD.md``). An H1 of one plain
       word (no capital inside, no digit) must be the whole file name, plurals aside: "Series"
       is not an alias of ``Pandas Series.md``, nor "Transformations" of ``Chapter 1.4 -
       Transformations.md``. Always an alias when the file name is a placeholder (``Home``,
       ``README``, ``index``: :data:`PLACEHOLDER_STEMS`);
    6. otherwise **unrelated**: a section under its own heading ("Installation" in
       ``Ethereum Toolkit.md``, "Local Variable" in ``Ruby Variables.md``).

    A name that is an identifier (a timestamp, a zk id, ...) is not compared.
    """
    if any(same_name(h1, n) for n in (title, stem) if n):
        return H1Verdict(False, "same name")
    if not _is_name_shaped(h1):
        return H1Verdict(False, "not a name")
    if is_section_heading(h1):
        return H1Verdict(False, "section heading")
    names = [n for n in dict.fromkeys((title, stem)) if n and not is_identifier(n)]
    hw = _words(h1)
    distinct = {w for w, d in zip(hw, _distinctive(hw), strict=True) if d}
    plain_word = len(hw) == 1 and not _NAME_LIKE_WORD.search(h1)
    for name in names:
        nw = _words(name)
        if distinct < {w for w, d in zip(nw, _distinctive(nw), strict=True) if d} or (
            plain_word and set(hw) < set(nw)
        ):
            return H1Verdict(False, "part of the name")
    placeholder = _fold(stem) in PLACEHOLDER_STEMS or bool(_UNTITLED_N.fullmatch(_fold(stem)))
    for name in names:
        if plain_word and set(hw) != set(_words(name)):
            continue  # one plain word is an alias only as the whole name ("Collisions")
        extra = _extra_words(name, h1)
        if (extra is not None and extra <= MAX_EXTRA_WORDS) or _COMPACT.sub(
            "", _fold(h1)
        ) == _COMPACT.sub("", _fold(name)):
            return H1Verdict(True, "alias")
    if placeholder or not names:
        return H1Verdict(True, "alias")
    return H1Verdict(False, "unrelated")


def card_title(
    stem: str,
    frontmatter_title: str | None,
    opening_h1: str | None,
    source: TitleSource | str = TitleSource.AUTO,
) -> tuple[str, list[str]]:
    """A card's title and the extra aliases the losing names give, under ``source``.

    ``stem`` is the file name without ``.md``; ``frontmatter_title`` the frontmatter ``title``;
    ``opening_h1`` the text of an H1 that opens the note (its first non-blank line, not just a
    link), or None. The rules:

    - ``auto`` (default): frontmatter title > file name, except that an opening H1 is the title
      when the file name is an identifier (:func:`is_identifier`) and the H1 is not a section
      heading (:func:`is_section_heading`). An opening H1 that is not the title becomes an alias
      only as :func:`judge_opening_h1` says.
    - ``filename``: the file name; a frontmatter title that differs becomes an alias; the H1 is
      content.
    - ``h1``: opening H1 > frontmatter title > file name; a frontmatter title that loses to the
      H1 becomes an alias.
    - ``frontmatter``: frontmatter title > file name; the H1 is content.

    The file name never becomes an alias: links and the title search find cards by file name
    anyway.
    """
    fm = (frontmatter_title or "").strip() or None
    h1 = (opening_h1 or "").strip() or None
    src = TitleSource(source)
    if src is TitleSource.FILENAME:
        return stem, [fm] if fm and not same_name(fm, stem) else []
    if src is TitleSource.FRONTMATTER:
        return fm or stem, []
    if src is TitleSource.H1:
        if h1:
            return h1, [fm] if fm and not same_name(fm, h1) else []
        return fm or stem, []
    # auto
    if fm:
        title = fm
    elif h1 and is_identifier(stem) and not is_section_heading(h1):
        return h1, []
    else:
        title = stem
    if h1 and judge_opening_h1(h1, title, stem).alias:
        return title, [h1]
    return title, []
