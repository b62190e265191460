"""The link graph's edges: who links whom, as two dicts of dicts.

It replaced a networkx ``DiGraph``, of which the graph used only the adjacency (its own
:class:`~zettel_lsp.graph.link_graph.LinkGraph` walks it for distances and neighbours). At 100k
generated cards (230k edges) the ``DiGraph`` took 88 MB: a dict of attributes per edge (40 MB)
and per node (6 MB), and an inner dict for every node even without edges. Here the edge data are
shared read-only mappings, one per distinct value (:func:`edge_data`; nearly every edge is one
link), and a node without edges has no inner dict (docs/performance.md, memory at 100k).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

# edge data: what joins a source to a target, {kind: count}; shared, never changed in place
EdgeData = Mapping[str, int]

_EMPTY: Mapping[str, EdgeData] = MappingProxyType({})
_SHARED: dict[tuple[tuple[str, int], ...], EdgeData] = {}


def edge_data(counts: Mapping[str, int]) -> EdgeData | None:
    """The shared mapping holding ``counts`` without its zero entries (None when none is left).
    Equal counts give the same object, so 230k one-link edges cost one mapping."""
    key = tuple(sorted((k, n) for k, n in counts.items() if n))
    if not key:
        return None
    data = _SHARED.get(key)
    if data is None:
        data = _SHARED[key] = MappingProxyType(dict(key))
    return data


class Adjacency:
    """Nodes (card paths) and directed edges with their :data:`EdgeData`.

    ``succ(u)`` / ``pred(v)`` are read-only views; edges change through :meth:`set_edge` only.
    """

    __slots__ = ("_nodes", "_pred", "_succ")

    def __init__(self) -> None:
        self._nodes: set[str] = set()
        self._succ: dict[str, dict[str, EdgeData]] = {}
        self._pred: dict[str, dict[str, EdgeData]] = {}

    def __getstate__(self) -> tuple[set[str], dict[tuple[tuple[str, int], ...], list[str]]]:
        # MappingProxyType does not pickle, and one object per edge is what this class avoids:
        # per distinct edge data, the flat list source, target, source, target, ...
        flat: dict[tuple[tuple[str, int], ...], list[str]] = {}
        for u, v, data in self.edges():
            pairs = flat.setdefault(tuple(sorted(data.items())), [])
            pairs.append(u)
            pairs.append(v)
        return self._nodes, flat

    def __setstate__(
        self, state: tuple[set[str], dict[tuple[tuple[str, int], ...], list[str]]]
    ) -> None:
        nodes, flat = state
        self._nodes = nodes
        self._succ = {}
        self._pred = {}
        for key, pairs in flat.items():
            data = edge_data(dict(key))
            if data is None:
                continue
            for i in range(0, len(pairs), 2):
                self._link(pairs[i], pairs[i + 1], data)

    def __contains__(self, node: object) -> bool:
        return node in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def add_node(self, node: str) -> None:
        self._nodes.add(node)

    def remove_node(self, node: str) -> None:
        """Drop ``node`` and every edge into or out of it."""
        self._nodes.discard(node)
        for v in self._succ.pop(node, {}):
            self._unlink_pred(v, node)
        for u in self._pred.pop(node, {}):
            out = self._succ.get(u)
            if out is not None:
                out.pop(node, None)
                if not out:
                    del self._succ[u]

    def succ(self, node: str) -> Mapping[str, EdgeData]:
        """Targets of ``node``'s edges, with their data."""
        return self._succ.get(node, _EMPTY)

    def pred(self, node: str) -> Mapping[str, EdgeData]:
        """Sources of the edges into ``node``, with their data."""
        return self._pred.get(node, _EMPTY)

    def edge(self, u: str, v: str) -> EdgeData | None:
        return self._succ.get(u, _EMPTY).get(v)

    def set_edge(self, u: str, v: str, data: EdgeData | None) -> None:
        """Make the edge ``u -> v`` carry ``data`` (from :func:`edge_data`), or remove it when
        ``data`` is None. Both ends become nodes."""
        if data is None:
            out = self._succ.get(u)
            if out is not None and out.pop(v, None) is not None:
                if not out:
                    del self._succ[u]
                self._unlink_pred(v, u)
            return
        self._nodes.add(u)
        self._nodes.add(v)
        self._link(u, v, data)

    def edges(self) -> Iterator[tuple[str, str, EdgeData]]:
        """Every edge as (source, target, data)."""
        for u, out in self._succ.items():
            for v, data in out.items():
                yield u, v, data

    def number_of_edges(self) -> int:
        return sum(len(out) for out in self._succ.values())

    def in_edges(self) -> Iterator[tuple[str, Mapping[str, EdgeData]]]:
        """Every node with incoming edges, with its sources."""
        return iter(self._pred.items())

    def _link(self, u: str, v: str, data: EdgeData) -> None:
        self._succ.setdefault(u, {})[v] = data
        self._pred.setdefault(v, {})[u] = data

    def _unlink_pred(self, v: str, u: str) -> None:
        inc = self._pred.get(v)
        if inc is not None:
            inc.pop(u, None)
            if not inc:
                del self._pred[v]
