"""Resolve a link's target text to a card path. All resolution rules live here.

Order (first stage with a match wins), everything case-insensitive and Unicode-NFC-normalised:

1. **Path**: for Markdown links, relative to the linking card's folder, then to the vault root;
   for wikilinks, from the vault root, then relative to the linking card's folder. With or without
   the ``.md`` suffix.
2. **Path suffix**: ``[[folder/Note]]`` matches any card whose path ends with ``/folder/Note.md``.
3. **File stem**: ``[[Note]]`` matches ``any/folder/Note.md``.
4. **Title** (frontmatter ``title`` or first H1), 5. **alias**, 6. **id** (frontmatter ``id`` or a
   Zettel id at the start of the file name).

Dendron's cross-vault form ``dendron://vault/note`` is read as ``note``.

Ties inside a stage: a card in the linking card's own folder first, then the shortest path, then
alphabetical order. A wikilink written ``[[left|right]]`` is read Obsidian's way (target on the
left) unless the left side matches no file path or stem and the right side does, or the left side
resolves to nothing at all and the right side resolves by title, alias or id: Dendron writes
``[[label|target]]``.
"""

from __future__ import annotations

import posixpath
import re
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from zettel_lsp.notes.model import Card, Link, LinkKind

ATTACHMENT_SUFFIXES = frozenset(
    {
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "svg",
        "webp",
        "avif",
        "heic",
        "tif",
        "tiff",
        "pdf",
        "mp3",
        "wav",
        "ogg",
        "flac",
        "m4a",
        "webm",
        "mp4",
        "mov",
        "mkv",
        "ogv",
        "3gp",
        "canvas",
        "base",
        "excalidraw",
        "zip",
        "csv",
        "json",
        "txt",
        "html",
        "htm",
        "docx",
        "xlsx",
        "pptx",
        "epub",
    }
)


class Stage(StrEnum):
    PATH = "path"
    SUFFIX = "path-suffix"
    STEM = "stem"
    TITLE = "title"
    ALIAS = "alias"
    ID = "id"


_FILE_STAGES = frozenset({Stage.PATH, Stage.SUFFIX, Stage.STEM})
_DENDRON_SCHEME = re.compile(r"^dendron://[^/]*/", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Resolution:
    target: str | None  # card path, or None when unresolved
    stage: Stage | None = None
    swapped: bool = False  # resolved through the right side of [[a|b]]
    attachment: bool = False  # a link to a non-note file (image, PDF, ...)
    ambiguous: bool = False  # several cards matched in the winning stage


def norm(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip().lower()


def strip_md(path: str) -> str:
    """Drop a ``.md`` suffix. (``.markdown`` stays: Dendron names notes like ``a.markdown.md``.)"""
    return path[:-3] if path.lower().endswith(".md") else path


def name_key(target: str) -> str:
    """The key a link target is filed under for incremental re-resolution: its last component."""
    return norm(strip_md(target.rsplit("/", 1)[-1]))


def card_keys(card: Card) -> set[str]:
    """Every name under which ``card`` can be linked (see :func:`name_key`)."""
    keys = {norm(card.stem), norm(card.title)}
    keys.update(norm(a) for a in card.aliases)
    if card.card_id:
        keys.add(norm(card.card_id))
    keys.discard("")
    return keys


def stage_names(card: Card) -> list[tuple[Stage, set[str]]]:
    """The names the resolver files ``card`` under, per stage (normalised as ``norm``)."""
    names = [
        (Stage.STEM, {norm(card.stem)}),
        (Stage.TITLE, {norm(card.title)}),
        (Stage.ALIAS, {norm(a) for a in card.aliases}),
    ]
    if card.card_id:
        names.append((Stage.ID, {norm(card.card_id)}))
    return names


def add_owner(table: dict[str, tuple[str, ...]], name: str, path: str) -> None:
    """File ``path`` under ``name``. Owners are sorted tuples, not sets: nearly every name has one
    owner, and a set of one costs 216 bytes against 48; equal names share one string (a file
    name is usually the title too)."""
    owners = table.get(name)
    if owners is None:
        table[sys.intern(name)] = (path,)
    elif path not in owners:
        table[name] = tuple(sorted((*owners, path)))


def drop_owner(table: dict[str, tuple[str, ...]], name: str, path: str) -> None:
    """Undo :func:`add_owner` (the name goes with its last owner)."""
    owners = table.get(name)
    if owners is not None:
        rest = tuple(p for p in owners if p != path)
        if rest:
            table[name] = rest
        else:
            del table[name]


class Resolver:
    """Name tables over a set of cards; cheap to update one card at a time."""

    def __init__(self) -> None:
        self._paths: dict[str, str] = {}  # norm(path without .md) -> path
        # name -> the cards filed under it (add_owner: ~35 MB less than sets at 100k cards)
        self._tables: dict[Stage, dict[str, tuple[str, ...]]] = {
            Stage.STEM: {},
            Stage.TITLE: {},
            Stage.ALIAS: {},
            Stage.ID: {},
        }

    def add(self, card: Card) -> None:
        self._paths[norm(strip_md(card.path))] = card.path
        for stage, names in stage_names(card):
            table = self._tables[stage]
            for name in names:
                add_owner(table, name, card.path)

    def remove(self, card: Card) -> None:
        self._paths.pop(norm(strip_md(card.path)), None)
        for stage, names in stage_names(card):
            table = self._tables[stage]
            for name in names:
                drop_owner(table, name, card.path)

    def owners(self, stage: Stage, name: str) -> set[str]:
        return set(self._tables[stage].get(norm(name), ()))

    def owners_of_key(self, stage: Stage, key: str) -> tuple[str, ...]:
        """The cards filed under ``key`` (a name normalised as :func:`norm`) at ``stage``."""
        table = self._tables.get(stage)
        return table.get(key, ()) if table is not None and key else ()

    def at_path(self, key: str) -> str | None:
        """The card whose vault path (without ``.md``, normalised as ``norm``) is ``key``."""
        return self._paths.get(key)

    def resolve_link(self, link: Link, source: str) -> Resolution:
        if not link.target:  # [[#Heading]] or [text](#heading): a link inside the same card
            return Resolution(source, Stage.PATH)
        markdown = link.kind in (LinkKind.MARKDOWN, LinkKind.MARKDOWN_EMBED)
        first = self.resolve(link.target, source, markdown=markdown)
        if first.stage in _FILE_STAGES or not link.label or markdown:
            return first
        # [[left|right]]: Obsidian writes [[target|label]], Dendron [[label|target]]. A side that
        # names a file (path or stem) beats a side that only matches a title, alias or id.
        other = link.label.split("#", 1)[0].strip()
        second = self.resolve(other, source) if other else Resolution(None)
        if second.target is not None and (first.target is None or second.stage in _FILE_STAGES):
            return Resolution(second.target, second.stage, swapped=True, ambiguous=second.ambiguous)
        return first

    def resolve(self, target: str, source: str, *, markdown: bool = False) -> Resolution:
        """Resolve ``target`` as written in the card at path ``source``."""
        t = _DENDRON_SCHEME.sub("", norm(target)).lstrip("/")
        if t.startswith("./"):
            t = t[2:]
        if not t:
            return Resolution(None)
        src_folder = norm(posixpath.dirname(source))
        relative = norm(posixpath.normpath(posixpath.join(src_folder, t))) if src_folder else t
        candidates = [relative, t] if markdown else [t, relative]
        for cand in candidates:
            hit = self._paths.get(strip_md(cand))
            if hit is not None:
                return Resolution(hit, Stage.PATH)
        bare = strip_md(t)
        if "/" in bare:
            suffix = "/" + bare
            stem = bare.rsplit("/", 1)[-1]
            matches = [
                p
                for p in self._tables[Stage.STEM].get(stem, ())
                if norm(strip_md(p)).endswith(suffix)
            ]
            if matches:
                return self._pick(matches, source, Stage.SUFFIX)
        for stage in (Stage.STEM, Stage.TITLE, Stage.ALIAS, Stage.ID):
            found = self._tables[stage].get(bare)
            if found:
                return self._pick(found, source, stage)
        return self._unresolved(t)

    @staticmethod
    def _unresolved(t: str) -> Resolution:
        suffix = t.rsplit(".", 1)[-1] if "." in t.rsplit("/", 1)[-1] else ""
        return Resolution(None, attachment=suffix in ATTACHMENT_SUFFIXES)

    @staticmethod
    def _pick(paths: Iterable[str], source: str, stage: Stage) -> Resolution:
        ranked = sorted(paths, key=lambda p: tie_break_key(p, source))
        return Resolution(ranked[0], stage, ambiguous=len(ranked) > 1)


def tie_break_key(path: str, source: str) -> tuple[int, int, str]:
    """Same folder as the linking card first, then the shortest path, then alphabetical."""
    folder = path[: path.rfind("/") + 1]
    same_folder = (
        len(source) > len(folder) and source.startswith(folder) and "/" not in source[len(folder) :]
    )
    return (0 if same_folder else 1, len(path), path)
