"""The card graph: resolved links and embeds as typed, weighted edges, and unlinked mentions.

``LinkGraph.graph`` is a networkx ``DiGraph``: its nodes are the card paths, and an edge
``u -> v`` exists when ``u`` links or embeds ``v``, with the counts per kind as its data
(``{"link": 2, "embed": 1}``: wikilinks and Markdown links, ``![[...]]``; a kind that does not
occur is absent). Every edge carries a link or an embed. Walks over the graph (distances,
neighbourhoods, degrees) are networkx's. Updating, adding, deleting or renaming one card touches
only the cards whose links or mentions can change; nothing is rebuilt.

**Mentions are not graph edges** (issue #18): a card's title or alias in another's prose,
without a link. Their number grows faster than the vault (each card names more titles when there
are more titles to name), so each card's mentions are two compact arrays (spans and targets),
each target keeps who names it, and :meth:`LinkGraph.mentions_of` builds the
:class:`UnlinkedMention` objects when asked.
"""

from __future__ import annotations

import contextlib
import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import networkx as nx

from zettel_lsp.graph.names import NameTable
from zettel_lsp.graph.resolver import (
    Resolution,
    card_keys,
    name_key,
    resolve,
    resolve_link,
    tie_break_key,
)
from zettel_lsp.notes.mentions import (
    DEFAULT_MIN_LENGTH,
    Mention,
    MentionMatcher,
    normalise,
    unlinkable,
)
from zettel_lsp.notes.model import Card, Link


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    source: str
    link: Link
    resolution: Resolution

    @property
    def target(self) -> str | None:
        return self.resolution.target


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


def _links_and_names(card: Card) -> tuple[object, ...]:
    """What of a card its links' targets and labels, and the names of cards, depend on."""
    links = tuple((link.kind, link.target, link.label) for link in card.links)
    return (card.title, tuple(card.aliases), card.card_id, links)


def _unfile(table: dict[str, list[str]], key: str, path: str) -> None:
    """Take ``path`` out of the cards filed under ``key``; the key goes with its last card."""
    paths = table.get(key)
    if paths is not None:
        with contextlib.suppress(ValueError):
            paths.remove(path)
        if not paths:
            del table[key]


def _link_keys(links: list[Link]) -> set[str]:
    """The name keys a card's links are filed under for re-resolution (:func:`name_key` of
    each target, and of each label: Dendron order may resolve through the label side)."""
    named = [link for link in links if link.target]
    labels = {name_key(link.label.split("#", 1)[0]) for link in named if link.label}
    return {name_key(link.target) for link in named} | labels


def text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class LinkGraph:
    """Cards, their resolved links and mentions; incremental."""

    def __init__(self, *, mention_min_length: int = DEFAULT_MIN_LENGTH) -> None:
        self.cards: dict[str, Card] = {}
        # card path -> card path when the first links or embeds the second: {kind: count}
        self.graph: nx.DiGraph[str] = nx.DiGraph()
        self.names = NameTable(self.cards)  # every card's names: what links resolve against
        # card -> the resolution of each of its links, in the card's order (cards with links
        # only); ResolvedLink objects are made when asked (links_of)
        self._links: dict[str, tuple[Resolution, ...]] = {}
        # card -> its mentions: (start, end, start, end, ...), and each one's target
        self._mentions: dict[str, Mentions] = {}
        # target -> the cards that mention it, each once (lists: a third of dicts' memory)
        self._named_by: dict[str, list[str]] = {}
        # link name key -> the cards holding such a link, each once (lists: smaller than sets)
        self._by_key: dict[str, list[str]] = {}
        self.mention_min_length = mention_min_length
        self._matcher: MentionMatcher | None = None
        # cards whose mentions were searched (not reused) since build(), or since this counter
        # was set to 0
        self.mentions_found = 0
        self._digests: dict[str, str] = {}  # card -> text digest, as build() read it
        # counts the changes that can move a link's target or label, or a card's names (a
        # card came or went, or one's links, title, aliases or id changed): what is derived
        # from those alone (search/suggest/names.py) is kept over the saves that change prose only
        self.link_generation = 0

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        cards: Iterable[Card],
        *,
        mention_min_length: int = DEFAULT_MIN_LENGTH,
        mentions: MentionCache | None = None,
    ) -> LinkGraph:
        """The graph of ``cards``. ``mentions`` (from :meth:`mention_cache` of an earlier
        graph, e.g. the last run's) spares the mention pass for every card whose text is the
        same and holds none of the titles or aliases that changed since: the result is the
        same as without it."""
        g = cls(mention_min_length=mention_min_length)
        for card in cards:
            g.cards[card.path] = card
            g.graph.add_node(card.path)
            g.names.add(card)
        # equal resolutions share one object
        same: dict[Resolution, Resolution] = {}
        for path in g.cards:
            g._resolve_links(path, same)
        reusable = g._reusable(mentions)
        for path, card in g.cards.items():
            entry = reusable(path, card.text)
            if entry is None:
                g._find_mentions(path, card.text)
            else:
                g._store_mentions(path, entry)
        return g

    def mention_cache(self) -> MentionCache:
        """What :meth:`build` needs to reuse this graph's mentions (see there)."""
        cards: dict[str, CachedMentions] = {}
        for path, card in self.cards.items():
            digest = self._digests.get(path) or text_digest(card.text)
            spans, targets = self._mentions.get(path, _NO_MENTIONS)
            cards[path] = (digest, spans, targets)
        return MentionCache(
            MENTION_FORMAT, self.mention_min_length, dict(self._matcher_now().phrases()), cards
        )

    def forget_digests(self) -> None:
        """Drop the text digests :meth:`build` kept for :meth:`mention_cache`, which computes
        them again when called."""
        self._digests = {}

    def _reusable(self, cache: MentionCache | None) -> Callable[[str, str], CachedMentions | None]:
        """Per card, its cached mentions if they are still what the mention pass would find."""
        if (
            cache is None
            or cache.format != MENTION_FORMAT
            or cache.min_length != self.mention_min_length
        ):
            return lambda path, text: None
        now = self._matcher_now().phrases()
        changed = {
            p for p in now.keys() | cache.phrases.keys() if now.get(p) != cache.phrases.get(p)
        }
        probe = MentionMatcher(((p, p) for p in changed), self.mention_min_length)

        def reusable(path: str, text: str) -> CachedMentions | None:
            entry = cache.cards.get(path)
            digest = self._digests[path] = text_digest(text)
            if entry is None or entry[0] != digest:
                return None
            if len(probe) and probe.find(text):
                return None  # it names a title that came, went or changed owners
            return entry

        return reusable

    def upsert(self, card: Card) -> None:
        """Add a new card or replace the card at the same path."""
        self.apply_changes((), (card,))

    def remove(self, path: str) -> Card | None:
        """Delete a card; links to it become unresolved (or resolve to another card)."""
        card = self.cards.get(path)
        if card is not None:
            self.apply_changes((path,), ())
        return card

    def apply_changes(self, removed: Iterable[str], cards: Iterable[Card]) -> None:
        """Delete the cards at ``removed``, then add or replace ``cards`` (paths not in
        ``removed``): the graph :meth:`upsert` and :meth:`remove` one at a time give, with one
        search of the other cards for the titles and aliases that came, went or changed."""
        changed_phrases: set[str] = set()
        touched: list[str] = []
        links_moved = False
        for path in removed:
            card = self.cards.pop(path, None)
            if card is None:
                continue
            links_moved = True
            self._digests.pop(path, None)
            self.names.remove(card)
            self._clear_outgoing(path, card.links)
            self._drop_mentions(path)
            self._named_by.pop(path, None)
            self.graph.remove_node(path)
            self._after_names_changed(path, card_keys(card))
            changed_phrases |= self._phrases(card)
        for card in cards:
            old = self.cards.get(card.path)
            old_keys = card_keys(old) if old else set()
            if old is None or _links_and_names(old) != _links_and_names(card):
                links_moved = True
            changed_phrases |= self._phrases(old) ^ self._phrases(card)
            if old is not None:
                self._clear_outgoing(card.path, old.links)
            self.cards[card.path] = card
            self._digests.pop(card.path, None)
            self.graph.add_node(card.path)
            self.names.replace(old, card)
            self._resolve_links(card.path)
            self._after_names_changed(card.path, old_keys ^ card_keys(card))
            touched.append(card.path)
        self._refresh_mentions(touched, changed_phrases)
        if links_moved:
            self.link_generation += 1

    def rename(self, old_path: str, card: Card) -> None:
        """A card moved from ``old_path`` to ``card.path`` (with its new content)."""
        self.apply_changes((old_path,) if old_path != card.path else (), (card,))

    # ------------------------------------------------------------------ queries

    def links_of(self, path: str) -> list[ResolvedLink]:
        resolutions = self._links.get(path)
        if not resolutions:
            return []
        return [
            ResolvedLink(path, link, res)
            for link, res in zip(self.cards[path].links, resolutions, strict=True)
        ]

    def mentions_of(self, path: str) -> list[UnlinkedMention]:
        """Unlinked mentions of other cards in the card at ``path``."""
        spans, targets = self._mentions.get(path, _NO_MENTIONS)
        text = self.cards[path].text if targets else ""
        return [
            UnlinkedMention(
                path, t, spans[2 * i], spans[2 * i + 1], text[spans[2 * i] : spans[2 * i + 1]]
            )
            for i, t in enumerate(targets)
        ]

    def mention_targets(self, path: str) -> set[str]:
        """The cards the card at ``path`` mentions (without building the mentions)."""
        return set(self._mentions.get(path, _NO_MENTIONS)[1])

    def link_counts(self, path: str) -> tuple[int, int]:
        """``len(backlinks(path))`` and ``len(mentioned_by(path))`` without sorting: a common
        word is named by hundreds of cards, and this runs per mentioned card."""
        named_by = self._named_by.get(path, ())
        if path not in self.graph:
            return 0, len(named_by)
        linkers = [src for src in self.graph.pred[path] if src != path]
        # the cards that name it minus those of them that link it: a walk over the linkers,
        # not over the namers (a common word is named by thousands of cards, linked by few);
        # whether a linker names it, its own mentions say (tens of targets)
        mentions = self._mentions
        named = sum(1 for src in linkers if path in mentions.get(src, _NO_MENTIONS)[1])
        return len(linkers), len(named_by) - named

    def degree(self, path: str) -> int:
        """Distinct cards ``path`` links, embeds or mentions, plus distinct cards that do so to
        it (a card joined both ways counts twice): the graph's degree, plus the cards joined
        by mentions alone."""
        g = self.graph
        if path not in g:
            return 0
        mentioned = self.mention_targets(path).difference(g.succ[path])
        naming = set(self._named_by.get(path, ())).difference(g.pred[path])
        return g.degree(path) + len(mentioned) + len(naming)

    def unresolved_links(self) -> Iterator[ResolvedLink]:
        for path, resolutions in self._links.items():
            for link, res in zip(self.cards[path].links, resolutions, strict=True):
                if res.target is None and not res.attachment:
                    yield ResolvedLink(path, link, res)

    def backlink_counts(self) -> dict[str, int]:
        """``len(self.backlinks(p))`` for every card ``p``: its in-degree, a link to itself not
        counted."""
        counts = dict(self.graph.in_degree())
        for node, _ in nx.selfloop_edges(self.graph):
            counts[node] -= 1
        return counts

    def backlinks(self, path: str) -> list[str]:
        """Cards that link to (or embed) ``path``, sorted."""
        if path not in self.graph:
            return []
        return sorted(src for src in self.graph.pred[path] if src != path)

    def mentioned_by(self, path: str) -> list[str]:
        """Cards that mention ``path``'s title or an alias in prose but never link to it."""
        if path not in self.graph:
            return []
        return sorted(
            src
            for src in self._named_by.get(path, ())
            if src != path and not self.graph.has_edge(src, path)
        )

    def outgoing(self, path: str) -> list[str]:
        """Cards ``path`` links to (or embeds), sorted."""
        if path not in self.graph:
            return []
        return sorted(dst for dst in self.graph.succ[path] if dst != path)

    def linked_pairs(self) -> set[tuple[str, str]]:
        """Distinct (source, target) card pairs joined by a link or embed, self-links excluded."""
        return {(u, v) for u, v in self.graph.edges if u != v}

    def resolve(self, target: str, source: str = "") -> Resolution:
        return resolve(self.names, target, source)

    def resolve_link(self, link: Link, source: str) -> Resolution:
        return resolve_link(self.names, link, source)

    def neighbours(self, path: str) -> set[str]:
        """Cards joined to ``path`` by a link or embed in either direction."""
        if path not in self.graph:
            return set()
        return set(nx.all_neighbors(self.graph, path)) - {path}

    def touches(self, path: str, others: set[str]) -> bool:
        """Whether a link or embed joins ``path`` to one of ``others`` (either direction).
        Walks the smaller side: a hub's thousand links are not listed to test three cards."""
        g = self.graph
        if path not in g or not others:
            return False
        if len(others) >= g.degree(path):
            return not others.isdisjoint(self.neighbours(path))
        return any(o != path and (g.has_edge(path, o) or g.has_edge(o, path)) for o in others)

    def distance(self, a: str, b: str, cutoff: int = 3) -> int | None:
        """Shortest undirected path length from ``a`` to ``b`` over links and embeds.

        Returns None when they are farther apart than ``cutoff`` (or unknown). A shortest path
        meets in a card within half the cutoff of one end and the other half of the other: the
        two bounded neighbourhoods are searched, the wider one around the end with fewer links.
        """
        if a not in self.graph or b not in self.graph:
            return None
        if self.graph.degree(a) > self.graph.degree(b):
            a, b = b, a
        near_a = self.within(a, cutoff - cutoff // 2)
        near_b = self.within(b, cutoff // 2)
        small, large = sorted((near_a, near_b), key=len)
        return min((d + large[n] for n, d in small.items() if n in large), default=None)

    def within(self, path: str, cutoff: int = 2) -> dict[str, int]:
        """Every card within ``cutoff`` undirected hops of ``path`` over links and embeds, with
        its distance (breadth-first: nearer cards first)."""
        if path not in self.graph:
            return {}

        def around(node: str) -> Iterator[str]:
            # a generator: the search asks for every card it reaches, and lists the neighbours
            # only of those it expands (not of the cards at the cutoff)
            yield from self.neighbours(node)

        dist = {path: 0}
        for u, v in nx.generic_bfs_edges(self.graph, path, around, depth_limit=cutoff):
            dist[v] = dist[u] + 1
        return dist

    def most_linked(self, n: int = 10) -> list[tuple[str, int]]:
        """The ``n`` cards with the most backlinks (in-degree), with that number; ties by path."""
        counts = self.backlink_counts()
        return sorted(((p, c) for p, c in counts.items() if c), key=lambda x: (-x[1], x[0]))[:n]

    def find_mentions_in(self, card: Card) -> list[UnlinkedMention]:
        """Unlinked mentions in any card text (e.g. an editor's unsaved version), not stored;
        the stored ones when it is the text of the card in the graph."""
        known = self.cards.get(card.path)
        if known is not None and known.text == card.text:
            return self.mentions_of(card.path)
        return self._scan_mentions(card)

    def _scan_mentions(self, card: Card) -> list[UnlinkedMention]:
        text = card.text  # once: a graph's card may read it from a file
        return [
            UnlinkedMention(card.path, target, m.start, m.end, text[m.start : m.end])
            for m, target in self._named(card, text)
        ]

    def _named(self, card: Card, text: str) -> Iterator[tuple[Mention, str]]:
        """The mentions in ``text`` (of ``card``) that name another card, with that card."""
        for m in self._matcher_now().find(text, unlinkable(card, text)):
            target = self._mention_target(card.path, m.keys)
            if target is not None:
                yield m, target

    # ------------------------------------------------------------------ internals

    def _resolve_links(self, path: str, same: dict[Resolution, Resolution] | None = None) -> None:
        """Resolve the links of the card at ``path`` (its earlier ones taken out already, by
        :meth:`_clear_outgoing`)."""
        card = self.cards[path]
        resolved: list[Resolution] = []
        edges: dict[str, dict[str, int]] = {}  # target -> {kind: count}
        links = card.links
        for link in links:
            res = resolve_link(self.names, link, path)
            if same is not None:
                res = same.setdefault(res, res)
            resolved.append(res)
            if res.target is not None:
                counts = edges.setdefault(res.target, {})
                kind = "embed" if link.is_embed else "link"
                counts[kind] = counts.get(kind, 0) + 1
        for key in _link_keys(links):  # each once: _clear_outgoing took the card out of all
            self._by_key.setdefault(key, []).append(path)
        if resolved:
            self._links[path] = tuple(resolved)
        self.graph.add_edges_from((path, dst, counts) for dst, counts in edges.items())

    def _clear_outgoing(self, path: str, links: list[Link]) -> None:
        """Take out what the card at ``path`` added with ``links``, the links it was last
        resolved with."""
        self._links.pop(path, None)
        for key in _link_keys(links):
            _unfile(self._by_key, key, path)
        if path in self.graph:
            self.graph.remove_edges_from(list(self.graph.out_edges(path)))

    def _after_names_changed(self, changed: str, keys: set[str]) -> None:
        """Re-resolve every other card holding a link whose name matches one of ``keys``."""
        affected: set[str] = set()
        for key in keys:
            affected.update(self._by_key.get(key, ()))
        affected.discard(changed)
        for src in sorted(affected):
            if src in self.cards:
                self._clear_outgoing(src, self.cards[src].links)
                self._resolve_links(src)

    # mentions

    def _phrases(self, card: Card | None) -> set[str]:
        if card is None:
            return set()
        return {normalise(p) for p in (card.title, *card.aliases)}

    def prepare_mentions(self) -> None:
        """Build the mention matcher's automata now, not on the first change that needs them
        (:meth:`MentionMatcher.prepare`); safe outside the vault lock."""
        self._matcher_now().prepare()

    def name_phrases(self) -> dict[str, tuple[str, ...]]:
        """Every title and alias the mention pass looks for (normalised, long enough), with
        the cards that own it. Do not change the result."""
        return self._matcher_now().phrases()

    def _matcher_now(self) -> MentionMatcher:
        if self._matcher is None:
            names = ((p, c.path) for c in self.cards.values() for p in (c.title, *c.aliases))
            self._matcher = MentionMatcher(names, self.mention_min_length)
        return self._matcher

    def _refresh_mentions(self, touched: list[str], changed: set[str]) -> None:
        """Search again the cards ``touched`` (added or replaced) and every other card that
        holds one of the ``changed`` phrases."""
        if changed:
            self._matcher = None  # titles changed: rebuild lazily
            probe = MentionMatcher(((p, p) for p in changed), self.mention_min_length)
            skip = set(touched)
            others = (c for p, c in self.cards.items() if p not in skip) if len(probe) else ()
            hit = {c.path: c.text for c in others if probe.find(c.text)}
            for src, text in hit.items():
                self._find_mentions(src, text)
        for path in touched:
            self._find_mentions(path)

    def _find_mentions(self, path: str, text: str | None = None) -> None:
        """Search the card at ``path`` (whose text is ``text``, when the caller read it)."""
        self.mentions_found += 1
        card = self.cards[path]
        if text is None:
            text = card.text
        self._drop_mentions(path)
        spans = array("i")
        targets: list[str] = []
        for m, target in self._named(card, text):
            spans.extend((m.start, m.end))
            targets.append(target)
        if targets:
            self._store_mentions(path, ("", spans, tuple(targets)))

    def _store_mentions(self, path: str, entry: CachedMentions) -> None:
        _, spans, targets = entry
        if not targets:
            return
        self._mentions[path] = (spans, targets)
        for dst in dict.fromkeys(targets):
            self._named_by.setdefault(dst, []).append(path)

    def _drop_mentions(self, path: str) -> None:
        for dst in self.mention_targets(path):
            _unfile(self._named_by, dst, path)
        self._mentions.pop(path, None)

    def _mention_target(self, path: str, keys: tuple[str, ...]) -> str | None:
        """The card a name owned by ``keys`` names in the card at ``path``: None for the card's
        own title, or a name it shares with others."""
        if path in keys:
            return None
        owners = [k for k in keys if k in self.cards]
        if len(owners) == 1:
            return owners[0]
        return min(owners, key=lambda p: tie_break_key(p, path), default=None)
