"""How one card relates to another in the graph, as the editors label search and related results."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from zettel_lsp.graph.link_graph import LinkGraph

THIS_CARD: Final = "this card"
LINKED: Final = "linked"
BACKLINK: Final = "backlink"
TWO_HOPS: Final = "2 hops"
NOT_LINKED: Final = "not linked"
RELATIONS: Final = (THIS_CARD, LINKED, BACKLINK, TWO_HOPS, NOT_LINKED)


def relation(graph: LinkGraph, here: str, linked: Collection[str], other: str) -> str:
    """How the card ``other`` relates to the card ``here``, whose current links (possibly
    unsaved: ``search.suggest.linked_targets``) resolve to ``linked``: ``"this card"``,
    ``"linked"`` (``here`` links to it), ``"backlink"`` (it links to ``here``), ``"2 hops"``
    (one card between them, either direction) or ``"not linked"``."""
    if other == here:
        return THIS_CARD
    if other in linked:
        return LINKED
    if here in graph.outgoing(other):
        return BACKLINK
    if graph.distance(here, other, cutoff=2) == 2:
        return TWO_HOPS
    return NOT_LINKED
