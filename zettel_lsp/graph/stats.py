"""Summary figures of a vault's graph (what ``zettel-lsp graph`` prints)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from zettel_lsp.graph.link_graph import LinkGraph


@dataclass(slots=True)
class GraphStats:
    cards: int
    links: int  # link occurrences in prose (wikilinks, embeds, Markdown links to local files)
    resolved_links: int  # occurrences that resolved to a card (same-card #heading links included)
    distinct_linked_pairs: int  # distinct (source, target) cards, self-links excluded
    unresolved_links: int  # occurrences naming a card that does not exist
    attachment_links: int  # links to images, PDFs and other non-note files
    dendron_order_links: int  # resolved through the right side of [[label|target]]
    ambiguous_links: int  # resolved by tie-breaking between several cards
    unlinked_mentions: int  # occurrences of another card's title/alias outside any link
    distinct_mention_pairs: int  # distinct (source, mentioned card) pairs with no link between them
    tags: int  # distinct tags
    skipped_files: int
    most_linked: list[dict[str, Any]] = field(default_factory=list)
    unresolved_sample: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def graph_stats(g: LinkGraph, *, skipped_files: int = 0, top: int = 10) -> GraphStats:
    links = resolved = unresolved = attachments = swapped = ambiguous = 0
    unresolved_sample: list[dict[str, Any]] = []
    for path in g.cards:
        for rl in g.links_of(path):
            links += 1
            res = rl.resolution
            if res.target is not None:
                resolved += 1
                swapped += res.swapped
                ambiguous += res.ambiguous
            elif res.attachment:
                attachments += 1
            else:
                unresolved += 1
                if len(unresolved_sample) < top:
                    unresolved_sample.append({"source": path, "link": rl.link.raw})
    pairs = g.linked_pairs()
    mention_count = sum(len(g.mentions_of(p)) for p in g.cards)
    mention_pairs = {(p, t) for p in g.cards for t in g.mention_targets(p)} - pairs
    tags = {t for c in g.cards.values() for t in c.tag_names}
    return GraphStats(
        cards=len(g.cards),
        links=links,
        resolved_links=resolved,
        distinct_linked_pairs=len(pairs),
        unresolved_links=unresolved,
        attachment_links=attachments,
        dendron_order_links=swapped,
        ambiguous_links=ambiguous,
        unlinked_mentions=mention_count,
        distinct_mention_pairs=len(mention_pairs),
        tags=len(tags),
        skipped_files=skipped_files,
        most_linked=[
            {"path": p, "title": g.cards[p].title, "backlinks": n} for p, n in g.most_linked(top)
        ],
        unresolved_sample=unresolved_sample,
    )


def describe_card(g: LinkGraph, name: str, *, top: int = 10) -> dict[str, Any]:
    """How ``[[name]]`` resolves and that card's neighbourhood (links, backlinks, mentions)."""
    res = g.resolve(name)
    if res.target is None:
        return {"query": name, "resolved": None}
    path = res.target
    card = g.cards[path]

    def brief(p: str) -> dict[str, str]:
        return {"path": p, "title": g.cards[p].title}

    two_hops = sorted(p for p, d in g.within(path, 2).items() if d == 2)
    return {
        "query": name,
        "resolved": brief(path),
        "stage": res.stage.value if res.stage else None,
        "aliases": card.aliases,
        "tags": card.tag_names,
        "links_to": [brief(p) for p in g.outgoing(path)][:top],
        "backlinks": [brief(p) for p in g.backlinks(path)][:top],
        "backlink_count": len(g.backlinks(path)),
        "mentioned_without_link_by": [brief(p) for p in g.mentioned_by(path)][:top],
        "two_hops": [brief(p) for p in two_hops][:top],
    }
