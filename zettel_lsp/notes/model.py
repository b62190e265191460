"""Plain data types for cards and their links.

Positions are *code-point* offsets into the decoded text (Python ``str`` indices). The LSP layer
converts them to UTF-16 columns (see :mod:`zettel_lsp.notes.positions`); nothing here knows about
editors.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, TypeVar

from zettel_lsp.notes.text_store import TextStore, current_sink, current_store

T = TypeVar("T")


def compact_pickle(cls: type[T]) -> type[T]:
    """Pickle a frozen slots dataclass as its constructor call: a card cache holds ~13 of these
    per card, and the state-restoring default looks up the class's fields for every object
    (1.25 of 7.9 s of a profiled graph load at 25k cards)."""
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]

    def __reduce__(self: Any) -> tuple[type[T], tuple[Any, ...]]:
        return cls, tuple([getattr(self, n) for n in names])

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


class LinkKind(StrEnum):
    WIKI = "wiki"  # [[target]], [[target|alias]], [[target#heading]], [[target#^block]]
    EMBED = "embed"  # ![[target]]
    MARKDOWN = "markdown"  # [text](path.md#heading), <...> form, URL-encoded paths
    MARKDOWN_EMBED = "markdown-embed"  # ![alt](path)


@compact_pickle
@dataclass(frozen=True, slots=True)
class Position:
    """Zero-based line and code-point column."""

    line: int
    character: int


# a Span's fields in the order it is built, compared and pickled in
_SPAN_KEY = ("start", "end", "start_line", "start_char", "end_line", "end_char")


class Span:
    """A half-open range ``[start, end)`` of code-point offsets, with line/column for both ends.

    Its two positions are kept as four numbers and made when read: a graph holds a span per
    link and per inline tag, and two :class:`Position` objects each took 30 MB at 100k
    generated cards (issue #18). Immutable, compared and hashed by value, as the frozen
    dataclass it was."""

    __slots__ = ("end", "end_char", "end_line", "start", "start_char", "start_line")

    start: int
    end: int
    start_line: int
    start_char: int
    end_line: int
    end_char: int

    def __init__(self, start: int, end: int, start_pos: Position, end_pos: Position) -> None:
        self._assign(
            start, end, start_pos.line, start_pos.character, end_pos.line, end_pos.character
        )

    def _assign(self, *key: int) -> None:
        for name, value in zip(_SPAN_KEY, key, strict=True):
            object.__setattr__(self, name, value)

    @property
    def start_pos(self) -> Position:
        return Position(self.start_line, self.start_char)

    @property
    def end_pos(self) -> Position:
        return Position(self.end_line, self.end_char)

    def _key(self) -> tuple[int, ...]:
        return tuple(getattr(self, name) for name in _SPAN_KEY)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # frozen

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Span(start={self.start!r}, end={self.end!r}, start_pos={self.start_pos!r}, "
            f"end_pos={self.end_pos!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return _span, self._key()


def _span(*key: int) -> Span:
    span = Span.__new__(Span)
    span._assign(*key)
    return span


@compact_pickle
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

    @property
    def visible_text(self) -> str:
        """What a reader sees in preview: the label if any, else the target (and subpath)."""
        if self.label:
            return self.label
        return self.target + (f" > {self.subpath}" if self.subpath else "")


@compact_pickle
@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # zero-based line of the heading itself
    end_line: int  # last line (inclusive) of its section: before the next heading of <= level


@compact_pickle
@dataclass(frozen=True, slots=True)
class Tag:
    name: str  # without '#', e.g. "method/zettelkasten"
    span: Span | None  # None for frontmatter tags


@compact_pickle
@dataclass(frozen=True, slots=True)
class BlockId:
    name: str  # without '^'
    line: int


# what Card.pack() keeps of a card's seldom-read parts: headings and block ids as plain tuples
# (rebuilt on reading), front matter and masked spans as they are
_Packed = tuple[
    tuple[tuple[int, str, int, int], ...],
    tuple[tuple[str, int], ...],
    dict[str, object],
    list[tuple[int, int]],
]


def _unpack(blob: bytes) -> _Packed:
    packed: _Packed = pickle.loads(blob)  # our own bytes (Card.pack), never a file's
    return packed


class Card:
    """One Markdown file of a vault, parsed.

    ``path`` is vault-relative with forward slashes (``"method/Atomic notes.md"``).
    ``problems`` lists what went wrong while reading or parsing (the card is still usable).

    **Packed cards** (issue #18). The link graph keeps every card for as long as the server
    runs, and four of a card's parts are read only for one card at a time (its headings, block
    ids, front matter and masked spans: an outline, a heading link, a rename, a mention pass).
    As objects they took 86 MB at 100k generated cards; :meth:`pack` keeps them as one pickled
    ``bytes`` (13 MB) and each read of one of them unpacks it (about 10 microseconds). Every
    attribute reads the same packed or not; the parts the graph scans over every card (path,
    title, text, aliases, tags, id, links, problems) are never packed.

    **Texts kept in a file** (issue #18). A card of a graph loaded from (or saved to) a graph
    snapshot keeps a reference into the snapshot's file instead of its text, and ``text``
    reads it there (:mod:`zettel_lsp.notes.text_store`); setting ``text`` keeps it in memory.
    """

    __slots__ = (
        "_aliases",
        "_block_ids",
        "_frontmatter",
        "_headings",
        "_links",
        "_masked",
        "_packed",
        "_problems",
        "_store",
        "_tags",
        "_text",
        "body_start_line",
        "card_id",
        "decoded_with_replacement",
        "path",
        "title",
    )

    def __init__(
        self,
        path: str,
        title: str,
        text: str,
        aliases: list[str] | None = None,
        tags: list[Tag] | None = None,
        card_id: str | None = None,
        headings: list[Heading] | None = None,
        links: list[Link] | None = None,
        block_ids: list[BlockId] | None = None,
        frontmatter: dict[str, object] | None = None,
        body_start_line: int = 0,  # first line after the frontmatter block
        # Offsets of text where titles must not be matched as mentions and links are not
        # parsed: frontmatter, fenced code, inline code, HTML comments. Sorted, non-overlapping.
        masked: list[tuple[int, int]] | None = None,
        problems: list[str] | None = None,
        decoded_with_replacement: bool = False,
    ) -> None:
        self.path = path
        self.title = title
        self._text: str | int = text
        self._store: TextStore | None = None
        self._aliases: list[str] | None = [] if aliases is None else aliases
        self._tags: list[Tag] | None = [] if tags is None else tags
        self.card_id = card_id
        self._links: list[Link] | None = [] if links is None else links
        self.body_start_line = body_start_line
        self._problems: list[str] | None = [] if problems is None else problems
        self.decoded_with_replacement = decoded_with_replacement
        self._headings: list[Heading] | None = [] if headings is None else headings
        self._block_ids: list[BlockId] | None = [] if block_ids is None else block_ids
        self._frontmatter: dict[str, object] | None = {} if frontmatter is None else frontmatter
        self._masked: list[tuple[int, int]] | None = [] if masked is None else masked
        self._packed: bytes | None = None

    # ------------------------------------------------------------------ the text

    @property
    def text(self) -> str:
        """The decoded text; read from its :class:`TextStore` when the card keeps it there."""
        if self._store is None:
            return self._text  # type: ignore[return-value]  # a str while there is no store
        return self._store.read(self._text)  # type: ignore[arg-type]

    @text.setter
    def text(self, value: str) -> None:
        self._text, self._store = value, None

    def text_ref(self) -> tuple[TextStore, int] | None:
        """Where the text is kept, when not in memory: the store and the reference."""
        if self._store is None:
            return None
        return self._store, self._text  # type: ignore[return-value]

    def keep_text_in(self, store: TextStore, ref: int) -> None:
        """Let the text go from memory: ``store`` holds it at ``ref`` (a snapshot just written)."""
        self._text, self._store = ref, store

    # ------------------------------------------------------------------ packing

    @property
    def packed(self) -> bool:
        return self._packed is not None

    def pack(self) -> None:
        """Keep the headings, block ids, front matter and masked spans as one ``bytes``."""
        if self._packed is not None:
            return
        heads = tuple((h.level, h.text, h.line, h.end_line) for h in self._headings or ())
        blocks = tuple((b.name, b.line) for b in self._block_ids or ())
        parts = (heads, blocks, self._frontmatter or {}, self._masked or [])
        self._packed = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
        # most cards have no aliases or problems, many no links or tags: no list each
        # (72 bytes apiece, 17 MB at 100k cards); read as a new empty list
        if not self._aliases:
            self._aliases = None
        if not self._tags:
            self._tags = None
        if not self._links:
            self._links = None
        if not self._problems:
            self._problems = None
        self._headings = self._block_ids = self._frontmatter = self._masked = None

    def _parts(self) -> _Packed:
        assert self._packed is not None
        return _unpack(self._packed)

    @property
    def aliases(self) -> list[str]:
        return [] if self._aliases is None else self._aliases

    @property
    def tags(self) -> list[Tag]:
        return [] if self._tags is None else self._tags

    @property
    def links(self) -> list[Link]:
        return [] if self._links is None else self._links

    @property
    def problems(self) -> list[str]:
        return [] if self._problems is None else self._problems

    @property
    def headings(self) -> list[Heading]:
        if self._headings is not None:
            return self._headings
        return [Heading(*h) for h in self._parts()[0]]

    @property
    def block_ids(self) -> list[BlockId]:
        if self._block_ids is not None:
            return self._block_ids
        return [BlockId(*b) for b in self._parts()[1]]

    @property
    def frontmatter(self) -> dict[str, object]:
        if self._frontmatter is not None:
            return self._frontmatter
        return self._parts()[2]

    @property
    def masked(self) -> list[tuple[int, int]]:
        if self._masked is not None:
            return self._masked
        return self._parts()[3]

    # ------------------------------------------------------------------ value semantics

    _FIELDS = (
        "path",
        "title",
        "text",
        "aliases",
        "tags",
        "card_id",
        "headings",
        "links",
        "block_ids",
        "frontmatter",
        "body_start_line",
        "masked",
        "problems",
        "decoded_with_replacement",
    )

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, n) for n in Card._FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in Card._FIELDS)
        return f"Card({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as it is held: a packed card stays packed (card cache, graph snapshot). In a
        graph snapshot (:func:`zettel_lsp.notes.text_store.writing`) the text goes to the
        snapshot's text sink and the pickle holds its reference."""
        sink = current_sink()
        return (
            _restore,
            (
                self.path,
                self.title,
                self.text if sink is None else sink.add(self, self.text),
                self._aliases,
                self._tags,
                self.card_id,
                self._links,
                self.body_start_line,
                self._problems,
                self.decoded_with_replacement,
                self._packed,
                None
                if self._packed is not None
                else (
                    self._headings,
                    self._block_ids,
                    self._frontmatter,
                    self._masked,
                ),
            ),
        )

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name.rsplit(".", 1)[0]

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def tag_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for tag in self.tags:
            seen.setdefault(tag.name, None)
        return list(seen)

    @property
    def body(self) -> str:
        """The text after the frontmatter block."""
        if self.body_start_line == 0:
            return self.text
        parts = self.text.split("\n", self.body_start_line)
        return parts[self.body_start_line] if len(parts) > self.body_start_line else ""


def _restore(
    path: str,
    title: str,
    text: str | int,
    aliases: list[str] | None,
    tags: list[Tag] | None,
    card_id: str | None,
    links: list[Link] | None,
    body_start_line: int,
    problems: list[str] | None,
    decoded_with_replacement: bool,
    packed: bytes | None,
    parts: tuple[Any, Any, Any, Any] | None,
) -> Card:
    card = Card.__new__(Card)
    card.path, card.title, card._text = path, title, text
    card._store = current_store() if isinstance(text, int) else None
    card._aliases, card._tags, card.card_id, card._links = aliases, tags, card_id, links
    card.body_start_line, card._problems = body_start_line, problems
    card.decoded_with_replacement = decoded_with_replacement
    card._packed = packed
    if parts is None:
        card._headings = card._block_ids = card._frontmatter = card._masked = None
    else:
        card._headings, card._block_ids, card._frontmatter, card._masked = parts
    return card
