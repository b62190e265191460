"""Find the parts of a Markdown text that are not prose: fenced code, inline code, HTML comments.

Links, tags and mentions inside them do not count. Spans are half-open code-point offsets.
"""

from __future__ import annotations

import bisect
import re

_INLINE_OR_COMMENT = re.compile(r"<!--|`+")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_FENCE_MARK = re.compile(r"```|~~~")  # every line that opens or closes a fence holds one

Spans = list[tuple[int, int]]

# Everything here is a linear scan: a regular expression for "optional blockquote markers, then
# a fence" backtracked exponentially on ~30 nested ``> `` markers (issue #12).


def _after_quote_markers(text: str, pos: int, end: int) -> int:
    """Where a line's content starts after blockquote markers (each: up to 3 spaces or tabs,
    ``>``, one optional space) and up to 3 spaces of indentation."""
    while True:
        k, n = pos, 0
        while k < end and n < 3 and text[k] in " \t":
            k += 1
            n += 1
        if k < end and text[k] == ">":
            pos = k + 1
            if pos < end and text[pos] == " ":
                pos += 1
            continue
        break
    n = 0
    while pos < end and n < 3 and text[pos] == " ":
        pos += 1
        n += 1
    return pos


def _fence_run(text: str, pos: int, end: int) -> tuple[str, int]:
    """The fence character and the length of its run at ``pos`` (("", 0) when none)."""
    if pos >= end or text[pos] not in "`~":
        return "", 0
    char = text[pos]
    k = pos
    while k < end and text[k] == char:
        k += 1
    return char, k - pos


def atx_heading(line: str) -> tuple[int, str] | None:
    """An ATX heading line (up to 3 spaces, 1-6 ``#``, then a space, a tab or the end) as
    (level, text without the closing ``#`` sequence), else None. One pass over the line."""
    n = len(line)
    i = 0
    while i < n and i < 3 and line[i] == " ":
        i += 1
    j = i
    while j < n and line[j] == "#":
        j += 1
    level = j - i
    if not 1 <= level <= 6 or (j < n and line[j] not in " \t"):
        return None
    rest = line[j:].strip(" \t")
    k = len(rest)
    while k > 0 and rest[k - 1] == "#":
        k -= 1
    if 0 < k < len(rest) and rest[k - 1] in " \t":
        rest = rest[:k].rstrip(" \t")
    return level, rest


def fenced_code_spans(text: str, start: int = 0) -> Spans:
    """Fenced code blocks from the opening fence line to the end of the closing fence line.

    A fence may sit inside blockquotes. An unclosed fence runs to the end of the text
    (CommonMark). A backtick fence whose info string contains a backtick is not a fence.
    """
    spans: Spans = []
    size = len(text)
    pos = start if start == 0 or text[start - 1 : start] == "\n" else text.find("\n", start) + 1
    if pos <= 0 and start > 0:
        return spans
    opened: tuple[int, str, int] | None = None  # (span start, fence char, run length)
    while (mark := _FENCE_MARK.search(text, pos)) is not None:  # only lines with a fence mark
        pos = text.rfind("\n", pos, mark.start()) + 1 or pos
        eol = text.find("\n", mark.end())
        line_end = size if eol == -1 else eol
        at = _after_quote_markers(text, pos, line_end)
        char, run = _fence_run(text, at, line_end)
        if opened is None:
            if run >= 3 and not (char == "`" and "`" in text[at + run : line_end]):
                opened = (pos, char, run)
        elif char == opened[1] and run >= opened[2] and not text[at + run : line_end].strip(" \t"):
            spans.append((opened[0], line_end))
            opened = None
        if eol == -1:
            break
        pos = eol + 1
    if opened is not None:
        spans.append((opened[0], size))
    return spans


def inline_spans(text: str, start: int, end: int) -> Spans:
    """Inline code (matching backtick runs in one paragraph) and HTML comments in [start, end)."""
    spans: Spans = []
    blanks = [m.start() for m in _BLANK_LINE.finditer(text, start, end)]
    runs: dict[int, list[tuple[int, int]]] = {}  # run length -> runs (start, end), in order
    for r in _BACKTICKS.finditer(text, start, end):
        runs.setdefault(r.end() - r.start(), []).append((r.start(), r.end()))
    run_starts = {n: [s for s, _ in found] for n, found in runs.items()}
    pos = start
    while pos < end:
        m = _INLINE_OR_COMMENT.search(text, pos, end)
        if m is None:
            break
        token = m.group(0)
        if token == "<!--":
            close = text.find("-->", m.end(), end)
            stop = end if close == -1 else close + 3
            spans.append((m.start(), stop))
            pos = stop
            continue
        # backtick run: the closer is the next run of exactly the same length in this paragraph
        n = len(token)
        b = bisect.bisect_left(blanks, m.end())
        limit = blanks[b] if b < len(blanks) else end
        i = bisect.bisect_right(run_starts[n], m.start())
        if i < len(runs[n]) and runs[n][i][1] <= limit:
            spans.append((m.start(), runs[n][i][1]))
            pos = runs[n][i][1]
        else:
            pos = m.end()  # a literal run of backticks
    return spans


def non_prose_spans(text: str, body_start: int = 0) -> Spans:
    """Frontmatter (``[0, body_start)``), fenced code, inline code and comments, sorted."""
    spans: Spans = [(0, body_start)] if body_start > 0 else []
    fences = fenced_code_spans(text, body_start)
    cursor = body_start
    for f_start, f_end in fences:
        spans.extend(inline_spans(text, cursor, f_start))
        spans.append((f_start, f_end))
        cursor = f_end
    spans.extend(inline_spans(text, cursor, len(text)))
    return spans


def blank_out(text: str, spans: Spans) -> str:
    """Replace every character inside ``spans`` by a space, keeping newlines and offsets."""
    if not spans:
        return text
    parts: list[str] = []
    cursor = 0
    for s, e in spans:
        if s < cursor:
            s = cursor
        if e <= s:
            continue
        parts.append(text[cursor:s])
        chunk = text[s:e]
        parts.append("\n".join(" " * len(line) for line in chunk.split("\n")))
        cursor = e
    parts.append(text[cursor:])
    return "".join(parts)
