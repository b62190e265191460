"""Results as plain data: the JSON the CLI prints and the editor commands return."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zettel_lsp.notes.masking import LIST_ITEM, atx_heading, fence_line
from zettel_lsp.notes.parser import visible_text
from zettel_lsp.notes.title_rule import same_name
from zettel_lsp.search.fusion import CardResult

EXCERPT_CHARS = 200
CELL_SEPARATOR = " │ "
"""Between the cells of a table row in ``excerpt_text`` (rows are separated by a newline)."""
BLOCK_SEPARATOR = "·"
"""Between headings, list items and paragraphs joined on one line in ``excerpt_text``, with a
space on each side, unless the text before ends a sentence."""
_SENTENCE_END = frozenset(".!?:;,")


def _without_heading_marks(text: str) -> str:
    """Each heading line as its text (the project's one heading rule: notes/masking.py)."""
    return "\n".join(h[1] if (h := atx_heading(line)) else line for line in text.split("\n"))


def excerpt(text: str, words: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """At most ``width`` characters of ``text``, centred on the first query word it contains."""
    return _window(" ".join(_without_heading_marks(text).split()), words, width)


_WORD_SLACK = 24  # how far a window's cut may move to fall between words


def _window(flat: str, words: Sequence[str], width: int) -> str:
    """At most ``width`` characters of ``flat``, centred on the first query word it contains,
    with "…" where it was cut."""
    if len(flat) <= width:
        return flat
    low = flat.lower()
    hits = [(i, len(w)) for w in words if len(w) > 2 and (i := low.find(w)) >= 0]
    at, hit_end = min(hits) if hits else (0, 0)
    hit_end += at
    start = max(0, min(at - width // 3, len(flat) - width))
    # Cut between words where one is near ("… Test Coverage", not "…epts Test Coverage"; the
    # space after "…" tells a client the cut is at a word already): the window starts well before
    # the first query word, and a word that would end past the width is left out whole.
    first = start
    prefix = ""
    if first > 0:  # "… " takes the place of at least two characters: the cut one and a space
        space = flat.find(" ", first + 1, min(first + _WORD_SLACK, at))
        start, prefix = (space + 1, "… ") if space >= 0 else (first + 1, "…")
    end = first + width
    suffix = ""
    if end < len(flat):
        end -= 1
        suffix = "…"
        space = flat.rfind(" ", max(start, end - _WORD_SLACK, hit_end), end + 1)
        end = space if space >= 0 else end
    piece = flat[start:end].strip()
    return prefix + piece + suffix if piece else flat[:width]


def _without_title_heading(text: str, title: str) -> str:
    """Drop a first line that is a heading repeating the title (the excerpt shows the title), up
    to case ("# Lattice From Basis" in ``Lattice from Basis.md``)."""
    first, _, rest = text.partition("\n")
    heading = atx_heading(first)
    if heading is not None and same_name(heading[1], title):
        return rest
    return text


# ------------------------------------------------------------------ excerpt_text
# The excerpt as a reader sees the note: what the editors show (the VS Code Search view). The
# raw ``excerpt`` stays as it was for the clients that read it.

_CELL_BAR = re.compile(r"(?<!\\)\|")
_RULE = re.compile(r"^\s*(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+(?:\[![^\]\n]*\][+-]?\s*)?")
_MEDIA_EMBED = re.compile(
    r"!\[\[[^\[\]\n]*?\.(?:png|jpe?g|gif|svg|webp|bmp|avif|pdf|excalidraw|mp[34]|mov|webm|ogg|wav|m4a)"
    r"(?:[|#][^\[\]\n]*)?\]\]",
    re.IGNORECASE,
)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]*)>", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>")
_STRONG = re.compile(r"(\*\*|__|~~|==)(?=\S)(.+?)(?<=\S)\1")  # **b**, __b__, ~~s~~, ==h==
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_FOOTNOTE = re.compile(r"\[\^[^\]\n]+\](?!:)")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+\s*$")
# inline code as its text (`x`, ``x``): a run of backticks, text without one on the same line, a
# run of backticks; it starts only at a run's first backtick, so it never backtracks far
_CODE = re.compile(r"(?<!`)`+([^`\n]+)`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~=<>])")


def _is_table_separator(line: str) -> bool:
    """A table's separator row (``|---|:--:|``, ``--- | ---``): cells of ``:?-+:?`` between bars.
    A scan of the cells, not a pattern (a nested-quantifier pattern is quadratic on long rows)."""
    cells = line.strip()
    if not cells or "-" not in cells:
        return False
    for cell in cells.removeprefix("|").removesuffix("|").split("|"):
        core = cell.strip(" \t").removeprefix(":").removesuffix(":")
        if not core or core.strip("-"):
            return False
    return True


_COMMENT_MARKS = (("%%", "%%"), ("<!--", "-->"))


def _without_comments(s: str) -> str:
    """``s`` without ``%%…%%`` and ``<!--…-->`` comments on one line (the earliest opener first,
    closed by the next closer on its line)."""
    return "\n".join(_line_without_comments(line) for line in s.split("\n"))


def _line_without_comments(s: str) -> str:
    """Linear: an opener that finds no closer means no later one of its kind can."""
    out: list[str] = []
    pos = 0
    live = list(_COMMENT_MARKS)
    while live:
        found = [(s.find(o, pos), o, c) for o, c in live]
        found = [f for f in found if f[0] >= 0]
        if not found:
            break
        start, opener, closer = min(found, key=lambda f: f[0])
        end = s.find(closer, start + len(opener))
        if end < 0:
            live.remove((opener, closer))
            continue
        out.append(s[pos:start])
        pos = end + len(closer)
    out.append(s[pos:])
    return "".join(out)


def _inline_text(s: str) -> str:
    """One line (or one table cell) of Markdown as a reader sees it: link text instead of link
    syntax, no emphasis marks, code without backticks, no HTML tags or comments."""
    s = _without_comments(s)
    s = _MEDIA_EMBED.sub("", s)
    s = visible_text(s)
    s = _AUTOLINK.sub(r"\1", s)
    s = _BREAK.sub(" ", s)
    s = _HTML_TAG.sub("", s)
    s = _CODE.sub(r"\1", s)
    s = _FOOTNOTE.sub("", s)
    s = _STRONG.sub(r"\2", s)
    s = _EMPHASIS.sub(r"\1", s)
    s = _UNDERSCORE.sub(r"\1", s)
    s = _BLOCK_ID.sub("", s)
    return " ".join(_ESCAPE.sub(r"\1", s).split())


def _table_row(line: str) -> str:
    """A table row as its cells' text between :data:`CELL_SEPARATOR` (empty cells left out)."""
    # Links first: ``[[a\\|b]]`` (the escaped bar of a link inside a table) is one link.
    cells = _CELL_BAR.split(visible_text(line).strip())
    return CELL_SEPARATOR.join(t for c in cells if (t := _inline_text(c.replace("\\|", "|"))))


def _table_lines(lines: list[str]) -> set[int]:
    """Which lines are table rows: a line that starts with ``|``, and the header and body rows
    around a separator row (``|---|:--|``) up to a blank line or a line without a ``|``."""
    rows = {i for i, line in enumerate(lines) if line.lstrip().startswith("|")}
    for i, line in enumerate(lines):
        if "-" in line and _is_table_separator(line) and ("|" in line or i in rows):
            rows.add(i)
            if i > 0 and "|" in lines[i - 1]:
                rows.add(i - 1)
            j = i + 1
            while j < len(lines) and lines[j].strip() and "|" in lines[j]:
                rows.add(j)
                j += 1
    return rows


def readable_text(text: str, heading: str = "") -> str:
    """``text`` (Markdown) as a reader sees it, flattened: prose on one line, each table row on
    its own line as its cells; leading headings that ``heading`` (the chunk's heading path,
    " > "-joined) names are left out (a client shows them as a breadcrumb)."""
    lines = text.split("\n")
    crumbs = {_inline_text(part).casefold() for part in heading.split(" > ") if part}

    def shown(line: str) -> bool:  # not blank, and no heading the breadcrumb names
        h = atx_heading(line)
        return bool(line.strip()) and (h is None or _inline_text(h[1]).casefold() not in crumbs)

    # from the first line shown; with nothing but the headings, keep them
    start = next((i for i, line in enumerate(lines) if shown(line)), 0)
    table = _table_lines(lines)
    out: list[str] = []  # finished lines
    prose: list[str] = []  # the paragraph being joined
    block = False  # the next piece starts a block (after a blank line, heading, fence, rule)
    for i in range(start, len(lines)):
        line = lines[i]
        if i in table:
            if _is_table_separator(line):
                continue
            row = _table_row(line)
            if row:
                out.append(" ".join(prose))
                prose = []
                out.append(row)
            continue
        # a fence line at any indentation: inside a list item a fence may be indented further
        if not line.strip() or fence_line(line.lstrip()) or _RULE.match(line):
            block = True
            continue
        h = atx_heading(line)
        unquoted = _QUOTE.sub("", line)
        item = LIST_ITEM.match(unquoted)
        piece = _inline_text(h[1] if h is not None else unquoted[item.end() if item else 0 :])
        if not piece:
            continue
        # Headings, list items and paragraphs are separate blocks: " · " between them where the
        # text before does not end a sentence ("Types · Fuzzing", "SQLI · XSS", not "Types Fuzzing")
        if prose and (block or h is not None or item) and prose[-1][-1] not in _SENTENCE_END:
            prose.append(BLOCK_SEPARATOR)
        prose.append(piece)
        block = h is not None
    out.append(" ".join(prose))
    return "\n".join(o for o in out if o)


def excerpt_text(text: str, words: Sequence[str], heading: str = "") -> str:
    """At most :data:`EXCERPT_CHARS` of :func:`readable_text`, centred on the first query word."""
    return _window(readable_text(text, heading), words, EXCERPT_CHARS).strip("\n")


def folder_of(path: str, vault_name: str) -> str:
    """The folder every view shows for a card (search and related rows, completion detail,
    ``workspace/symbol``'s container, the editors' lists): its folder inside the vault, or the
    vault's own folder name for a card at the top of the vault."""
    return path.rpartition("/")[0] or vault_name


VIA_LINKS = "via links"


def legs_text(legs: dict[str, int]) -> str:
    """The legs that found a card, as ``leg#rank`` words; a card no leg found came in through
    links to and from the top results (or is among the most-linked cards for an empty query)."""
    return " ".join(f"{k}#{v}" for k, v in legs.items()) or VIA_LINKS


def result_dict(r: CardResult, words: Sequence[str]) -> dict[str, Any]:
    c = r.chunk
    text = _without_title_heading(str(c.get("text", "")), r.title)
    out: dict[str, Any] = {
        "path": r.path,
        "title": r.title,
        "score": round(r.score, 6),
        "line_start": int(c.get("line_start", 0)),
        "line_end": int(c.get("line_end", 0)),
        "heading": c.get("heading", ""),
        "excerpt": excerpt(text, words),
        "legs": dict(r.legs),
    }
    # Added after "excerpt" (which stays as it was): link text instead of link syntax, table
    # rows as cells on their own lines, no heading marks; the leading headings are in "heading".
    out["excerpt_text"] = excerpt_text(text, words, str(out["heading"]))
    if r.notes:
        out["graph"] = dict(r.notes)
    return out
