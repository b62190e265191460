"""Find the parts of a Markdown text that are not prose: fenced code, inline code, HTML comments.

Links, tags and mentions inside them do not count. Spans are half-open code-point offsets.
"""

from __future__ import annotations

import re

# A fence line: optional blockquote markers, up to 3 spaces, then ``` or ~~~ (3 or more).
_FENCE = re.compile(r"^(?:[ \t]{0,3}>[ ]?)*[ ]{0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_INLINE_OR_COMMENT = re.compile(r"<!--|`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

_NOT_NEWLINE = re.compile(r"[^\n]")

Spans = list[tuple[int, int]]


def fenced_code_spans(text: str, start: int = 0) -> Spans:
    """Fenced code blocks from the opening fence line to the end of the closing fence line.

    An unclosed fence runs to the end of the text (CommonMark). A backtick fence whose info
    string contains a backtick is not a fence.
    """
    spans: Spans = []
    pos = start
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            return spans
        fence = m.group(1)
        if fence[0] == "`" and "`" in m.group(2):
            pos = m.end() + 1
            continue
        close_re = re.compile(
            r"^(?:[ \t]{0,3}>[ ]?)*[ ]{0,3}"
            + re.escape(fence[0])
            + "{"
            + str(len(fence))
            + r",}[ \t]*$",
            re.MULTILINE,
        )
        close = close_re.search(text, m.end() + 1) if m.end() < len(text) else None
        end = close.end() if close else len(text)
        spans.append((m.start(), end))
        pos = end + 1
        if pos > len(text):
            return spans


def inline_spans(text: str, start: int, end: int) -> Spans:
    """Inline code (matching backtick runs in one paragraph) and HTML comments in [start, end)."""
    spans: Spans = []
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
        para_end = _BLANK_LINE.search(text, m.end(), end)
        limit = para_end.start() if para_end else end
        closer = re.compile(r"(?<!`)`{" + str(n) + r"}(?!`)")
        c = closer.search(text, m.end(), limit)
        if c is None:
            pos = m.end()  # a literal run of backticks
            continue
        spans.append((m.start(), c.end()))
        pos = c.end()
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
        parts.append(_NOT_NEWLINE.sub(" ", chunk) if "\n" in chunk else " " * len(chunk))
        cursor = e
    parts.append(text[cursor:])
    return "".join(parts)
