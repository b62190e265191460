"""Find plain-text mentions of many phrases (card titles and aliases) in one pass.

An Aho-Corasick automaton holds every phrase; one scan of a text yields every occurrence.
Matching is case-insensitive, on whole words, and the longest match wins where matches overlap
(then the leftmost). It is blind to Unicode normal forms: a title written decomposed (NFD, as
macOS file names are) matches the same title composed (NFC) in a text, and the other way round.
A match inside a dotted token ("Node.js", "site.org/principles") is not a mention; hyphens and
slashes between words ("Hue-Chroma-Luminance", "Eigenvalue/Eigenvector") separate words. Spans
inside ``excluded`` ranges are dropped: :func:`unlinkable` lists them for a card (frontmatter,
code, comments, links, tags, URLs, HTML tags, math, the title line).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import ahocorasick

from zettel_lsp.notes.masking import blank_out, merge_spans, unlinkable_spans
from zettel_lsp.notes.model import Card

DEFAULT_MIN_LENGTH = 3


@dataclass(frozen=True, slots=True)
class Mention:
    start: int
    end: int
    phrase: str  # the matched phrase, normalised (casefolded)
    keys: tuple[str, ...]  # who owns the phrase (card paths), sorted


def normalise(phrase: str) -> str:
    return " ".join(unicodedata.normalize("NFC", phrase).split()).lower()


def nfc_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` in NFC, and for each of its characters where it starts and ends in ``text``.

    The text is cut into pieces: an ASCII letter or digit with the non-ASCII characters after
    it (an ``e`` and its combining accent), a run of non-ASCII characters, or one other ASCII
    character (space, punctuation). Offsets are exact whatever the cut, since each piece is
    normalised alone. A piece that NFC leaves as it is maps character by character; one it
    changes maps each of its characters to the whole piece (a match that starts or ends inside
    such a piece is reported from its start or to its end: pieces are parts of words)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        if not text[i].isascii() or text[i].isalnum():
            while j < n and not text[j].isascii():
                j += 1
        piece = text[i:j]
        nfc = unicodedata.normalize("NFC", piece)
        if nfc == piece:
            out.append(piece)
            starts.extend(range(i, j))
            ends.extend(range(i + 1, j + 1))
        else:
            for a, b, part in _clusters(text, i, j, nfc):
                out.append(part)
                if part == text[a:b]:
                    starts.extend(range(a, b))
                    ends.extend(range(a + 1, b + 1))
                else:
                    starts.extend([a] * len(part))
                    ends.extend([b] * len(part))
        i = j
    return "".join(out), starts, ends


def _clusters(text: str, i: int, j: int, nfc: str) -> list[tuple[int, int, str]]:
    """``text[i:j]`` cut before every character that starts a new cluster (not a combining
    mark, not a Hangul vowel or final jamo), each with its NFC, when those joined give ``nfc``
    (composition stays within a cluster); else the piece whole. So "e" + accent + "\x80" maps
    the accent to the "e" and the "\x80" to itself (found by a property test)."""
    cuts = [i]
    for k in range(i + 1, j):
        ch = text[k]
        if not unicodedata.combining(ch) and not 0x1160 <= ord(ch) <= 0x11FF:
            cuts.append(k)
    parts = [
        (a, b, unicodedata.normalize("NFC", text[a:b]))
        for a, b in zip(cuts, [*cuts[1:], j], strict=True)
    ]
    return parts if "".join(p for _, _, p in parts) == nfc else [(i, j, nfc)]


_CJK_START = 0x2E80  # CJK radicals onwards: scripts written without spaces between words
# what _is_word_char says no to (``\\w`` is str.isalnum() and "_"), one character each
_NON_WORD = re.compile(r"[\W\u2e80-\U0010ffff]")
_UNSPACED = re.compile(r"[\u2e80-\U0010ffff]")


def _is_word_char(ch: str) -> bool:
    """Letters, digits and ``_`` of space-separated scripts. CJK characters are not word
    characters here, so a CJK title matches inside running CJK text."""
    return (ch.isalnum() or ch == "_") and ord(ch) < _CJK_START


def long_enough(norm: str, min_length: int) -> bool:
    """Does the mention pass look for the normalised name ``norm`` (not a bare number, at
    least ``min_length`` characters, or 2 of the scripts written without spaces)?"""
    if norm.isdigit():
        return False
    if len(norm) >= min_length:
        return True
    return len(norm) >= 2 and any(ord(c) >= _CJK_START for c in norm)  # 2 CJK characters: a word


def lower_same_length(text: str) -> str:
    """Lower-case ``text`` without changing any offset (a few characters lengthen on lower())."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


class MentionMatcher:
    """An immutable phrase → owners automaton. Build once per set of titles; reuse for all texts.

    **Word boundaries in the automaton** (issue #18): an automaton over the text as written
    also reports every hit inside a word ("art" in "start"), far more than the mentions. With
    many phrases (``boundary``) the automaton scans a copy of the text in which every
    character that is not a word character is a space, padded with a space at both ends, and
    each phrase that starts (ends) with a word character is stored with a leading (trailing)
    space: it can only match where a word starts (ends). Each hit is then compared with the
    text itself (the copy forgets which punctuation it was). Phrases holding a character of
    the scripts without spaces (CJK, or an emoji) are matched by a second automaton over the
    text as written: they match inside running text. The same mentions either way (a
    property test compares both with :func:`phrases_in`)."""

    # at least this many phrases: the boundary automaton (a few, as in a probe for changed
    # titles: the text as written, where the copy would cost more than the hits it saves)
    BOUNDARY_MIN_PHRASES = 256

    def __init__(
        self,
        phrases: Iterable[tuple[str, str]],
        min_length: int = DEFAULT_MIN_LENGTH,
        *,
        boundary: bool | None = None,
    ) -> None:
        owners: dict[str, set[str]] = {}
        for phrase, key in phrases:
            norm = normalise(phrase)
            if not long_enough(norm, min_length):
                continue  # too short to be a deliberate mention, or a bare number
            owners.setdefault(norm, set()).add(key)
        self._owners = {norm: tuple(sorted(keys)) for norm, keys in owners.items()}
        if boundary is None:
            boundary = len(owners) >= self.BOUNDARY_MIN_PHRASES
        self._boundary = boundary
        # built on the first find(): a start whose mentions all come from the database never
        # searches a text, and the automata are most of a matcher's making
        self._built = False
        self._lock = threading.Lock()
        # the automaton over the text as written: every phrase, or (``boundary``) those with
        # a character of the scripts written without spaces
        self._automaton: ahocorasick.Automaton | None = None
        # the boundary automaton: spaced phrase -> the phrase, or the phrases (a tuple) when
        # several differ in punctuation alone; owners are looked up in _owners
        self._spaced: ahocorasick.Automaton | None = None

    def prepare(self) -> None:
        """Build the automata now (the first :meth:`find` does otherwise); thread-safe."""
        with self._lock:
            if self._built:
                return
            raw = ahocorasick.Automaton()
            spaced: dict[str, list[str]] = {}
            for norm in self._owners:
                if self._boundary and not _UNSPACED.search(norm):
                    key = (
                        (" " if _is_word_char(norm[0]) else "")
                        + _NON_WORD.sub(" ", norm)
                        + (" " if _is_word_char(norm[-1]) else "")
                    )
                    spaced.setdefault(key, []).append(norm)
                else:
                    raw.add_word(norm, norm)
            if len(raw):
                raw.make_automaton()
                self._automaton = raw
            if spaced:
                auto = ahocorasick.Automaton()
                for key, norms in spaced.items():
                    auto.add_word(key, norms[0] if len(norms) == 1 else tuple(norms))
                auto.make_automaton()
                self._spaced = auto
            self._built = True

    def __len__(self) -> int:
        return len(self._owners)

    def phrases(self) -> dict[str, tuple[str, ...]]:
        """Every phrase it finds (normalised), with its owners. Do not change the result."""
        return self._owners

    def find(self, text: str, excluded: Sequence[tuple[int, int]] = ()) -> list[Mention]:
        """Whole-word, case-insensitive, non-overlapping mentions in ``text`` (the longest wins
        where matches overlap, then the leftmost: :func:`_select`)."""
        if not self._owners or not text:
            return []
        if not self._built:
            self.prepare()
        low, back = _matchable(text)
        n = len(low)
        candidates: list[tuple[int, int, str, tuple[str, ...]]] = []
        owners = self._owners
        if self._spaced is not None:
            # copy index i is low's i - 1 (the leading space); a phrase's last character is
            # followed by a space in the key when it is a word character (no CJK here)
            for end_idx, found in self._spaced.iter(" " + _NON_WORD.sub(" ", low) + " "):
                for norm in (found,) if isinstance(found, str) else found:
                    last = norm[-1]
                    end = end_idx - (1 if last.isalnum() or last == "_" else 0)
                    start = end - len(norm)
                    if start < 0 or not low.startswith(norm, start):
                        continue
                    # a dot or slash next to it: maybe part of a dotted token (rare)
                    if (
                        (start >= 2 and low[start - 1] in "./") or (end + 1 < n and low[end] == ".")
                    ) and _joined(low, start, end):
                        continue
                    candidates.append((start, end, norm, owners[norm]))
        if self._automaton is not None:
            for end_idx, norm in self._automaton.iter(low):
                start = end_idx - len(norm) + 1
                end = end_idx + 1
                if start > 0 and _is_word_char(low[start - 1]) and _is_word_char(low[start]):
                    continue
                if end < n and _is_word_char(low[end]) and _is_word_char(low[end - 1]):
                    continue
                if _joined(low, start, end):
                    continue
                candidates.append((start, end, norm, owners[norm]))
        return _select(candidates, back, excluded)


def phrases_in(
    text: str, table: Container[str], longest: int, min_length: int = DEFAULT_MIN_LENGTH
) -> list[Mention]:
    """What :meth:`MentionMatcher.find` finds in ``text`` for the phrases of ``table``
    (normalised, as :func:`normalise` gives them; each mention's ``keys`` is the phrase), without
    an automaton: every span that starts and ends where ``find`` lets a match start and end, at
    most ``longest`` characters long, is looked up in ``table``. For short texts (a query: 512
    characters at most), where an automaton over every name would cost more memory than the
    scan costs time: the title index's ``inside`` matches."""
    if not text or longest <= 0:
        return []
    low, back = _matchable(text)
    n = len(low)
    word = [_is_word_char(c) for c in low]
    # a match may start at i unless i is inside a word, and end at j unless j is inside one
    cuts = [i for i in range(n + 1) if i == 0 or i == n or not (word[i - 1] and word[i])]
    candidates: list[tuple[int, int, str, tuple[str, ...]]] = []
    for a, start in enumerate(cuts):
        if start == n:
            break
        for end in cuts[a + 1 :]:
            if end - start > longest:
                break
            sub = low[start:end]
            if sub in table and long_enough(sub, min_length) and not _joined(low, start, end):
                candidates.append((start, end, sub, (sub,)))
    return _select(candidates, back, ())


def _matchable(text: str) -> tuple[str, tuple[list[int], list[int]] | None]:
    """``text`` as matched (NFC, lower case), with its characters' offsets in ``text`` when
    NFC moved them."""
    if unicodedata.is_normalized("NFC", text):
        return lower_same_length(text), None
    nfc, starts, ends = nfc_with_offsets(text)
    return lower_same_length(nfc), (starts, ends)


def _select(
    candidates: list[tuple[int, int, str, tuple[str, ...]]],
    back: tuple[list[int], list[int]] | None,
    excluded: Sequence[tuple[int, int]],
) -> list[Mention]:
    """Non-overlapping mentions outside ``excluded`` (sorted, not overlapping), in text order;
    offsets mapped back to the text before NFC when ``back`` is given.

    Where matches overlap, the **longest** wins, then the leftmost: in "the Internet Service
    Provider" the card "Internet Service Provider", not "The Internet" (a match one word to the
    left), in "the Matrix Transposition" the card "Matrix Transposition", not "The Matrix".
    Each group of matches that overlap one another is settled apart, longest first; a match is
    kept when none kept overlaps it."""
    if not candidates:
        return []
    if back is not None:
        candidates = [(back[0][a], back[1][b - 1], nm, ks) for a, b, nm, ks in candidates]
    candidates.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    kept: list[tuple[int, int, str, tuple[str, ...]]] = []
    ex, n_ex = 0, len(excluded)  # the first excluded span that may still overlap (starts sorted)
    for cand in candidates:
        start, end = cand[0], cand[1]
        while ex < n_ex and excluded[ex][1] <= start:
            ex += 1
        if ex < n_ex and excluded[ex][0] < end:
            continue
        kept.append(cand)
    out: list[Mention] = []
    i, n = 0, len(kept)
    while i < n:
        j, reach = i + 1, kept[i][1]
        while j < n and kept[j][0] < reach:  # the group of matches overlapping one another
            reach = max(reach, kept[j][1])
            j += 1
        if j == i + 1:
            out.append(Mention(*kept[i]))
        else:
            out.extend(_longest_first(kept[i:j]))
        i = j
    return out


def _longest_first(group: list[tuple[int, int, str, tuple[str, ...]]]) -> list[Mention]:
    """The non-overlapping matches of ``group`` (one run of overlapping matches, sorted by
    start), longest first, then leftmost; in text order."""
    base = group[0][0]
    taken = bytearray(max(end for _, end, _, _ in group) - base)
    chosen = []
    for start, end, norm, keys in sorted(group, key=lambda c: (c[0] - c[1], c[0])):
        a, b = start - base, end - base
        if taken.find(1, a, b) == -1:
            taken[a:b] = b"\x01" * (b - a)
            chosen.append(Mention(start, end, norm, keys))
    chosen.sort(key=lambda m: m.start)
    return chosen


def _joined(low: str, start: int, end: int) -> bool:
    """Is the match part of a dotted token ("Node.js", "agilemanifesto.org/principles.html")?
    A ``.`` between word characters joins them; a ``/`` does after a token holding a ``.``
    (a domain or file path), not in "Eigenvalue/Eigenvector" or "and/or"."""
    n = len(low)
    glue = low[start - 1] if start >= 2 else ""
    if (
        (glue == "." or (glue == "/" and _dotted_before(low, start - 1)))
        and _is_word_char(low[start])
        and _is_word_char(low[start - 2])
    ):
        return True
    if end + 1 < n and low[end] == "." and _is_word_char(low[end + 1]):
        return _is_word_char(low[end - 1])
    return False


def _dotted_before(low: str, at: int) -> bool:
    """Does the token ending at ``at`` hold a ``.`` among its last 64 characters?"""
    k = at - 1
    while k >= 0 and at - k <= 64 and not low[k].isspace():
        if low[k] == ".":
            return True
        k -= 1
    return False


def unlinkable(card: Card, text: str | None = None) -> list[tuple[int, int]]:
    """Where no mention in ``card`` may become a link, sorted and merged: what the parser masks
    (frontmatter, code, comments), its links and inline tags, and in the prose that is left
    :func:`~zettel_lsp.notes.masking.unlinkable_spans` (other Markdown links and reference
    links, URLs, HTML tags, math, the card's title line). ``text``: the card's text, when the
    caller has read it (a graph's card may read it from a file)."""
    links = [(ln.span.start, ln.span.end) for ln in card.links]
    base = merge_spans(sorted([*card.masked, *links]))
    prose = blank_out(card.text if text is None else text, base)
    tags = [(t.span.start, t.span.end) for t in card.tags if t.span is not None]
    return merge_spans(sorted([*base, *tags, *unlinkable_spans(prose)]))
