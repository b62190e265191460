"""Find plain-text mentions of many phrases (card titles and aliases) in one pass.

An Aho-Corasick automaton holds every phrase; one scan of a text yields every occurrence.
Matching is case-insensitive, on whole words, and the longest match wins where matches overlap
(leftmost first). Spans inside ``excluded`` ranges (links, code, comments, frontmatter) are
dropped.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ahocorasick

DEFAULT_MIN_LENGTH = 3


@dataclass(frozen=True, slots=True)
class Mention:
    start: int
    end: int
    phrase: str  # the matched phrase, normalised (casefolded)
    keys: tuple[str, ...]  # who owns the phrase (card paths), sorted


def normalise(phrase: str) -> str:
    return " ".join(phrase.split()).lower()


_CJK_START = 0x2E80  # CJK radicals onwards: scripts written without spaces between words


def _is_word_char(ch: str) -> bool:
    """Letters, digits and ``_`` of space-separated scripts. CJK characters are not word
    characters here, so a CJK title matches inside running CJK text."""
    return (ch.isalnum() or ch == "_") and ord(ch) < _CJK_START


def _long_enough(norm: str, min_length: int) -> bool:
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
    """An immutable phrase → owners automaton. Build once per set of titles; reuse for all texts."""

    def __init__(
        self, phrases: Iterable[tuple[str, str]], min_length: int = DEFAULT_MIN_LENGTH
    ) -> None:
        owners: dict[str, set[str]] = {}
        for phrase, key in phrases:
            norm = normalise(phrase)
            if not _long_enough(norm, min_length):
                continue  # too short to be a deliberate mention, or a bare number
            owners.setdefault(norm, set()).add(key)
        self._size = len(owners)
        self._automaton = ahocorasick.Automaton()
        for norm, keys in owners.items():
            self._automaton.add_word(norm, (norm, tuple(sorted(keys))))
        if owners:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return self._size

    def find(self, text: str, excluded: Sequence[tuple[int, int]] = ()) -> list[Mention]:
        """Whole-word, case-insensitive, longest-leftmost, non-overlapping mentions in ``text``."""
        if not self._size or not text:
            return []
        low = lower_same_length(text)
        n = len(low)
        candidates: list[tuple[int, int, str, tuple[str, ...]]] = []
        for end_idx, (norm, keys) in self._automaton.iter(low):
            start = end_idx - len(norm) + 1
            end = end_idx + 1
            if start > 0 and _is_word_char(low[start - 1]) and _is_word_char(low[start]):
                continue
            if end < n and _is_word_char(low[end]) and _is_word_char(low[end - 1]):
                continue
            candidates.append((start, end, norm, keys))
        if not candidates:
            return []
        candidates.sort(key=lambda c: (c[0], -(c[1] - c[0])))
        starts = [s for s, _ in excluded]
        out: list[Mention] = []
        cursor = 0
        for start, end, norm, keys in candidates:
            if start < cursor or _overlaps(excluded, starts, start, end):
                continue
            out.append(Mention(start, end, norm, keys))
            cursor = end
        return out


def _overlaps(spans: Sequence[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    """Does [start, end) overlap any of the sorted, non-overlapping ``spans``?"""
    i = bisect_right(starts, start) - 1
    if i >= 0 and spans[i][1] > start:
        return True
    return i + 1 < len(spans) and spans[i + 1][0] < end
