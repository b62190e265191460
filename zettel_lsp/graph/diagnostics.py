"""What is wrong with a card's links and names: the problems the server shows as diagnostics.

Pure logic (no LSP types). Kinds:

- **unresolved link**: a link that names no card (the ``unresolved`` of ``zettel-lsp graph``:
  attachments such as images are not counted), with "did you mean" from near-miss names;
- **ambiguous link**: a link that resolved by tie-breaking between several cards (which ones);
- **missing heading** / **missing block**: ``[[Card#Heading]]`` or ``[[Card#^id]]`` where the
  card resolves but has no such heading or block;
- **duplicate title**: the card's title or an alias is also another card's title or alias.

The names (near misses, ties, duplicates) come from the graph's name table (``graph.names``).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.names import Suggestion
from zettel_lsp.graph.resolver import (
    Resolution,
    Stage,
    name_key,
    norm,
    stage_owners,
    target_key,
    without_scheme,
)
from zettel_lsp.notes.anchors import block_for, heading_for, heading_key
from zettel_lsp.notes.model import Card, Link, LinkKind, Position, file_stem, strip_md
from zettel_lsp.notes.title_rule import NOT_IN_FILE_NAMES

NEAR_MISS = 0.8  # ratio for "Link to «closest match»"


class Kind(StrEnum):
    UNRESOLVED = "unresolved-link"
    AMBIGUOUS = "ambiguous-link"
    MISSING_HEADING = "missing-heading"
    MISSING_BLOCK = "missing-block"
    DUPLICATE_TITLE = "duplicate-title"


ALL_KINDS: frozenset[Kind] = frozenset(Kind)


@dataclass(frozen=True, slots=True)
class CardProblem:
    """One diagnostic of a card, in code points."""

    kind: Kind
    start: Position
    end: Position
    message: str
    link: Link | None = None  # the link it is about (None for a duplicate title)
    suggestions: tuple[Suggestion, ...] = ()  # unresolved: closest first
    related: tuple[str, ...] = ()  # ambiguous: the tying cards; duplicate: the other cards
    target: str | None = None  # missing heading/block: the card the link resolved to


def ties(graph: LinkGraph, link: Link, res: Resolution) -> list[str]:
    """The cards an ambiguous link chose between, the chosen one first."""
    if res.stage is None or res.target is None:
        return []
    text = link.target
    if res.swapped and link.label:
        text = link.label.split("#", 1)[0].strip()
    found = stage_owners(graph.names, res.stage, strip_md(target_key(text)))
    others = sorted(set(found) - {res.target})
    return [res.target, *others]


def same_names(graph: LinkGraph, card: Card) -> dict[str, list[str]]:
    """The card's title and aliases that another card also has as its title or alias:
    name as written -> the other cards."""
    out: dict[str, list[str]] = {}
    for shown in (card.title, *card.aliases):
        key = norm(shown)
        if not key or shown in out:
            continue
        others = {
            *graph.names.owners_of_key(Stage.TITLE, key),
            *graph.names.owners_of_key(Stage.ALIAS, key),
        } - {card.path}
        if others:
            out[shown] = sorted(others)
    return out


def card_problems(
    graph: LinkGraph,
    card: Card,
    kinds: frozenset[Kind] = ALL_KINDS,
) -> list[CardProblem]:
    """Every problem of ``card`` (the editor's version or the graph's), in text order, its
    links resolved against ``graph`` exactly as the graph resolves them. Read the graph inside
    the vault's read lock."""
    out: list[CardProblem] = []
    if Kind.DUPLICATE_TITLE in kinds:
        out.extend(_duplicates(graph, card))
    resolved = [(link, graph.resolve_link(link, card.path)) for link in card.links]
    if Kind.UNRESOLVED in kinds:
        _expect_near_misses(graph, resolved)
    for link, res in resolved:
        problem = link_problem(graph, card, link, res, kinds)
        if problem is not None:
            out.append(problem)
    return out


def expect_near_misses(graph: LinkGraph, paths: Iterable[str]) -> None:
    """Find ahead, all at once, the "did you mean" names of the unresolved links of the
    graph's cards at ``paths`` (a pass over many cards: :meth:`NameTable.near_many`)."""
    _expect_near_misses(graph, ((r.link, r.resolution) for p in paths for r in graph.links_of(p)))


def _expect_near_misses(graph: LinkGraph, links: Iterable[tuple[Link, Resolution]]) -> None:
    graph.names.near_many(
        name_key(link.target)
        for link, res in links
        if res.target is None and link.target and not res.attachment
    )


def link_problem(
    graph: LinkGraph,
    card: Card,
    link: Link,
    res: Resolution,
    kinds: frozenset[Kind],
) -> CardProblem | None:
    """The problem of one link (its resolution given), or None."""
    start, end = link.span.start_pos, link.span.end_pos
    if res.target is None:
        if res.attachment or Kind.UNRESOLVED not in kinds:
            return None
        suggestions = graph.names.near(name_key(link.target))
        message = f"No card named «{strip_md(link.target)}»"
        if suggestions:
            message += "; did you mean " + " or ".join(_shown(suggestions)) + "?"
        return CardProblem(Kind.UNRESOLVED, start, end, message, link, suggestions)
    target = card if res.target == card.path else graph.cards.get(res.target)
    if target is not None:
        missing: tuple[Kind, str] | None = None
        if link.heading and Kind.MISSING_HEADING in kinds and not has_heading(target, link.heading):
            missing = Kind.MISSING_HEADING, f"no heading «{link.heading}»"
        elif link.block_id and Kind.MISSING_BLOCK in kinds and not has_block(target, link.block_id):
            missing = Kind.MISSING_BLOCK, f"no block ^{link.block_id}"
        if missing is not None:
            kind, what = missing
            message = f"«{target.title}» has {what}"
            return CardProblem(kind, start, end, message, link, target=target.path)
    if res.ambiguous and Kind.AMBIGUOUS in kinds:
        tied = ties(graph, link, res)
        message = f"«{link.target or link.raw}» matches {len(tied)} cards ({_listed(tied)})"
        message += f"; it links to {res.target}"
        return CardProblem(Kind.AMBIGUOUS, start, end, message, link, related=tuple(tied))
    return None


def has_heading(card: Card, subpath: str) -> bool:
    """Whether ``card`` has the heading a link names: as the navigation finds it
    (:func:`heading_for`), or in Dendron's forms: a note reference's range
    (``#start,1:#end``, ``#*`` for any) names its start heading, and an anchor is the heading
    slugged (``#0820`` for "0.82.0")."""
    if heading_for(card, subpath) is not None:
        return True
    start = re.split(r"[,:]", subpath, maxsplit=1)[0].strip()
    if start in ("*", ""):
        return True
    if start.startswith("^"):
        return has_block(card, start[1:])
    want = _compact(start.split("#")[-1])
    return bool(want) and any(_compact(h.text) == want for h in card.headings)


def has_block(card: Card, block_id: str) -> bool:
    """Whether ``card`` has the block ``^block_id`` (a Dendron range ``^a:#^b`` names ``a``)."""
    if block_for(card, block_id) is not None:
        return True
    start = re.split(r"[,:]", block_id, maxsplit=1)[0].strip()
    return start != block_id and (start == "*" or block_for(card, start) is not None)


def _compact(text: str) -> str:
    return "".join(heading_key(text).split()).replace("_", "")


def _shown(suggestions: Sequence[Suggestion]) -> list[str]:
    """«Title», with the path when two suggestions share a title."""
    titles = Counter(s.title for s in suggestions)
    return [f"«{s.title}»" + (f" ({s.path})" if titles[s.title] > 1 else "") for s in suggestions]


def _duplicates(graph: LinkGraph, card: Card) -> Iterator[CardProblem]:
    for shown, others in same_names(graph, card).items():
        start, end = _name_position(card, shown)
        what = "title" if shown == card.title else "alias"
        message = f"The {what} «{shown}» is also the title or an alias of {_listed(others)}"
        yield CardProblem(Kind.DUPLICATE_TITLE, start, end, message, related=tuple(others))


def _listed(paths: list[str]) -> str:
    """The first five of ``paths``, and how many more."""
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _name_position(card: Card, name: str) -> tuple[Position, Position]:
    """Where ``name`` is written at the top of the card (front matter or first heading), else
    the start of the card."""
    lines = card.text.split("\n")
    last = max(card.body_start_line + 5, 0)
    for i, line in enumerate(lines[: last + 1]):
        at = line.find(name)
        if at >= 0:
            return Position(i, at), Position(i, at + len(name))
    return Position(0, 0), Position(0, 0)


# ------------------------------------------------------------------ quick fixes


def new_card_path(card: Card, link: Link, folder: str | None) -> str | None:
    """Where "Create card «X»" puts the card an unresolved ``link`` names (vault-relative), or
    None when the name cannot be a file name. A Markdown link names its file: it is created
    there. A wikilink's card goes to ``folder`` (the ``newNoteFolder`` setting: None is the
    linking card's folder, ``""`` or ``"."`` the vault root)."""
    target = link.target.strip()
    if not target:
        return None
    if link.kind in (LinkKind.MARKDOWN, LinkKind.MARKDOWN_EMBED):
        path = posixpath.normpath(posixpath.join(card.folder, target))
    else:
        target = without_scheme(target)
        base = card.folder if folder is None else folder.strip().strip("/")
        base = "" if base == "." else base
        path = posixpath.normpath(posixpath.join(base, target)) if base else target
    if path.startswith("../") or path in ("..", ".") or path.startswith("/"):
        return None
    if any(NOT_IN_FILE_NAMES.search(part) or not part.strip() for part in path.split("/")):
        return None
    if not path.lower().endswith(".md"):
        path += ".md"
    return path


def new_card_text(link: Link) -> str:
    """What the new card starts with: its title as a heading."""
    title = file_stem(link.target.strip())
    return f"# {title}\n"


def retarget(link: Link, name: str, source: str, path: str) -> tuple[int, int, str] | None:
    """An edit that points ``link`` at the card ``path`` (its link name ``name``), keeping the
    label, heading and block parts: (start, end) code points in the card, and the new text.
    None when the target text cannot be found in the link as written."""
    raw = link.raw
    if link.kind in (LinkKind.MARKDOWN, LinkKind.MARKDOWN_EMBED):
        at = raw.find("](")
        if at < 0:
            return None
        new = posixpath.relpath(path, posixpath.dirname(source) or ".")
        rest = raw[at + 2 :]
        if rest.startswith("<"):
            close = re.search(r"[#>]", rest[1:])
            start, end = 1, 1 + (close.start() if close else len(rest) - 2)
            new_text = new
        else:
            close = re.search(r"[#)\s]", rest)
            start, end = 0, close.start() if close else len(rest)
            new_text = new.replace(" ", "%20")
        base = link.span.start + at + 2
        return base + start, base + end, new_text
    at = raw.find(link.target)
    if at < 0:
        return None
    return link.span.start + at, link.span.start + at + len(link.target), name


def closest(problem: CardProblem, threshold: float = NEAR_MISS) -> Suggestion | None:
    """The near miss "Link to «closest match»" uses, if any."""
    if problem.kind != Kind.UNRESOLVED or not problem.suggestions:
        return None
    best = problem.suggestions[0]
    return best if best.score >= threshold else None
