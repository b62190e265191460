"""Parse one Markdown card: title, aliases, tags, id, headings, block ids and links with ranges.

``parse_card`` never raises: whatever the input, it returns a ``Card`` (problems are listed on it).
Links, tags and headings inside fenced code, inline code and HTML comments are ignored.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from urllib.parse import unquote

from zettel_lsp.notes.frontmatter import scalar_text, split_frontmatter, string_list
from zettel_lsp.notes.markdown_links import (
    is_one_markdown_link,
    markdown_links,
    markdown_links_as_text,
)
from zettel_lsp.notes.masking import atx_heading, blank_out, non_prose_spans
from zettel_lsp.notes.model import BlockId, Card, Heading, Link, LinkKind, Tag, file_stem
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.notes.title_rule import TitleSource, card_title, same_name

log = logging.getLogger(__name__)

# CPU seconds of the parsing thread one card may take (a busy machine does not make it plain text)
PARSE_BUDGET_S = 2.0

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# [text](dest "title") links: a linear scan, see zettel_lsp.notes.markdown_links
# a tag holds a letter: digits, "/" and "-" before the first one (``[\w/-]*[^\W\d]`` was
# ambiguous and backtracked quadratically when a match had to fail)
TAG = re.compile(r"(?<![^\s(\[{,;])#([\d/-]*[^\W\d][\w/-]*)")
BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)
URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
ZETTEL_ID = re.compile(r"^(\d{12,14})(?!\d)")


def parse_card(
    path: str,
    text: str,
    *,
    decoded_with_replacement: bool = False,
    title_source: TitleSource | str = TitleSource.AUTO,
    budget_s: float = PARSE_BUDGET_S,
) -> Card:
    """Parse ``text`` as the card at vault-relative ``path``. Never raises.

    ``title_source`` picks the title rule (see :func:`~zettel_lsp.notes.title_rule.card_title`).
    Parsing past ``budget_s`` seconds stops at the next step: the card is then plain text (its
    title from the file name, no links, headings or tags) with a warning, so one hostile note
    never stalls the rest. Every scan is linear; the budget is the safety net.
    """
    try:
        return _parse(
            path, text, decoded_with_replacement, title_source, time.thread_time() + budget_s
        )
    except _OverBudget:
        problem = f"{path}: parsing took longer than {budget_s:g} s; indexed as plain text"
        log.warning("%s", problem)
        title, _ = card_title(file_stem(path), None, None, title_source)
        return Card(
            path, title, text, problems=[problem], decoded_with_replacement=decoded_with_replacement
        )
    except Exception as exc:
        log.exception("parser failed on %s", path)
        problem = f"{path}: parser error ({type(exc).__name__}: {exc}); indexed as plain text"
        return Card(path, file_stem(path), text, problems=[problem])


def title_candidates(text: str) -> tuple[str | None, str | None]:
    """The frontmatter ``title`` and the opening H1 of ``text`` (either may be None): what
    :func:`~zettel_lsp.notes.title_rule.card_title` chooses from (benchmarks/title_rule.py)."""
    fm = split_frontmatter(text)
    prose = blank_out(text, non_prose_spans(text, fm.end))
    h1 = _opening_h1(prose, fm.end, _headings(prose, LineIndex(text)))
    return scalar_text(fm.data.get("title")), h1


class _OverBudget(Exception):
    """Parsing one card took longer than its budget."""


def _check(deadline: float) -> None:
    if time.thread_time() >= deadline:
        raise _OverBudget


def _parse(
    path: str, text: str, replaced: bool, title_source: TitleSource | str, deadline: float
) -> Card:
    _check(deadline)
    lines = LineIndex(text)
    fm = split_frontmatter(text)
    _check(deadline)
    masked = non_prose_spans(text, fm.end)
    prose = blank_out(text, masked)
    _check(deadline)

    links = list(_wikilinks(prose, text, lines))
    _check(deadline)
    # Markdown links are searched with wikilinks blanked out, so "[[a]](b)" stays one wikilink.
    prose_no_wiki = blank_out(prose, [(ln.span.start, ln.span.end) for ln in links])
    links.extend(_markdown_links(prose_no_wiki, text, lines))
    links.sort(key=lambda ln: ln.span.start)
    prose_no_links = blank_out(prose_no_wiki, [(ln.span.start, ln.span.end) for ln in links])
    _check(deadline)

    headings = _headings(prose, lines)
    _check(deadline)
    tags = _frontmatter_tags(fm.data) + _inline_tags(prose_no_links, lines)
    block_ids = [
        BlockId(m.group(1), lines.line_of(m.start(1))) for m in BLOCK_ID.finditer(prose_no_links)
    ]
    _check(deadline)

    stem = file_stem(path)
    title, extra = card_title(
        stem,
        scalar_text(fm.data.get("title")),
        _opening_h1(prose, fm.end, headings),
        title_source,
    )
    aliases = list(
        dict.fromkeys(string_list(fm.data.get("aliases")) + string_list(fm.data.get("alias")))
    )
    aliases += [a for a in extra if not any(same_name(a, b) for b in aliases)]
    card_id = scalar_text(fm.data.get("id"))
    if card_id is None:
        m = ZETTEL_ID.match(stem)
        card_id = m.group(1) if m else None

    card = Card(
        path=path,
        title=title,
        text=text,
        aliases=[a for a in aliases if a != title],
        tags=tags,
        card_id=card_id,
        headings=headings,
        links=links,
        block_ids=block_ids,
        frontmatter=fm.data,
        body_start_line=fm.end_line,
        masked=masked,
        decoded_with_replacement=replaced,
    )
    if fm.problem:
        card.problems.append(f"{path}: {fm.problem}")
    return card


def wikilink_parts(inner: str) -> tuple[str, str | None]:
    """The inside of ``[[...]]`` as (target with its ``#subpath``, label or None)."""
    target_part, bar, label = inner.partition("|")
    if not bar:
        return inner, None
    return target_part.removesuffix("\\"), label.strip() or None  # [[a\|b]] inside a table


def visible_text(markdown: str) -> str:
    """Link syntax replaced by what a reader sees, by the parser's own link rules:
    ``[[a|b]]`` → ``b``, ``[[a#h]]`` → ``a``, ``![[c]]`` → ``c``, ``[t](u)`` → ``t``."""
    return markdown_links_as_text(WIKILINK.sub(_shown, markdown))


def _shown(m: re.Match[str]) -> str:
    target_part, label = wikilink_parts(m.group(2))
    return label or target_part.split("#", 1)[0].strip()


def _wikilinks(prose: str, text: str, lines: LineIndex) -> list[Link]:
    out: list[Link] = []
    for m in WIKILINK.finditer(prose):
        target_part, label = wikilink_parts(m.group(2))
        kind = LinkKind.EMBED if m.group(1) else LinkKind.WIKI
        _append_link(out, kind, m.span(), text, lines, target_part, label)
    return out


def _markdown_links(prose: str, text: str, lines: LineIndex) -> list[Link]:
    out: list[Link] = []
    for m in markdown_links(prose):
        dest = m.destination.strip()
        if not dest or URL_SCHEME.match(dest) or dest.startswith("//"):
            continue  # external URL (https:, mailto:, obsidian:, ...) or empty: not a card link
        dest = unquote(dest.replace("\\", ""))
        kind = LinkKind.MARKDOWN_EMBED if m.embed else LinkKind.MARKDOWN
        _append_link(out, kind, (m.start, m.end), text, lines, dest, m.text.strip() or None)
    return out


def _append_link(
    out: list[Link],
    kind: LinkKind,
    where: tuple[int, int],
    text: str,
    lines: LineIndex,
    target_part: str,
    label: str | None,
) -> None:
    """Split ``target#subpath`` and record the link, unless it names nothing at all."""
    target, subpath = _split_subpath(target_part)
    if target or subpath is not None:
        start, end = where
        # interned: a card linked from 700 cards had 700 copies of its name and its link text
        raw, label = sys.intern(text[start:end]), label and sys.intern(label)
        out.append(Link(kind, raw, lines.span(start, end), sys.intern(target), subpath, label))


def _split_subpath(target: str) -> tuple[str, str | None]:
    name, hash_mark, sub = target.partition("#")
    return name.strip(), (sub.strip() or None) if hash_mark else None


def _headings(prose: str, lines: LineIndex) -> list[Heading]:
    found: list[tuple[int, str, int]] = []  # (level, text, line)
    for i, text in enumerate(prose.split("\n")):
        if "#" in text[:4] and (h := atx_heading(text)) is not None:
            found.append((h[0], h[1].strip(), i))
    # a section ends before the next heading of the same or a higher level, or at the end
    last = lines.line_count - 1
    return [
        Heading(level, raw, line, next((n - 1 for lv, _, n in found[i + 1 :] if lv <= level), last))
        for i, (level, raw, line) in enumerate(found)
    ]


def _opening_h1(prose: str, body_start: int, headings: list[Heading]) -> str | None:
    """The text of an H1 that opens the note (its first non-blank line) and is not just a link,
    with links in it written as what a reader sees ("About [[Note|that]]" -> "About that").
    Later H1s are section headings in many vaults ("# [[Raspberry Pi]]" inside "Homelab.md").
    Whether this text is the title or an alias is :func:`card_title`'s decision."""
    h1 = headings[0] if headings and headings[0].level == 1 and headings[0].text else None
    if h1 is None or not prose[body_start:].lstrip().startswith("#"):
        return None
    if WIKILINK.fullmatch(h1.text) or is_one_markdown_link(h1.text):
        return None
    return " ".join(markdown_links_as_text(WIKILINK.sub(_wiki_label, h1.text)).split()) or None


def _wiki_label(m: re.Match[str]) -> str:
    target, _, label = m.group(2).partition("|")
    return (label or target.split("#", 1)[0] or target).strip().rstrip("\\")


def _frontmatter_tags(data: dict[str, object]) -> list[Tag]:
    names = string_list(data.get("tags"), split=True) + string_list(data.get("tag"), split=True)
    return [Tag(sys.intern(n.lstrip("#")), None) for n in names if n.lstrip("#")]


def _inline_tags(prose: str, lines: LineIndex) -> list[Tag]:
    """``#name`` tags; a trailing ``/`` or ``-`` is not part of the name (a letter always is)."""
    return [
        Tag(sys.intern(name), lines.span(m.start(), m.start() + 1 + len(name)))
        for m in TAG.finditer(prose)
        if (name := m.group(1).rstrip("/-"))
    ]
