"""The one-word names a vault's link suggestions hold back as common words.

    python benchmarks/common_words.py VAULT [--top 40]

For every card of the vault, the cards it names in prose without a link that the mention rule
would show (confidence at least ``SHOWN``) but that are named only as a common word
(:func:`zettel_lsp.search.suggest.mentions.common_word`: one lower-case word, linked by fewer
than ``COMMON_LINK_RATE`` of the cards that name it). Prints one line per held-back card, most
often held back first: the cards it is held back in, its title, and its link counts (cards
linking it / cards naming it without a link).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.suggest.mentions import (
    SHOWN,
    common_word,
    linked_targets,
    mention_confidence,
    mention_evidence,
    mention_suggestions,
)


def held_back(graph: LinkGraph) -> Counter[str]:
    """Per card path: in how many cards a mention of it is held back as a common word."""
    count: Counter[str] = Counter()
    for card in graph.cards.values():
        linked = linked_targets(graph, card) | {card.path}
        texts: dict[str, list[str]] = {}
        for m in mention_suggestions(graph, card):
            if m.target not in linked:
                texts.setdefault(m.target, []).append(m.text)
        for target, said in texts.items():
            e = mention_evidence(graph, target, said)
            if mention_confidence(e) >= SHOWN and common_word(said, e.linked_by, e.named_by):
                count[target] += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--top", type=int, default=0, help="print only this many (0: all)")
    args = parser.parse_args()
    cards, _ = load_vault(args.vault)
    graph = LinkGraph.build(cards)
    count = held_back(graph)
    print(f"{len(count)} one-word titles held back, in {sum(count.values())} card mentions")
    for path, n in count.most_common(args.top or None):
        linked_by, named_by = graph.link_counts(path)
        print(f"{n:5d}  {graph.cards[path].title}  (linked by {linked_by}, named by {named_by})")


if __name__ == "__main__":
    main()
