"""Plain data types for cards and their links, and the ``.md`` rule of a card's file name.

Positions are *code-point* offsets into the decoded text (Python ``str`` indices). The LSP layer
converts them to UTF-16 columns (see :mod:`zettel_lsp.notes.positions`); nothing here knows about
editors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


def strip_md(path: str) -> str:
    """Drop a ``.md`` suffix, in any case. (``.markdown`` stays: Dendron names notes like
    ``a.markdown.md``.)"""
    return path[:-3] if path.lower().endswith(".md") else path


def file_stem(path: str) -> str:
    """The file name of ``path`` without a ``.md`` suffix."""
    return strip_md(path.rsplit("/", 1)[-1])


class LinkKind(StrEnum):
    WIKI = "wiki"  # [[target]], [[target|alias]], [[target#heading]], [[target#^block]]
    EMBED = "embed"  # ![[target]]
    MARKDOWN = "markdown"  # [text](path.md#heading), <...> form, URL-encoded paths
    MARKDOWN_EMBED = "markdown-embed"  # ![alt](path)


@dataclass(frozen=True, slots=True)
class Position:
    """Zero-based line and code-point column."""

    line: int
    character: int


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range ``[start, end)`` of code-point offsets, with line/column for both ends
    (plain numbers: a card holds many spans, and most are never asked for their positions)."""

    start: int
    end: int
    start_line: int
    start_character: int
    end_line: int
    end_character: int

    @property
    def start_pos(self) -> Position:
        return Position(self.start_line, self.start_character)

    @property
    def end_pos(self) -> Position:
        return Position(self.end_line, self.end_character)


@dataclass(frozen=True, slots=True)
class Link:
    """One link occurrence in a card, exactly as written.

    ``target`` is the part that names a card or file (``"Folder/Note"`` for ``[[Folder/Note#H|x]]``,
    the URL-decoded path for Markdown links); ``subpath`` is the heading (``"H"``) or block
    (``"^id"``) part without the ``#``; ``label`` is the visible text when it differs from the
    target (the wikilink alias or the Markdown link text).
    """

    kind: LinkKind
    raw: str
    span: Span
    target: str
    subpath: str | None = None
    label: str | None = None

    @property
    def is_embed(self) -> bool:
        return self.kind in (LinkKind.EMBED, LinkKind.MARKDOWN_EMBED)

    @property
    def block_id(self) -> str | None:
        if self.subpath and self.subpath.startswith("^"):
            return self.subpath[1:]
        return None

    @property
    def heading(self) -> str | None:
        if self.subpath and not self.subpath.startswith("^"):
            return self.subpath
        return None


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # zero-based line of the heading itself
    end_line: int  # last line (inclusive) of its section: before the next heading of <= level


@dataclass(frozen=True, slots=True)
class Tag:
    name: str  # without '#', e.g. "method/zettelkasten"
    span: Span | None  # None for frontmatter tags


@dataclass(frozen=True, slots=True)
class BlockId:
    name: str  # without '^'
    line: int


@dataclass(frozen=True, slots=True, eq=True)
class Card:
    """One Markdown file of a vault, parsed.

    ``path`` is vault-relative with forward slashes (``"method/Atomic notes.md"``).
    ``problems`` lists what went wrong while reading or parsing (the card is still usable).
    ``masked`` holds the offsets of text where titles must not be matched as mentions and
    links are not parsed: front matter, fenced code, inline code, HTML comments (sorted,
    non-overlapping).
    """

    path: str
    title: str
    text: str
    aliases: list[str] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    card_id: str | None = None
    headings: list[Heading] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    block_ids: list[BlockId] = field(default_factory=list)
    frontmatter: dict[str, object] = field(default_factory=dict)
    body_start_line: int = 0  # first line after the frontmatter block
    masked: list[tuple[int, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    decoded_with_replacement: bool = False

    __hash__ = None  # type: ignore[assignment]  # its lists make it unhashable

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        stem = strip_md(name)
        return stem if stem != name else name.rsplit(".", 1)[0]  # "a.markdown": "a"

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def tag_names(self) -> list[str]:
        return list(dict.fromkeys(tag.name for tag in self.tags))

    @property
    def body(self) -> str:
        """The text after the frontmatter block."""
        parts = self.text.split("\n", self.body_start_line)
        return parts[self.body_start_line] if len(parts) > self.body_start_line else ""
