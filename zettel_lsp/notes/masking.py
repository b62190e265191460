"""Find the parts of a Markdown text that are not prose: fenced code, inline code, HTML comments.

Links, tags and mentions inside them do not count. Spans are half-open code-point offsets.
:func:`unlinkable_spans` adds the parts of prose where a mention must not become a link (URLs,
other links, HTML tags, math, the title line).
"""

from __future__ import annotations

import bisect
import re

from zettel_lsp.notes.markdown_links import markdown_links

_INLINE_OR_COMMENT = re.compile(r"<!--|`+")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_FENCE_MARK = re.compile(r"```|~~~")  # every line that opens or closes a fence holds one
# Before a list item's text: indentation, a marker ("-", "*", "+", or 1-9 digits and "." or ")"),
# spaces or tabs, and a task box ("[ ]", "[x]").
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+(?:\[[ xX/-]\][ \t]+)?")

Spans = list[tuple[int, int]]

# Blockquote markers (each: up to 3 spaces or tabs, ``>``, one optional space), up to 3 spaces,
# then a fence mark, if any. Possessive: a backtracking form took minutes on ~30 nested ``> ``
# markers (issue #12).
_FENCE = re.compile(r"(?:[ \t]{0,3}> ?)*+ {0,3}(`{3,}|~{3,})?")
# An ATX heading's marks: up to 3 spaces, 1-6 ``#``, then a space, a tab or the end of the line.
_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|\Z)")


def _fence(text: str, pos: int, end: int) -> tuple[str, int, int]:
    """The fence mark of the line ``text[pos:end]`` (after blockquote markers and up to 3 spaces):
    its character, run length and end. The run is 0 where no fence opens or closes: fewer than 3
    backticks or tildes, or backticks followed by a backtick (an info string cannot hold one)."""
    m = _FENCE.match(text, pos, end)
    assert m is not None  # every part of the pattern is optional
    run = m.group(1)
    if not run or (run[0] == "`" and "`" in text[m.end() : end]):
        return "", 0, m.end()
    return run[0], len(run), m.end()


def fence_line(line: str) -> bool:
    """Whether ``line`` can open or close a fenced code block (as in :func:`fenced_code_spans`)."""
    return _fence(line, 0, len(line))[1] > 0


def atx_heading(line: str) -> tuple[int, str] | None:
    """An ATX heading line (up to 3 spaces, 1-6 ``#``, then a space, a tab or the end) as
    (level, text without the closing ``#`` sequence), else None."""
    m = _ATX.match(line)
    if m is None:
        return None
    rest = line[m.end() :].strip(" \t")
    body = rest.rstrip("#")
    if body != rest and body[-1:] in (" ", "\t"):
        rest = body.rstrip(" \t")
    return len(m.group(1)), rest


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
        char, run, after = _fence(text, pos, line_end)
        if opened is None:
            opened = (pos, char, run) if run else None
        elif char == opened[1] and run >= opened[2] and not text[after:line_end].strip(" \t"):
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
        s = max(s, cursor)
        if e <= s:
            continue
        parts.append(text[cursor:s])
        parts.append("\n".join(" " * len(line) for line in text[s:e].split("\n")))
        cursor = e
    parts.append(text[cursor:])
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Where a title must not become a link (issue #14): a mention is only linked in running prose.
# Each scan below is linear: literal searches and anchored runs, never a pattern that can fail
# after scanning far (tests/notes/test_regex_linear.py times every pattern here).

_URL_MARK = re.compile(r"://|\b[Ww][Ww][Ww]\.|\b[Mm][Aa][Ii][Ll][Tt][Oo]:")
_URL_TAIL = re.compile(r"[^\s<>\"'`]*")  # the rest of a bare URL: up to a blank or a quote
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_MAX_SCHEME = 32
_TAG_OPEN = re.compile(r"</?[A-Za-z]|<[!?]")  # an HTML tag, an autolink <scheme:...>, <!DOCTYPE>
_DOLLARS = re.compile(r"\$+")
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[(?!\^)([^\[\]\n]+)\]:", re.MULTILINE)
_BRACKETED = re.compile(r"\[([^\[\]\n]*)\]")


def url_spans(text: str) -> Spans:
    """Bare URLs (``scheme://...``, ``www....``, ``mailto:...``), each to the next blank,
    quote or angle bracket."""
    spans: Spans = []
    pos = 0
    while (m := _URL_MARK.search(text, pos)) is not None:
        start = m.start()
        if m.group(0) == "://":
            s = start
            while s > 0 and text[s - 1] in _SCHEME_CHARS and start - s < _MAX_SCHEME:
                s -= 1
            while s < start and not (text[s].isascii() and text[s].isalpha()):
                s += 1  # a scheme starts with a letter
            if s == start:  # no scheme: "://" alone
                pos = m.end()
                continue
            start = s
        tail = _URL_TAIL.match(text, m.end())
        end = tail.end() if tail is not None else m.end()
        spans.append((start, end))
        pos = max(end, m.end())
    return spans


def html_tag_spans(text: str) -> Spans:
    """HTML tags with their attributes (``<a href="...">``, ``</b>``, ``<br/>``) and autolinks
    (``<https://...>``, ``<me@example.org>``), each from ``<`` to the next ``>`` within one
    paragraph. The text between an opening and a closing tag stays prose."""
    spans: Spans = []
    blanks = [m.start() for m in _BLANK_LINE.finditer(text)]
    pos = 0
    gt = -1
    while (m := _TAG_OPEN.search(text, pos)) is not None:
        lt = m.start()
        if gt < lt:
            gt = text.find(">", lt)
            if gt == -1:
                break
        inner = text.rfind("<", lt + 1, gt)
        if inner != -1:  # "a < b <tag>": the tag starts at the last "<" before ">"
            pos = inner
            continue
        b = bisect.bisect_right(blanks, lt)
        if b < len(blanks) and blanks[b] < gt:  # a blank line before ">": not a tag
            pos = lt + 1
            continue
        spans.append((lt, gt + 1))
        pos = gt + 1
    return spans


def math_spans(text: str) -> Spans:
    """Math: ``$$...$$`` blocks (across lines) and inline ``$...$`` within one paragraph. As in
    Pandoc and Obsidian, an inline opener is not followed by a blank and a closer is not preceded
    by one nor followed by a digit, so "costs $10 or $20" is not math. ``\\$`` is a dollar."""
    n = len(text)
    runs = [
        (m.start(), m.end())
        for m in _DOLLARS.finditer(text)
        if not (m.start() > 0 and text[m.start() - 1] == "\\")
    ]
    if len(runs) < 2:
        return []
    blanks = [m.start() for m in _BLANK_LINE.finditer(text)]
    doubles = [i for i, (s, e) in enumerate(runs) if e - s >= 2]
    # single runs that can close inline math
    closers = [
        i
        for i, (s, e) in enumerate(runs)
        if e - s == 1 and s > 0 and not text[s - 1].isspace() and not (e < n and text[e].isdigit())
    ]
    spans: Spans = []
    i = 0
    while i < len(runs):
        s, e = runs[i]
        after = doubles if e - s >= 2 else closers
        k = bisect.bisect_right(after, i)
        j = after[k] if k < len(after) else -1
        if j != -1 and e - s == 1:
            b = bisect.bisect_right(blanks, s)
            if e >= n or text[e].isspace() or (b < len(blanks) and blanks[b] < runs[j][0]):
                j = -1  # no opener, or the closer is in a later paragraph
        if j == -1:
            i += 1
            continue
        spans.append((s, runs[j][1]))
        i = j + 1
    return spans


def heading_line_spans(text: str) -> Spans:
    """Every ATX heading line, whole (a link added there changes the heading's text, and so the
    ``[[Card#Heading]]`` links that point to it)."""
    spans: Spans = []
    offset = 0
    for line in text.split("\n"):
        if "#" in line[:4] and atx_heading(line) is not None:
            spans.append((offset, offset + len(line)))
        offset += len(line) + 1
    return spans


def title_line_spans(text: str) -> Spans:
    """The card's own title line: an ATX H1 that is the first non-blank line (frontmatter
    blanked out), whole."""
    offset = 0
    for line in text.split("\n"):
        if line.strip():
            h = atx_heading(line)
            return [(offset, offset + len(line))] if h is not None and h[0] == 1 else []
        offset += len(line) + 1
    return []


def reference_link_spans(text: str) -> Spans:
    """Reference definitions (``[label]: https://... "title"``, the whole line; footnotes
    ``[^1]:`` are prose) and the links that use them: ``[text][label]``, ``[text][]``,
    ``[label]``."""

    def label(m: re.Match[str]) -> str:
        return " ".join(m.group(1).split()).casefold()

    spans: Spans = []
    labels: set[str] = set()
    for d in _REFERENCE_DEFINITION.finditer(text):
        eol = text.find("\n", d.end())
        spans.append((d.start(), len(text) if eol == -1 else eol))
        labels.add(label(d))
    if not labels:
        return spans
    pos = 0
    while (m := _BRACKETED.search(text, pos)) is not None:
        pos = m.end()
        second = _BRACKETED.match(text, m.end())
        if second is not None and (not second.group(1).strip() or label(second) in labels):
            spans.append((m.start(), second.end()))
            pos = second.end()
        elif label(m) in labels:
            spans.append((m.start(), m.end()))
    return merge_spans(sorted(spans))


def unlinkable_spans(prose: str) -> Spans:
    """Parts of ``prose`` (a card's text with frontmatter, code, comments and its card links
    already blanked out, see :func:`blank_out`) where a mention must not be linked: Markdown
    links and images to anything else (text and destination), reference definitions and
    reference links, bare URLs, autolinks and HTML tags, math, and the card's title line.
    Sorted and merged. (Section headings stay prose: authors link there; "Link N confident
    mentions" leaves them alone, see :func:`heading_line_spans`.)"""
    found = [(link.start, link.end) for link in markdown_links(prose)]
    for spans in (reference_link_spans, url_spans, html_tag_spans, math_spans, title_line_spans):
        found += spans(prose)
    return merge_spans(sorted(found))


def merge_spans(spans: Spans) -> Spans:
    """Sorted spans merged where they overlap or touch."""
    out: Spans = []
    for s, e in spans:
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(e, out[-1][1]))
        else:
            out.append((s, e))
    return out
