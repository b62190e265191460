"""Rename a card, its title or one of its headings: the text edits every link needs.

Pure: no LSP types, no file writes. A :class:`RenamePlan` holds text edits (code-point offsets
into each card's current text, keyed by the card's path *before* the move) and the file move, if
any. The server turns it into a ``WorkspaceEdit``; ``benchmarks/rename_roundtrip.py`` applies it
to files itself.

Every link is rewritten in its own form: only the part that names the card (or the heading)
changes, so ``#heading`` / ``#^block`` suffixes, ``|alias`` text, ``![[embeds]]``, folder
prefixes, a written ``.md``, ``<angle>`` destinations and URL encoding (``%20``) stay as written.
A name written in lower (or upper) case keeps that case.

Which name a rename changes (:func:`name_source`): the file name when the card's title is its
file name (Obsidian), else the frontmatter ``title`` or the opening H1 that gives the title. A
file rename also rewrites a frontmatter ``title`` or an opening H1 that equals the old file name
exactly, so the card keeps showing its name.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import unquote

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import (
    DENDRON_SCHEME,
    Resolution,
    Stage,
    name_key,
    norm,
    tie_break_key,
)
from zettel_lsp.notes.anchors import heading_for, heading_key
from zettel_lsp.notes.frontmatter import scalar_text
from zettel_lsp.notes.markdown_links import markdown_links
from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.model import Card, Heading, Link, LinkKind, file_stem, strip_md
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.notes.title_rule import NOT_IN_FILE_NAMES_HERE, can_be_title


class RenameError(ValueError):
    """A rename that cannot be done (the message says why, for the user)."""


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``text[start:end]`` (code points) with ``new_text``."""

    start: int
    end: int
    new_text: str


@dataclass(slots=True)
class RenamePlan:
    """Edits per card path (before the move) and the move ``(old_path, new_path)``."""

    edits: dict[str, list[TextEdit]] = field(default_factory=dict)
    move: tuple[str, str] | None = None

    def add(self, path: str, edit: TextEdit | None) -> None:
        """Add ``edit`` (None: nothing to change), keeping each card's edits in text order."""
        if edit is not None:
            bisect.insort(self.edits.setdefault(path, []), edit, key=lambda e: e.start)

    @property
    def edit_count(self) -> int:
        return sum(len(e) for e in self.edits.values())


class NameSource(StrEnum):
    FILE = "file"  # the title is the file name
    FRONTMATTER = "frontmatter"  # the frontmatter ``title``
    H1 = "h1"  # the opening H1


_WIKI_INNER = re.compile(r"^(!?)\[\[(.*)\]\]$", re.DOTALL)
_FM_TITLE = re.compile(r"^(title[ \t]*:[ \t]*)(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_ENCODE = {"%": "%25", " ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "\t": "%09"}
_HIGH_ESCAPE = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]")
# what a wikilink may write before the path: Dendron's scheme, then "./" or "/"
_WIKI_PREFIX = re.compile(rf"(?:{DENDRON_SCHEME.pattern})?(?:\./|/)?", re.IGNORECASE)


# ------------------------------------------------------------------ names


def check_file_name(name: str) -> None:
    """Refuse a file name (without ``.md``) that is empty, has a character a file name or a
    wikilink cannot hold, or leading/trailing spaces or dots."""
    if not name or name in (".", ".."):
        raise RenameError("the new name is empty")
    bad = NOT_IN_FILE_NAMES_HERE.search(name)
    if bad:
        raise RenameError(f"the new name cannot contain {bad.group(0)!r}")
    if name != name.strip() or name.endswith("."):
        raise RenameError("the new name cannot start or end with a space, or end with a dot")
    if len(name.encode("utf-8")) > 250:
        raise RenameError("the new name is too long")


def name_source(card: Card) -> NameSource:
    """Where ``card``'s shown name lives."""
    if card.title == card.stem:
        return NameSource.FILE
    fm = scalar_text(card.frontmatter.get("title"))
    if fm is not None and fm.strip() == card.title:
        return NameSource.FRONTMATTER
    h1 = opening_h1(card)
    if h1 is not None and h1.text == card.title:
        return NameSource.H1
    return NameSource.FILE


def opening_h1(card: Card) -> Heading | None:
    """The H1 that opens the body (its first non-blank line), if any."""
    if not card.headings or card.headings[0].level != 1:
        return None
    h = card.headings[0]
    before = card.text.split("\n")[card.body_start_line : h.line]
    return None if any(line.strip() for line in before) else h


def new_path_for(old_path: str, new_stem: str) -> str:
    """``old_path`` with its file name (not its folder or suffix) replaced by ``new_stem``,
    which must be a valid file name (:func:`check_file_name`)."""
    check_file_name(new_stem)
    folder, _, name = old_path.rpartition("/")
    suffix = name[len(strip_md(name)) :]
    return f"{folder}/{new_stem}{suffix}" if folder else f"{new_stem}{suffix}"


def _cap_words(s: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in s.split(" "))


def case_like(written: str, old: str, new: str) -> str:
    """``new`` in the case ``written`` gives ``old``: as given, lower case, upper case, or each
    word capitalised ("Embed Files" for ``Embed files.md``)."""
    if written == old:
        return new
    for style in (str.lower, str.upper, _cap_words):
        if written == style(old):
            return style(new)
    return new


def _encode_like(written: str, name: str, angle: bool) -> str:
    """``name`` (a path, or a component) as a Markdown destination written like ``written``."""
    if angle:
        return name
    out = "".join(_ENCODE.get(ch, ch) for ch in name)
    if _HIGH_ESCAPE.search(written):  # the writer percent-encoded non-ASCII too
        out = "".join(
            ch if ord(ch) < 128 else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in out
        )
    return out


# ------------------------------------------------------------------ where names sit in a link


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a card's text: ``text[start:end]`` as written."""

    start: int  # offsets into the card text
    end: int
    text: str  # as written


def wiki_name(link: Link, swapped: bool) -> tuple[Part, Part | None] | None:
    """In a wikilink ``[[target#sub|label]]`` as written, the parts that name the card and its
    subpath: on the label side when the link resolved through it (``swapped``, Dendron's
    order). None for other links."""
    m = _WIKI_INNER.match(link.raw) if link.kind in (LinkKind.WIKI, LinkKind.EMBED) else None
    if m is None:
        return None
    at, side = link.span.start + m.start(2), m.group(2)
    bar = side.find("|")
    if bar != -1 and swapped:
        at, side = at + bar + 1, side[bar + 1 :]
    elif bar != -1:
        side = side[:bar].removesuffix("\\")  # [[a\|b]] in a table
    name, hash_sign, sub = side.partition("#")
    return _trimmed(at, name), (_trimmed(at + len(name) + 1, sub) if hash_sign else None)


def _changed(part: Part, new: str) -> TextEdit | None:
    """The edit that writes ``new`` over ``part``; None when it is written so already."""
    return None if new == part.text else TextEdit(part.start, part.end, new)


def _trimmed(at: int, text: str) -> Part:
    """``text``, found at offset ``at``, without its surrounding white space."""
    lead = len(text) - len(text.lstrip())
    return Part(at + lead, at + lead + len(text.strip()), text.strip())


def _markdown_dest(link: Link) -> tuple[Part, bool] | None:
    """A Markdown link's destination path part (before ``#``) as written, and whether it is in
    ``<angle brackets>``."""
    found = markdown_links(link.raw)
    if not found or found[0].start != 0:
        return None
    dest, q = found[0].destination, found[0].dest_start
    lead = len(dest) - len(dest.lstrip())
    path = dest.strip().split("#", 1)[0]
    at = link.span.start + q + lead
    return Part(at, at + len(path), path), link.raw[q - 1] == "<"


def _markdown_fragment(link: Link) -> tuple[Part, bool] | None:
    found = _markdown_dest(link)
    if found is None:
        return None
    part, angle = found
    raw = link.raw
    rel = part.end - link.span.start
    if raw[rel : rel + 1] != "#":
        return None
    end = rel + 1
    while end < len(raw) and raw[end] not in " \t>)":
        end += 1
    if angle:
        end = raw.index(">", rel)
    return Part(part.end + 1, link.span.start + end, raw[rel + 1 : end]), angle


# ------------------------------------------------------------------ file renames


def plan_file_rename(
    graph: LinkGraph,
    old_path: str,
    new_path: str,
    *,
    overrides: Mapping[str, Card] | None = None,
    strict: bool = True,
) -> RenamePlan:
    """Move the card at ``old_path`` to ``new_path`` and rewrite every link to it.

    ``overrides`` are cards to use instead of the graph's (the editor's unsaved buffers).
    An existing card at ``new_path`` is refused. Another card with the same file name in
    another folder is allowed: a ``[[New]]`` that would pick that other card is written with
    its folders instead. ``strict`` also refuses a name that would take over links now pointing
    at such another card (a rename the editor does anyway, ``willRenameFiles``, is not strict).
    """
    overrides = overrides or {}
    card = _card_to_rename(graph, old_path, overrides)
    new_stem = file_stem(new_path)
    check_file_name(new_stem)
    if not new_path.lower().endswith(".md"):
        raise RenameError("a card's file name must end with .md")
    old_stem = card.stem
    if norm(strip_md(new_path)) != norm(strip_md(old_path)):
        clash = graph.names.at_path(norm(strip_md(new_path)))
        if clash is not None and clash != old_path:
            raise RenameError(f"a card named {new_path} exists already")
    others = graph.names.owners(Stage.STEM, new_stem) - {old_path}
    if strict:
        _refuse_hijack(graph, old_path, new_path, overrides, others)
    plan = RenamePlan(move=(old_path, new_path) if new_path != old_path else None)
    if new_path == old_path:
        return plan

    def stem_wins(src: str) -> bool:
        return _bare_name_picks(graph, old_path, new_path, src, others)

    for src, link, res in _links_of(graph, {*graph.backlinks(old_path), old_path}, overrides):
        src_new = new_path if src == old_path else src
        if res.target == old_path and link.target:
            plan.add(src, _retarget(link, res, src, src_new, old_path, new_path, stem_wins))
        elif src == old_path and posixpath.dirname(old_path) != posixpath.dirname(new_path):
            plan.add(src, _relative_from_moved(link, res, old_path, new_path))
    for edit in _title_edits(card, old_stem, new_stem):
        plan.add(old_path, edit)
    return plan


def _card_to_rename(graph: LinkGraph, path: str, overrides: Mapping[str, Card]) -> Card:
    card = overrides.get(path) or graph.cards.get(path)
    if card is None:
        raise RenameError(f"{path} is not a card of this vault")
    return card


def _links_of(
    graph: LinkGraph, sources: Iterable[str], overrides: Mapping[str, Card]
) -> Iterator[tuple[str, Link, Resolution]]:
    """Every link, resolved, of the cards at ``sources`` and the open cards (``overrides``, as
    the editor has them), by card path."""
    for src in sorted({*sources, *overrides}):
        card = overrides.get(src) or graph.cards.get(src)
        for link in card.links if card is not None else ():
            yield src, link, graph.resolve_link(link, src)


def _bare_name_picks(
    graph: LinkGraph, old_path: str, new_path: str, src: str, others: set[str]
) -> bool:
    """Whether ``[[New]]`` (the new file name alone) written in ``src`` resolves to the card once
    it is at ``new_path``: the resolver's order (a path from the vault root, then from ``src``'s
    folder, then the file name with its tie-break) with the card moved."""
    name = norm(file_stem(new_path))
    mine = norm(strip_md(new_path))
    for cand in (name, norm(posixpath.join(posixpath.dirname(src), name))):
        if cand == mine:
            return True
        hit = graph.names.at_path(cand)
        if hit is not None and hit != old_path:
            return False
    here = tie_break_key(new_path, src)
    return all(here < tie_break_key(o, src) for o in others)


def _refuse_hijack(
    graph: LinkGraph,
    old_path: str,
    new_path: str,
    overrides: Mapping[str, Card],
    others: set[str],
) -> None:
    """Refuse a new name that would take over links now pointing at another card
    (``[[New]]`` that picks this card after the rename)."""
    key = name_key(file_stem(new_path))
    for src, link, res in _links_of(graph, graph._by_key.get(key, ()), overrides):
        if not link.target or "/" in link.target or name_key(link.target) != key:
            continue
        if res.target in (None, old_path) or res.stage not in (Stage.PATH, Stage.STEM):
            continue
        if _bare_name_picks(graph, old_path, new_path, src, others):
            raise RenameError(
                f"{link.raw} in {src} points at {res.target} and would point at this card "
                f"after the rename; pick another name"
            )


def _retarget(
    link: Link,
    res: Resolution,
    src: str,
    src_new: str,
    old_path: str,
    new_path: str,
    stem_wins: Callable[[str], bool],
) -> TextEdit | None:
    if res.stage not in (Stage.PATH, Stage.SUFFIX, Stage.STEM):
        return None  # named by title, alias or id: those do not change with the file name
    if link.kind in (LinkKind.WIKI, LinkKind.EMBED):
        parts = wiki_name(link, res.swapped)
        if parts is None:
            return None
        part = parts[0]
        new = _wiki_target(part.text, old_path, new_path, stem_wins(src))
    else:
        found = _markdown_dest(link)
        if found is None:
            return None
        part, angle = found
        new = _markdown_target(part.text, angle, src, src_new, old_path, new_path)
    return None if new is None else _changed(part, new)


def _wiki_target(written: str, old_path: str, new_path: str, stem_wins: bool) -> str | None:
    m = _WIKI_PREFIX.match(written)
    prefix = m.group(0) if m else ""
    body = written[len(prefix) :]
    bare = strip_md(body)
    md = body[len(bare) :]
    old_stem, new_stem = file_stem(old_path), file_stem(new_path)
    folder, slash, last = bare.rpartition("/")
    if norm(last) != norm(old_stem):
        return None  # does not spell the file name (a path we cannot map): leave it
    if slash and posixpath.dirname(old_path) == posixpath.dirname(new_path):
        return prefix + folder + slash + case_like(last, old_stem, new_stem) + md
    if not slash and stem_wins:
        return prefix + case_like(last, old_stem, new_stem) + md
    return strip_md(new_path) + md


def _markdown_target(
    written: str, angle: bool, src: str, src_new: str, old_path: str, new_path: str
) -> str | None:
    decoded = unquote(written.replace("\\", ""))
    old_stem, new_stem = file_stem(old_path), file_stem(new_path)
    head, slash, last_raw = written.rpartition("/")
    last = unquote(last_raw.replace("\\", ""))
    has_md = last.lower().endswith(".md")
    if norm(strip_md(last)) != norm(old_stem):
        return None
    src_folder = posixpath.dirname(src)
    same_folder = posixpath.dirname(old_path) == posixpath.dirname(new_path)
    if same_folder and src_folder == posixpath.dirname(src_new):
        base = case_like(strip_md(last), old_stem, new_stem)
        name = base + (last[len(strip_md(last)) :] if has_md else "")
        return head + slash + _encode_like(last_raw, name, angle)
    # folders change: write the path again, relative when it was written relative
    rel_hit = norm(strip_md(posixpath.normpath(posixpath.join(src_folder, decoded.lstrip("/")))))
    relative = (
        bool(src_folder) and not decoded.startswith("/") and rel_hit == norm(strip_md(old_path))
    )
    target = new_path if has_md else strip_md(new_path)
    if decoded.startswith("/"):
        path = "/" + target
    elif relative:
        path = posixpath.relpath(target, posixpath.dirname(src_new) or ".")
    else:  # written from the vault root
        path = target
    return _encode_like(written, path, angle)


def _relative_from_moved(
    link: Link, res: Resolution, old_path: str, new_path: str
) -> TextEdit | None:
    """A relative Markdown link inside a card that changes folder, to another card."""
    if link.kind not in (LinkKind.MARKDOWN, LinkKind.MARKDOWN_EMBED) or res.target is None:
        return None
    if res.stage is not Stage.PATH or not link.target or link.target.startswith("/"):
        return None
    found = _markdown_dest(link)
    if found is None:
        return None
    part, angle = found
    decoded = unquote(part.text.replace("\\", ""))
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(old_path), decoded))
    if norm(strip_md(joined)) != norm(strip_md(res.target)):
        return None  # written from the vault root: still right after the move
    has_md = decoded.lower().endswith(".md")
    target = res.target if has_md else strip_md(res.target)
    path = posixpath.relpath(target, posixpath.dirname(new_path) or ".")
    return _changed(part, _encode_like(part.text, path, angle))


def _title_edits(card: Card, old_stem: str, new_stem: str) -> Iterator[TextEdit]:
    """The frontmatter title and the opening H1 when they repeat the file name exactly."""
    fm_value = frontmatter_title(card)
    if fm_value is not None and fm_value.text == old_stem:
        yield TextEdit(fm_value.start, fm_value.end, yaml_scalar(card.text, fm_value, new_stem))
    h1 = opening_h1(card)
    part = heading_text(card, h1) if h1 is not None else None
    if part is not None and part.text == old_stem:
        yield TextEdit(part.start, part.end, new_stem)


def frontmatter_title(card: Card) -> Part | None:
    """The frontmatter ``title`` value as written (inside its quotes, if quoted)."""
    if card.body_start_line == 0:
        return None
    index = LineIndex(card.text)  # between the "---" lines
    inner = index.line_start(1), index.line_start(card.body_start_line - 1)
    m = _FM_TITLE.search(card.text, *inner)
    if m is None:
        return None
    value, at = m.group(2), m.start(2)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return Part(at + 1, at + len(value) - 1, value[1:-1])
    return Part(at, at + len(value), value)


_YAML_PLAIN_UNSAFE = re.compile(r"^[-?:,\[\]{}#&*!|>'\"%@`\s]|: | #|:$|\s$")


def yaml_scalar(text: str, part: Part, value: str) -> str:
    """``value`` written where the frontmatter value ``part`` is: inside its quotes when it is
    quoted (escaped for them), plain when YAML reads it back as the same string, else quoted."""
    quote = text[part.start - 1 : part.start] if part.start > 0 else ""
    if quote in ("'", '"') and text[part.end : part.end + 1] == quote:
        if quote == "'":
            return value.replace("'", "''")
        return value.replace("\\", "\\\\").replace('"', '\\"')
    if _YAML_PLAIN_UNSAFE.search(value) or value.lower() in ("true", "false", "null", "yes", "no"):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def heading_text(card: Card, h: Heading) -> Part | None:
    index = LineIndex(card.text)
    line = index.line_text(h.line)
    parsed = atx_heading(line)
    if parsed is None or parsed[1] != h.text:
        return None
    at = line.find(h.text, line.index("#") + parsed[0]) if h.text else -1
    if at < 0:
        return None
    start = index.line_start(h.line) + at
    return Part(start, start + len(h.text), h.text)


# ------------------------------------------------------------------ title renames


def plan_title_rename(
    graph: LinkGraph, path: str, new_title: str, *, overrides: Mapping[str, Card] | None = None
) -> RenamePlan:
    """Change the frontmatter title or opening H1 that gives ``path``'s title, and every link
    that names the card by that title."""
    overrides = overrides or {}
    card = _card_to_rename(graph, path, overrides)
    source = name_source(card)
    if source is NameSource.FILE:
        return plan_file_rename(graph, path, new_path_for(path, new_title), overrides=overrides)
    if not can_be_title(new_title):
        raise RenameError("a title cannot be empty, hold | # ^ [ ] or a line break")
    for stage in (Stage.STEM, Stage.TITLE, Stage.ALIAS):
        clash = graph.names.owners(stage, new_title) - {path}
        if clash:
            raise RenameError(f"another card is named {new_title!r}: {sorted(clash)[0]}")
    plan = RenamePlan()
    place = (
        frontmatter_title(card)
        if source is NameSource.FRONTMATTER
        else (heading_text(card, h) if (h := opening_h1(card)) else None)
    )
    if place is None:
        raise RenameError("cannot find where this card's title is written")
    value = new_title if source is NameSource.H1 else yaml_scalar(card.text, place, new_title)
    plan.add(path, TextEdit(place.start, place.end, value))
    for src, link, res in _links_of(graph, {*graph.backlinks(path), path}, overrides):
        parts = wiki_name(link, res.swapped)
        if res.target != path or res.stage is not Stage.TITLE or parts is None:
            continue
        plan.add(src, _changed(parts[0], case_like(parts[0].text, card.title, new_title)))
    return plan


# ------------------------------------------------------------------ heading renames


def slug(text: str) -> str:
    """A GitHub-style heading slug: lower case, punctuation dropped, spaces as ``-``."""
    low = unicodedata.normalize("NFC", text).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", low))


def plan_heading_rename(
    graph: LinkGraph,
    path: str,
    heading: Heading,
    new_text: str,
    *,
    overrides: Mapping[str, Card] | None = None,
) -> RenamePlan:
    """Rename a heading of the card at ``path`` and every ``[[Card#Heading]]`` (and Markdown
    ``(Card.md#Heading)``) that points at it."""
    overrides = overrides or {}
    card = _card_to_rename(graph, path, overrides)
    if not can_be_title(new_text):
        raise RenameError("a heading cannot be empty, hold | # ^ [ ] or a line break")
    key = heading_key(new_text)
    if any(heading_key(h.text) == key and h.line != heading.line for h in card.headings):
        raise RenameError(f"this card has a heading {new_text!r} already")
    place = heading_text(card, heading)
    if place is None:
        raise RenameError("cannot find this heading's text")
    plan = RenamePlan()
    plan.add(path, TextEdit(place.start, place.end, new_text))
    for src, link, res in _links_of(graph, {*graph.backlinks(path), path}, overrides):
        if not link.heading or res.target != path:
            continue
        h = heading_for(card, link.heading)
        if h is None or h.line != heading.line:
            continue
        plan.add(src, _heading_link_edit(link, heading.text, new_text))
    return plan


def _heading_link_edit(link: Link, old: str, new: str) -> TextEdit | None:
    if link.kind in (LinkKind.WIKI, LinkKind.EMBED):
        sub = parts[1] if (parts := wiki_name(link, swapped=False)) else None
        if sub is None:
            return None
        # Obsidian's heading path A#B names its last heading
        last_at = sub.text.rfind("#") + 1
        last = _trimmed(sub.start + last_at, sub.text[last_at:])
        return TextEdit(last.start, last.end, case_like(last.text, old, new))
    found = _markdown_fragment(link)
    if found is None:
        return None
    part, angle = found
    decoded = unquote(part.text)
    if decoded == slug(old) and slug(old) != old:
        new_written = slug(new)
    else:
        new_written = _encode_like(part.text, case_like(decoded, old, new), angle)
    return TextEdit(part.start, part.end, new_written)
