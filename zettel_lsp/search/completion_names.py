"""Completion's table of the vault's names: every card's title, aliases and file name, the
tags, and the vault's link style, refreshed incrementally from the graph (a card object the
graph replaced is read again, the rest reused), kept as long as the graph lives."""

from __future__ import annotations

import re
import sys
import threading
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import norm
from zettel_lsp.notes.model import Card, LinkKind

WIKI: Final = "wiki"
MARKDOWN: Final = "markdown"


@dataclass(frozen=True, slots=True)
class Name:
    key: str  # normalised
    text: str  # as written
    path: str
    kind: str  # "title", "alias", "file"


@dataclass(slots=True)
class VaultNames:
    """Every card's names, the vault's tags and link style, kept current incrementally: a card
    object the graph replaced is read again, the rest reused."""

    # tuples, not lists (empty ones shared): the smaller form, kept for every card
    per_card: dict[str, tuple[Card, tuple[Name, ...], tuple[str, ...]]] = field(
        default_factory=dict
    )
    names: list[Name] = field(default_factory=list)
    blob: str = ""  # every name's key, one a line (what a typed pattern scans in one pass)
    starts: list[int] = field(default_factory=list)  # where each name's line starts in blob
    tags: Counter[str] = field(default_factory=Counter)
    wiki: int = 0
    markdown: int = 0
    _link_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    _seen: list[Card] = field(default_factory=list)  # the graph's card objects last time
    indegree: dict[str, int] = field(default_factory=dict)  # backlinks per card

    def refresh(self, graph: LinkGraph) -> None:
        cards = graph.cards
        now = list(cards.values())
        if now == self._seen:  # the same objects (identity first): nothing changed
            return
        self._seen = now
        for path in [p for p in self.per_card if p not in cards]:
            del self.per_card[path]
            self._link_counts.pop(path, None)
        for path, card in cards.items():
            known = self.per_card.get(path)
            if known is not None and known[0] is card:
                continue
            self.per_card[path] = (card, tuple(card_names(card)), tuple(card.tag_names))
            counts = _link_kinds(card)
            if counts != (0, 0):  # most cards' (0, 0) is the default: no tuple each
                self._link_counts[path] = counts
            else:
                self._link_counts.pop(path, None)
        self.wiki = sum(w for w, _ in self._link_counts.values())
        self.markdown = sum(m for _, m in self._link_counts.values())
        self.names = [n for _, names, _ in self.per_card.values() for n in names]
        self.blob, self.starts = _blob([n.key for n in self.names])
        self.tags = Counter(t for _, _, tags in self.per_card.values() for t in tags)
        self.indegree = graph.backlink_counts()

    def matching(self, pattern: re.Pattern[str]) -> list[Name]:
        """The names ``pattern`` (which never crosses a line) finds, in one pass."""
        return _matching(self.blob, self.starts, self.names, pattern)

    @property
    def style(self) -> str:
        """``markdown`` when Markdown links to notes outnumber wikilinks, else ``wiki``."""
        return MARKDOWN if self.markdown > self.wiki else WIKI


def matching(names: Sequence[Name], pattern: re.Pattern[str]) -> list[Name]:
    """The ``names`` whose key ``pattern`` (which never crosses a line) finds, in one pass."""
    return _matching(*_blob([n.key for n in names]), names, pattern)


def _blob(keys: Sequence[str]) -> tuple[str, list[int]]:
    starts, at = [], 0
    for k in keys:
        starts.append(at)
        at += len(k) + 1
    return "\n".join(k.replace("\n", " ") for k in keys), starts


def _matching(
    blob: str, starts: Sequence[int], names: Sequence[Name], pattern: re.Pattern[str]
) -> list[Name]:
    out: list[Name] = []
    last = -1
    for m in pattern.finditer(blob):
        i = bisect_right(starts, m.start()) - 1
        if i != last:
            out.append(names[i])
            last = i
    return out


def card_names(card: Card) -> list[Name]:
    out: dict[str, Name] = {}  # each key under its first name: title, aliases, file name
    aliases = ((a, "alias") for a in card.aliases)
    for text, kind in ((card.title, "title"), *aliases, (card.stem, "file")):
        # the name table's copy of the same key (names.add_owner interns its names)
        key = sys.intern(norm(text))
        if key:
            out.setdefault(key, Name(key, text, card.path, kind))
    return list(out.values())


def _link_kinds(card: Card) -> tuple[int, int]:
    wiki = markdown = 0
    for link in card.links:
        if link.kind in (LinkKind.WIKI, LinkKind.EMBED):
            wiki += 1
        elif link.kind == LinkKind.MARKDOWN and link.target.lower().endswith(".md"):
            markdown += 1
    return wiki, markdown


_CACHE: weakref.WeakKeyDictionary[LinkGraph, VaultNames] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def vault_names(graph: LinkGraph) -> VaultNames:
    """The (incrementally refreshed) names of ``graph``'s cards, kept as long as the graph
    lives. Call inside the vault lock."""
    with _CACHE_LOCK:
        names = _CACHE.setdefault(graph, VaultNames())
    names.refresh(graph)
    return names
