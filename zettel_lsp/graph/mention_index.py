"""Unlinked mentions: a card's title or alias in another card's prose, without a link.

They are not graph edges. Their number grows faster than the vault (each card names more titles
when there are more titles to name), so each card's mentions are two compact arrays (spans and
targets), each target keeps who names it, and :meth:`MentionIndex.of` builds the
:class:`UnlinkedMention` objects when asked. :class:`~zettel_lsp.graph.link_graph.LinkGraph`
owns one and keeps it in step with its cards.
"""

from __future__ import annotations

import contextlib
import hashlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from zettel_lsp.graph.resolver import tie_break_key
from zettel_lsp.notes.mentions import Mention, MentionMatcher, normalise, unlinkable
from zettel_lsp.notes.model import Card


@dataclass(frozen=True, slots=True)
class UnlinkedMention:
    source: str
    target: str  # the card whose title or alias is mentioned
    start: int
    end: int
    text: str  # as written in the source


# bump when what the mention pass finds changes
MENTION_FORMAT = "mentions-2"
# a card's mentions: start/end pairs, and the card each one names
Mentions = tuple["array[int]", tuple[str, ...]]
# a card's mentions as kept between runs: (digest of its text, start/end pairs, targets)
CachedMentions = tuple[str, "array[int]", tuple[str, ...]]
_NO_MENTIONS: Mentions = (array("i"), ())


@dataclass(slots=True)
class MentionCache:
    """A graph's mentions, to reuse in the next :meth:`LinkGraph.build` (see there)."""

    format: str
    min_length: int
    phrases: dict[str, tuple[str, ...]]  # what the mention matcher looked for, and owners
    cards: dict[str, CachedMentions]


def unfile(table: dict[str, list[str]], key: str, path: str) -> None:
    """Take ``path`` out of the cards filed under ``key``; the key goes with its last card."""
    paths = table.get(key)
    if paths is not None:
        with contextlib.suppress(ValueError):
            paths.remove(path)
        if not paths:
            del table[key]


def text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class MentionIndex:
    """The mentions of the cards in ``cards`` (the graph's own table, shared), found with
    names of at least ``min_length`` characters."""

    def __init__(self, cards: dict[str, Card], min_length: int) -> None:
        self.cards = cards
        self.min_length = min_length
        # card -> its mentions: (start, end, start, end, ...), and each one's target
        self.by_card: dict[str, Mentions] = {}
        # target -> the cards that mention it, each once (lists: a third of dicts' memory)
        self.named_by: dict[str, list[str]] = {}
        self._matcher: MentionMatcher | None = None
        # cards searched (not reused) since the graph's build(), or since set to 0
        self.found = 0
        self.digests: dict[str, str] = {}  # card -> text digest, as build() read it

    def of(self, path: str) -> list[UnlinkedMention]:
        """Unlinked mentions of other cards in the card at ``path``."""
        spans, targets = self.by_card.get(path, _NO_MENTIONS)
        text = self.cards[path].text if targets else ""
        return [
            UnlinkedMention(
                path, t, spans[2 * i], spans[2 * i + 1], text[spans[2 * i] : spans[2 * i + 1]]
            )
            for i, t in enumerate(targets)
        ]

    def targets(self, path: str) -> set[str]:
        """The cards the card at ``path`` mentions (without building the mentions)."""
        return set(self.by_card.get(path, _NO_MENTIONS)[1])

    def cache(self) -> MentionCache:
        """What the graph's ``build`` needs to reuse these mentions."""
        cards: dict[str, CachedMentions] = {}
        for path, card in self.cards.items():
            digest = self.digests.get(path) or text_digest(card.text)
            spans, targets = self.by_card.get(path, _NO_MENTIONS)
            cards[path] = (digest, spans, targets)
        return MentionCache(MENTION_FORMAT, self.min_length, dict(self.matcher().phrases()), cards)

    def reusable(self, cache: MentionCache | None) -> Callable[[str, str], CachedMentions | None]:
        """Per card, its cached mentions if they are still what the mention pass would find."""
        if cache is None or cache.format != MENTION_FORMAT or cache.min_length != self.min_length:
            return lambda path, text: None
        now = self.matcher().phrases()
        changed = {
            p for p in now.keys() | cache.phrases.keys() if now.get(p) != cache.phrases.get(p)
        }
        probe = MentionMatcher(((p, p) for p in changed), self.min_length)

        def reusable(path: str, text: str) -> CachedMentions | None:
            entry = cache.cards.get(path)
            digest = self.digests[path] = text_digest(text)
            if entry is None or entry[0] != digest:
                return None
            if len(probe) and probe.find(text):
                return None  # it names a title that came, went or changed owners
            return entry

        return reusable

    def scan(self, card: Card) -> list[UnlinkedMention]:
        """The mentions in ``card``'s text, not stored."""
        text = card.text  # once: a graph's card may read it from a file
        return [
            UnlinkedMention(card.path, target, m.start, m.end, text[m.start : m.end])
            for m, target in self._named(card, text)
        ]

    def matcher(self) -> MentionMatcher:
        """The matcher of every card's title and aliases (made when first needed)."""
        if self._matcher is None:
            names = ((p, c.path) for c in self.cards.values() for p in (c.title, *c.aliases))
            self._matcher = MentionMatcher(names, self.min_length)
        return self._matcher

    def refresh(self, touched: list[str], changed: set[str]) -> None:
        """Search again the cards ``touched`` (added or replaced) and every other card that
        holds one of the ``changed`` phrases."""
        if changed:
            self._matcher = None  # titles changed: rebuild lazily
            probe = MentionMatcher(((p, p) for p in changed), self.min_length)
            skip = set(touched)
            others = (c for p, c in self.cards.items() if p not in skip) if len(probe) else ()
            hit = {c.path: c.text for c in others if probe.find(c.text)}
            for src, text in hit.items():
                self.search(src, text)
        for path in touched:
            self.search(path)

    def search(self, path: str, text: str | None = None) -> None:
        """Search the card at ``path`` (whose text is ``text``, when the caller read it)."""
        self.found += 1
        card = self.cards[path]
        if text is None:
            text = card.text
        self.drop(path)
        spans = array("i")
        targets: list[str] = []
        for m, target in self._named(card, text):
            spans.extend((m.start, m.end))
            targets.append(target)
        if targets:
            self.store(path, ("", spans, tuple(targets)))

    def store(self, path: str, entry: CachedMentions) -> None:
        _, spans, targets = entry
        if not targets:
            return
        self.by_card[path] = (spans, targets)
        for dst in dict.fromkeys(targets):
            self.named_by.setdefault(dst, []).append(path)

    def drop(self, path: str) -> None:
        for dst in self.targets(path):
            unfile(self.named_by, dst, path)
        self.by_card.pop(path, None)

    def _named(self, card: Card, text: str) -> Iterator[tuple[Mention, str]]:
        """The mentions in ``text`` (of ``card``) that name another card, with that card."""
        for m in self.matcher().find(text, unlinkable(card, text)):
            target = self._target(card.path, m.keys)
            if target is not None:
                yield m, target

    def _target(self, path: str, keys: tuple[str, ...]) -> str | None:
        """The card a name owned by ``keys`` names in the card at ``path``: None for the card's
        own title, or a name it shares with others."""
        if path in keys:
            return None
        owners = [k for k in keys if k in self.cards]
        if len(owners) == 1:
            return owners[0]
        return min(owners, key=lambda p: tie_break_key(p, path), default=None)


def phrases_of(card: Card | None) -> set[str]:
    """The normalised title and aliases of ``card`` (none for None)."""
    if card is None:
        return set()
    return {normalise(p) for p in (card.title, *card.aliases)}
