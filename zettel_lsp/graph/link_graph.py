"""The card graph: resolved links and embeds as typed, weighted edges, and unlinked mentions.

``LinkGraph.graph`` is a networkx ``DiGraph``: its nodes are the card paths, and an edge
``u -> v`` exists when ``u`` links or embeds ``v``, with the counts per kind as its data
(``{"link": 2, "embed": 1}``: wikilinks and Markdown links, ``![[...]]``; a kind that does not
occur is absent). Every edge carries a link or an embed. Walks over the graph (distances,
neighbourhoods, degrees) are networkx's. Updating, adding, deleting or renaming one card touches
only the cards whose links or mentions can change; nothing is rebuilt.

**Mentions are not graph edges**: a card's title or alias in another's prose, without a link.
They are kept by the graph's :class:`~zettel_lsp.graph.mention_index.MentionIndex`
(``LinkGraph.mentions``), in step with the cards.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import networkx as nx

from zettel_lsp.graph.mention_index import (
    MentionCache,
    MentionIndex,
    UnlinkedMention,
    phrases_of,
    unfile,
)
from zettel_lsp.graph.names import NameTable
from zettel_lsp.graph.resolver import (
    Resolution,
    card_keys,
    name_key,
    resolve,
    resolve_link,
)
from zettel_lsp.notes.mentions import DEFAULT_MIN_LENGTH
from zettel_lsp.notes.model import Card, Link


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    source: str
    link: Link
    resolution: Resolution

    @property
    def target(self) -> str | None:
        return self.resolution.target


def _links_and_names(card: Card) -> tuple[object, ...]:
    """What of a card its links' targets and labels, and the names of cards, depend on."""
    links = tuple((link.kind, link.target, link.label) for link in card.links)
    return (card.title, tuple(card.aliases), card.card_id, links)


def _link_keys(links: list[Link]) -> set[str]:
    """The name keys a card's links are filed under for re-resolution (:func:`name_key` of
    each target, and of each label: Dendron order may resolve through the label side)."""
    named = [link for link in links if link.target]
    labels = {name_key(link.label.split("#", 1)[0]) for link in named if link.label}
    return {name_key(link.target) for link in named} | labels


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
        # link name key -> the cards holding such a link, each once (lists: smaller than sets)
        self._by_key: dict[str, list[str]] = {}
        self.mention_min_length = mention_min_length
        self.mentions = MentionIndex(self.cards, mention_min_length)
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
        reusable = g.mentions.reusable(mentions)
        for path, card in g.cards.items():
            entry = reusable(path, card.text)
            if entry is None:
                g.mentions.search(path, card.text)
            else:
                g.mentions.store(path, entry)
        return g

    def mention_cache(self) -> MentionCache:
        """What :meth:`build` needs to reuse this graph's mentions (see there)."""
        return self.mentions.cache()

    @property
    def mentions_found(self) -> int:
        """Cards whose mentions were searched (not reused) since :meth:`build`."""
        return self.mentions.found

    def forget_digests(self) -> None:
        """Drop the text digests :meth:`build` kept for :meth:`mention_cache`, which computes
        them again when called."""
        self.mentions.digests = {}

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
            self.mentions.digests.pop(path, None)
            self.names.remove(card)
            self._clear_outgoing(path, card.links)
            self.mentions.drop(path)
            self.mentions.named_by.pop(path, None)
            self.graph.remove_node(path)
            self._after_names_changed(path, card_keys(card))
            changed_phrases |= phrases_of(card)
        for card in cards:
            old = self.cards.get(card.path)
            old_keys = card_keys(old) if old else set()
            if old is None or _links_and_names(old) != _links_and_names(card):
                links_moved = True
            changed_phrases |= phrases_of(old) ^ phrases_of(card)
            if old is not None:
                self._clear_outgoing(card.path, old.links)
            self.cards[card.path] = card
            self.mentions.digests.pop(card.path, None)
            self.graph.add_node(card.path)
            self.names.replace(old, card)
            self._resolve_links(card.path)
            self._after_names_changed(card.path, old_keys ^ card_keys(card))
            touched.append(card.path)
        self.mentions.refresh(touched, changed_phrases)
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
        return self.mentions.of(path)

    def mention_targets(self, path: str) -> set[str]:
        """The cards the card at ``path`` mentions (without building the mentions)."""
        return self.mentions.targets(path)

    def link_counts(self, path: str) -> tuple[int, int]:
        """``len(backlinks(path))`` and ``len(mentioned_by(path))`` without sorting: a common
        word is named by hundreds of cards, and this runs per mentioned card."""
        named_by = self.mentions.named_by.get(path, ())
        if path not in self.graph:
            return 0, len(named_by)
        linkers = [src for src in self.graph.pred[path] if src != path]
        # the cards that name it minus those of them that link it: a walk over the linkers,
        # not over the namers (a common word is named by thousands of cards, linked by few);
        # whether a linker names it, its own mentions say (tens of targets)
        mentions = self.mentions.by_card
        named = sum(1 for src in linkers if src in mentions and path in mentions[src][1])
        return len(linkers), len(named_by) - named

    def degree(self, path: str) -> int:
        """Distinct cards ``path`` links, embeds or mentions, plus distinct cards that do so to
        it (a card joined both ways counts twice): the graph's degree, plus the cards joined
        by mentions alone."""
        g = self.graph
        if path not in g:
            return 0
        mentioned = self.mention_targets(path).difference(g.succ[path])
        naming = set(self.mentions.named_by.get(path, ())).difference(g.pred[path])
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
            for src in self.mentions.named_by.get(path, ())
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
        return self.mentions.scan(card)

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
            unfile(self._by_key, key, path)
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

    def prepare_mentions(self) -> None:
        """Build the mention matcher's automata now, not on the first change that needs them
        (:meth:`MentionMatcher.prepare`); safe outside the vault lock."""
        self.mentions.matcher().prepare()

    def name_phrases(self) -> dict[str, tuple[str, ...]]:
        """Every title and alias the mention pass looks for (normalised, long enough), with
        the cards that own it. Do not change the result."""
        return self.mentions.matcher().phrases()
