"""Markdown links ``[text](destination "title")`` found by a linear scan.

The grammar is this regular expression's (a test compares the two on random input)::

    (!?)\\[((?:[^\\[\\]\\n\\\\]|\\\\.|\\[[^\\[\\]\\n]*\\])*)\\]
    \\([ \\t]*(?:<([^<>\\n]*)>|((?:[^\\s()\\\\<]|\\\\.|\\([^\\s()]*\\))+))
    (?:[ \\t]+(?:"[^"\\n]*"|'[^'\\n]*'|\\([^()\\n]*\\)))?[ \\t]*\\)

that is: the text may hold escapes and one level of [brackets]; the destination is ``<...>`` or
bare, with escapes and one level of balanced parentheses; an optional title follows. Its
``finditer`` rescans from every ``[`` that could open a link (issue #12); here each step (the
text, the destination, the tail after it) is computed once per position and remembered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

_TEXT_RUN = re.compile(r"[^\[\]\n\\]+")  # plain characters of a link text
_INNER_TEXT = re.compile(r"[^\[\]\n]*")  # inside one level of [brackets] in a link text
_DEST_RUN = re.compile(r"[^\s()\\<]+")  # plain characters of a bare destination
_INNER_DEST = re.compile(r"[^\s()]*")  # inside one level of (parentheses) in a destination
# The runs below never fail (a required closing character is checked after them), so no pattern
# here scans to the end of a line and fails: every one is linear under findall too.
_ANGLE_INNER = re.compile(r"[^<>\n]*")  # inside a <destination>
_BLANKS = re.compile(r"[ \t]*")
_TITLE_INNER = {  # inside a title, and the character closing it, by its opening character
    '"': (re.compile(r'[^"\n]*'), '"'),
    "'": (re.compile(r"[^'\n]*"), "'"),
    "(": (re.compile(r"[^()\n]*"), ")"),
}


class MarkdownLink(NamedTuple):
    start: int  # at "!" for an embed, else at "["
    end: int  # after the closing ")"
    embed: bool
    text: str  # between the brackets, as written
    destination: str  # inside <...>, or the bare destination, as written
    dest_start: int  # where the destination starts (after the "<" of <...>)


def _skip(pattern: re.Pattern[str], s: str, i: int) -> int:
    m = pattern.match(s, i)
    return i if m is None else m.end()


def _walk(memo: dict[int, int], q: int, step: Callable[[int], tuple[bool, int]]) -> int:
    """Follow ``step`` from ``q`` (each gives: done?, then the result or the next position)
    until done, and remember the result for every position passed."""
    seen: list[int] = []
    while (result := memo.get(q)) is None:
        seen.append(q)
        done, q = step(q)
        if done:
            result = q
            break
    for v in seen:
        memo[v] = result
    return result


class _Scan:
    """The memoised steps over one string."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.n = len(s)
        self._text_end: dict[int, int] = {}
        self._dest_end: dict[int, int] = {}
        self._tail_end: dict[int, int] = {}
        self._after: dict[int, tuple[int, int, int] | None] = {}

    def text_end(self, q: int) -> int:
        """The ``]`` that closes a link text starting at ``q``, or -1."""
        return _walk(self._text_end, q, self._text_step)

    def dest_end(self, q: int) -> int:
        """Where a bare destination starting at ``q`` ends (``q`` when it is empty)."""
        return _walk(self._dest_end, q, self._dest_step)

    def _text_step(self, q: int) -> tuple[bool, int]:
        s, n = self.s, self.n
        c = s[q] if q < n else "\n"
        if c == "]":
            return True, q
        if c == "\\" and q + 1 < n and s[q + 1] != "\n":
            return False, q + 2
        if c == "[":
            k = _skip(_INNER_TEXT, s, q + 1)
            if k < n and s[k] == "]":
                return False, k + 1
        if c in "\n\\[":
            return True, -1
        return False, _skip(_TEXT_RUN, s, q)

    def _dest_step(self, q: int) -> tuple[bool, int]:
        s, n = self.s, self.n
        if q >= n:
            return True, q
        c = s[q]
        if c == "\\" and q + 1 < n and s[q + 1] != "\n":
            return False, q + 2
        if c == "(":
            k = _skip(_INNER_DEST, s, q + 1)
            if k < n and s[k] == ")":
                return False, k + 1
        if c in "\\()<" or c.isspace():  # str.isspace is exactly the \s of a str pattern
            return True, q
        return False, _skip(_DEST_RUN, s, q)

    def tail_end(self, e: int) -> int:
        """After a destination ending at ``e``: an optional title (after a blank), blanks and
        ``)``. The end of the link, or -1."""
        known = self._tail_end.get(e)
        if known is not None:
            return known
        s, n = self.s, self.n
        k = _skip(_BLANKS, s, e)
        result = -1
        if k < n and s[k] == ")":
            result = k + 1
        elif k > e and k < n and s[k] in _TITLE_INNER:
            inner, closing = _TITLE_INNER[s[k]]
            t = _skip(inner, s, k + 1)
            if t < n and s[t] == closing:
                m = _skip(_BLANKS, s, t + 1)
                if m < n and s[m] == ")":
                    result = m + 1
        self._tail_end[e] = result
        return result

    def after_text(self, close: int) -> tuple[int, int, int] | None:
        """After the ``]`` at ``close``: ``(destination title)`` as (end of the link, start and
        end of the destination), or None."""
        if close not in self._after:
            self._after[close] = self._after_text(close)
        return self._after[close]

    def _after_text(self, close: int) -> tuple[int, int, int] | None:
        s, n = self.s, self.n
        if close + 1 >= n or s[close + 1] != "(":
            return None
        q = _skip(_BLANKS, s, close + 2)
        if q < n and s[q] == "<":
            a = _skip(_ANGLE_INNER, s, q + 1)
            if a >= n or s[a] != ">":
                return None
            end = self.tail_end(a + 1)
            return None if end == -1 else (end, q + 1, a)
        e = self.dest_end(q)
        if e == q:
            return None
        end = self.tail_end(e)
        return None if end == -1 else (end, q, e)


def markdown_links(s: str) -> list[MarkdownLink]:
    """The links of ``s``, left to right, not overlapping (as ``finditer`` finds them)."""
    scan = _Scan(s)
    out: list[MarkdownLink] = []
    pos = 0
    while (p := s.find("[", pos)) != -1:
        close = scan.text_end(p + 1)
        found = None if close == -1 else scan.after_text(close)
        if found is None:
            pos = p + 1
            continue
        end, d_start, d_end = found
        embed = p > pos and s[p - 1] == "!"
        start = p - 1 if embed else p
        out.append(MarkdownLink(start, end, embed, s[p + 1 : close], s[d_start:d_end], d_start))
        pos = end
    return out


def is_one_markdown_link(s: str) -> bool:
    """Is ``s`` exactly one link (``fullmatch``)? A link's end is fixed by its start."""
    if not s.startswith(("[", "![")):
        return False
    found = markdown_links(s)
    return bool(found) and found[0].start == 0 and found[0].end == len(s)


def markdown_links_as_text(s: str) -> str:
    """Each link replaced by its text, stripped."""
    parts: list[str] = []
    done = 0
    for link in markdown_links(s):
        parts += [s[done : link.start], link.text.strip()]
        done = link.end
    parts.append(s[done:])
    return "".join(parts)
