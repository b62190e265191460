"""Markdown-aware chunking: cards → chunks that map back to exact line ranges.

A card that fits the token budget is one chunk (most Zettelkasten cards); a card with no text is
one chunk of its title (so stubs stay findable by name). Longer cards split at
headings first, then between blocks (paragraphs, lists), then between sentences; fenced code
blocks and block quotes are never cut, and Obsidian comment blocks (``%%`` ... ``%%``) are left
out. A chunk split for size (not at a heading) starts with the last sentence or block of the
previous chunk when that is short (the overlap). Each chunk records its heading path and its
first and last line; the text that is embedded is prefixed with the card title (and aliases, on
the first chunk) and the heading path.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zettel_lsp.notes.masking import atx_heading, fenced_code_spans
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import visible_text

# Bump when chunk boundaries or embedded text change: stored vectors are then re-embedded.
# md-4: an empty card's chunk holds its front-matter text and tags; md-5: links become text by
# the parser's link rules (notes/parser.py visible_text), not a second pattern of the chunker's
CHUNKER_VERSION = "md-5"
DEFAULT_MAX_TOKENS = 256
OVERLAP_TOKENS = 40  # a chunk split for size repeats a last sentence or block this short
# A heading starts a new chunk once the current one holds at least this many tokens; smaller
# sections merge with what follows, so a heading alone never becomes a chunk.
MIN_SECTION_TOKENS = 48

TokenCounter = Callable[[Sequence[str]], list[int]]

_QUOTE = re.compile(r"^ {0,3}>")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+(?=\S)")


@dataclass(frozen=True, slots=True)
class Chunk:
    card_path: str
    index: int
    heading_path: tuple[str, ...]
    line_start: int  # zero-based, inclusive
    line_end: int  # zero-based, inclusive
    text: str  # the card's own lines (for excerpts and the keyword leg)
    embed_text: str  # what the model and BM25 see: title/heading prefix + cleaned text
    tokens: int  # model tokens of the text (without prefix)


@dataclass(slots=True)
class _Unit:
    text: str
    line_start: int
    line_end: int
    heading_path: tuple[str, ...]
    atomic: bool = False  # code or quote: never split
    is_heading: bool = False
    tokens: int = 0


def chunk_card(
    card: Card, count_tokens: TokenCounter, max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[Chunk]:
    """Split one card; see :func:`chunk_cards`."""
    return chunk_cards([card], count_tokens, max_tokens)[0]


def chunk_cards(
    cards: Sequence[Card], count_tokens: TokenCounter, max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[list[Chunk]]:
    """Split each card into chunks of at most ``max_tokens`` model tokens (prefix included).

    Tokens are counted in two batched calls for all cards (a tokenizer call has a fixed cost).
    Atomic blocks (code, quotes) and single sentences longer than the budget stay whole; the
    model truncates them, and the line range still covers them.
    """
    per_card = [_blocks(card) for card in cards]
    _count([u for units in per_card for u in units], count_tokens, max_tokens)
    prefixes = count_tokens([_prefix(card, (), True) + " > section" for card in cards])
    budgets = [max(32, max_tokens - p - 2) for p in prefixes]  # 2: [CLS] and [SEP]
    long_paragraphs = [
        (i, u)
        for i, units in enumerate(per_card)
        if sum(u.tokens for u in units) > budgets[i]
        for u in units
        if u.tokens > budgets[i] and not (u.atomic or u.is_heading)
    ]
    sentences = {id(u): _sentences(u) for _, u in long_paragraphs}
    _count([p for pieces in sentences.values() for p in pieces], count_tokens, max_tokens)
    out: list[list[Chunk]] = []
    for card, units, budget in zip(cards, per_card, budgets, strict=True):
        if not units:
            out.append([_title_chunk(card)])
            continue
        if sum(u.tokens for u in units) <= budget:
            groups = [units]
        else:
            flat = [p for u in units for p in sentences.get(id(u), [u])]
            groups = _group(flat, budget)
        lines = card.text.split("\n")  # once per card, not per chunk (quadratic)
        out.append([_make_chunk(card, lines, i, g) for i, g in enumerate(groups)])
    return out


def _prefix(card: Card, heading_path: tuple[str, ...], first: bool) -> str:
    head = card.title
    if first and card.aliases:
        head += " (" + ", ".join(card.aliases) + ")"
    if heading_path:
        head += " > " + " > ".join(heading_path)
    return head


def _make_chunk(card: Card, lines: list[str], index: int, units: list[_Unit]) -> Chunk:
    start = min(u.line_start for u in units)
    end = max(u.line_end for u in units)
    text = "\n".join(lines[start : end + 1]).strip("\n")
    heading_path = units[0].heading_path
    if heading_path and heading_path[0].casefold() == card.title.casefold():
        heading_path = heading_path[1:]  # the H1 that repeats the title
    # Heading lines are in the prefix already; embed them only when nothing else is there.
    body = [u.text for u in units if not u.is_heading] or [u.text for u in units]
    cleaned = visible_text("\n".join(body))
    embed = _prefix(card, heading_path, index == 0) + "\n" + cleaned
    return Chunk(
        card.path, index, heading_path, start, end, text, embed, sum(u.tokens for u in units)
    )


def _title_chunk(card: Card) -> Chunk:
    """A card with no text of its own (a stub, only frontmatter, only a drawing) is still a card
    that links point at and that a user opens by name: one chunk of its title, aliases, tags and
    front-matter text values (e.g. a Dendron ``desc``) keeps it findable by every leg, the
    keyword leg included. It spans the whole file."""
    last = card.text.count("\n")  # the last line (empty after a final newline)
    lines = [card.title, *card.aliases]
    lines.extend(v for v in _frontmatter_values(card) if v not in lines)
    tags = " ".join(f"#{t.name}" for t in card.tags)
    if tags:
        lines.append(tags)
    text = "\n".join(line for line in lines if line)
    values = "\n".join(lines[1 + len(card.aliases) :])
    embed = _prefix(card, (), True) + ("\n" + values if values else "")
    return Chunk(card.path, 0, (), 0, last, text, embed, 0)


# Front-matter keys whose values are bookkeeping, not words a reader searches for.
_BOOKKEEPING_KEYS = frozenset(
    {"id", "uid", "title", "aliases", "alias", "tags", "tag", "created", "updated", "modified",
     "date", "cssclass", "cssclasses"}
)  # fmt: skip


def _frontmatter_values(card: Card) -> list[str]:
    """The text values of the card's front matter (strings, and strings in lists), in order."""
    return [
        " ".join(item.split())
        for key, value in card.frontmatter.items()
        if key.casefold() not in _BOOKKEEPING_KEYS
        for item in (value if isinstance(value, list) else [value])
        if isinstance(item, str) and item.strip()
    ]


def _blocks(card: Card) -> list[_Unit]:
    """Paragraph-level blocks of the body with line ranges and the heading path they sit under."""
    text = card.text
    lines = text.split("\n")
    first = card.body_start_line
    fence_lines: dict[int, int] = {}  # first line of a fence -> last line
    offsets = [0, *itertools.accumulate(len(ln) + 1 for ln in lines)]
    for s, e in fenced_code_spans(text, offsets[first] if first < len(offsets) else len(text)):
        fence_lines[_line_of(offsets, s)] = _line_of(offsets, max(s, e - 1))
    units: list[_Unit] = []
    path: list[tuple[int, str]] = []
    i = first
    n = len(lines)
    while i < n:
        line = lines[i]
        if i in fence_lines:
            end = fence_lines[i]
            units.append(_Unit("\n".join(lines[i : end + 1]), i, end, _path(path), atomic=True))
            i = end + 1
            continue
        if not line.strip():
            i += 1
            continue
        if _opens_comment(line):
            # An Obsidian comment block (%% ... %%): hidden from readers, not indexed. This is
            # where Excalidraw drawings keep their JSON (60% of zettelkasten-13k's bytes).
            j = i + 1
            while j < n and "%%" not in lines[j]:
                j += 1
            i = j + 1
            continue
        h = atx_heading(line)
        if h:
            level, title = h[0], h[1].strip()
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, visible_text(title)))
            units.append(_Unit(line, i, i, _path(path), is_heading=True))
            i += 1
            continue
        quote = bool(_QUOTE.match(line))
        j = i
        while (
            j + 1 < n
            and lines[j + 1].strip()
            and j + 1 not in fence_lines
            and not atx_heading(lines[j + 1])
            and not _opens_comment(lines[j + 1])
            and bool(_QUOTE.match(lines[j + 1])) == quote
        ):
            j += 1
        units.append(_Unit("\n".join(lines[i : j + 1]), i, j, _path(path), atomic=quote))
        i = j + 1
    return units


def _opens_comment(line: str) -> bool:
    """A line that opens an Obsidian ``%%`` comment which does not close on the same line."""
    stripped = line.lstrip()
    return stripped.startswith("%%") and "%%" not in stripped[2:]


def _path(path: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(t for _, t in path if t)


def _line_of(offsets: list[int], offset: int) -> int:
    return bisect.bisect_right(offsets, offset) - 1


def _count(units: list[_Unit], count_tokens: TokenCounter, max_tokens: int) -> None:
    """Token counts; a text of more than ``8 * max_tokens`` characters is counted on that prefix
    only (it is over any budget either way, and a 100k-token code block is slow to tokenize)."""
    cap = 8 * max_tokens
    counts = count_tokens([u.text[:cap] for u in units]) if units else []
    for u, t in zip(units, counts, strict=True):
        u.tokens = t


def _sentences(u: _Unit) -> list[_Unit]:
    """A paragraph as sentences, each with its own line range."""
    pieces: list[_Unit] = []
    start = 0
    line = u.line_start  # the line of ``start`` (counted on, not from 0 each time: linear)
    for cut in [m.end() for m in _SENTENCE_END.finditer(u.text)] + [len(u.text)]:
        piece = u.text[start:cut].strip()
        last = max(start, cut - 1)
        last_line = line + u.text.count("\n", start, last)
        if piece:
            pieces.append(_Unit(piece, line, last_line, u.heading_path))
        line = last_line + u.text.count("\n", last, cut)
        start = cut
    return pieces


def _group(units: list[_Unit], budget: int) -> list[list[_Unit]]:
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    for u in units:
        if u.is_heading and current and size >= MIN_SECTION_TOKENS:
            groups.append(current)
            current, size = [], 0
        elif current and size + u.tokens > budget:
            groups.append(current)
            tail = current[-1]
            short = tail.tokens <= OVERLAP_TOKENS and tail.tokens + u.tokens <= budget
            carry = short and not tail.is_heading
            current, size = ([tail], tail.tokens) if carry else ([], 0)
        current.append(u)
        size += u.tokens
    if current:
        if groups and all(x.is_heading for x in current):
            groups[-1].extend(current)  # a trailing heading with nothing under it
        else:
            groups.append(current)
    return groups
