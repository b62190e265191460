"""Resolve a link's target text to a card path over the graph's name table
(:class:`~zettel_lsp.graph.names.NameTable`). All resolution rules live here.

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
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from zettel_lsp.notes.model import Card, Link, LinkKind, file_stem, strip_md

if TYPE_CHECKING:
    from zettel_lsp.graph.names import NameTable  # which reads this module's rules

# the file suffixes of attachments: a link to such a file is no card's
ATTACHMENT_SUFFIXES = frozenset(
    (
        "png jpg jpeg gif bmp svg webp avif heic tif tiff pdf "  # images, PDF
        "mp3 wav ogg flac m4a webm mp4 mov mkv ogv 3gp "  # audio, video
        "canvas base excalidraw zip csv json txt html htm docx xlsx pptx epub"
    ).split()
)


class Stage(StrEnum):
    PATH = "path"
    SUFFIX = "path-suffix"
    STEM = "stem"
    TITLE = "title"
    ALIAS = "alias"
    ID = "id"


_FILE_STAGES = frozenset({Stage.PATH, Stage.SUFFIX, Stage.STEM})
DENDRON_SCHEME = re.compile(r"^dendron://[^/]*/", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Resolution:
    target: str | None  # card path, or None when unresolved
    stage: Stage | None = None
    swapped: bool = False  # resolved through the right side of [[a|b]]
    attachment: bool = False  # a link to a non-note file (image, PDF, ...)
    ambiguous: bool = False  # several cards matched in the winning stage


def norm(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip().lower()


def name_key(target: str) -> str:
    """The key a link target is filed under for incremental re-resolution: its last component."""
    return norm(file_stem(target))


def stage_names(card: Card) -> list[tuple[Stage, set[str]]]:
    """The names ``card`` is filed under in the name table, per stage (normalised as ``norm``)."""
    names = [
        (Stage.STEM, {norm(card.stem)}),
        (Stage.TITLE, {norm(card.title)}),
        (Stage.ALIAS, {norm(a) for a in card.aliases}),
    ]
    if card.card_id:
        names.append((Stage.ID, {norm(card.card_id)}))
    return names


def card_keys(card: Card) -> set[str]:
    """Every name under which ``card`` can be linked (see :func:`name_key`)."""
    return {name for _, names in stage_names(card) for name in names} - {""}


def without_scheme(target: str) -> str:
    """``target`` without Dendron's cross-vault ``dendron://vault/`` and leading slashes."""
    return DENDRON_SCHEME.sub("", target).lstrip("/")


def target_key(target: str) -> str:
    """A link target as the resolver looks it up: normalised, without Dendron's scheme, a
    leading slash or ``./``."""
    return without_scheme(norm(target)).removeprefix("./")


def stage_owners(names: NameTable, stage: Stage, bare: str) -> tuple[str, ...]:
    """The cards ``bare`` (a :func:`target_key` without ``.md``) names at ``stage``; at
    :attr:`Stage.SUFFIX`, the cards whose path ends with ``/bare``."""
    if stage != Stage.SUFFIX:
        return names.owners_of_key(stage, bare)
    suffix = "/" + bare
    stems = names.owners_of_key(Stage.STEM, bare.rsplit("/", 1)[-1])
    return tuple(p for p in stems if norm(strip_md(p)).endswith(suffix))


def resolve_link(names: NameTable, link: Link, source: str) -> Resolution:
    """Resolve ``link`` as written in the card at path ``source``."""
    if not link.target:  # [[#Heading]] or [text](#heading): a link inside the same card
        return Resolution(source, Stage.PATH)
    markdown = link.kind in (LinkKind.MARKDOWN, LinkKind.MARKDOWN_EMBED)
    first = resolve(names, link.target, source, markdown=markdown)
    if first.stage in _FILE_STAGES or not link.label or markdown:
        return first
    # [[left|right]]: Obsidian writes [[target|label]], Dendron [[label|target]]. A side that
    # names a file (path or stem) beats a side that only matches a title, alias or id.
    other = link.label.split("#", 1)[0].strip()
    second = resolve(names, other, source) if other else Resolution(None)
    if second.target is not None and (first.target is None or second.stage in _FILE_STAGES):
        return Resolution(second.target, second.stage, swapped=True, ambiguous=second.ambiguous)
    return first


def resolve(names: NameTable, target: str, source: str, *, markdown: bool = False) -> Resolution:
    """Resolve ``target`` as written in the card at path ``source``."""
    t = target_key(target)
    if not t:
        return Resolution(None)
    src_folder = norm(posixpath.dirname(source))
    relative = norm(posixpath.normpath(posixpath.join(src_folder, t))) if src_folder else t
    candidates = [relative, t] if markdown else [t, relative]
    for cand in candidates:
        hit = names.at_path(strip_md(cand))
        if hit is not None:
            return Resolution(hit, Stage.PATH)
    bare = strip_md(t)
    if "/" in bare:
        matches = stage_owners(names, Stage.SUFFIX, bare)
        if matches:
            return _pick(matches, source, Stage.SUFFIX)
    for stage in (Stage.STEM, Stage.TITLE, Stage.ALIAS, Stage.ID):
        found = names.owners_of_key(stage, bare)
        if found:
            return _pick(found, source, stage)
    suffix = t.rsplit(".", 1)[-1] if "." in t.rsplit("/", 1)[-1] else ""
    return Resolution(None, attachment=suffix in ATTACHMENT_SUFFIXES)


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
