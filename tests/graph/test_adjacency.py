"""The link graph's adjacency: shared edge data, node removal, pickling."""

from __future__ import annotations

import pickle

import pytest

from zettel_lsp.graph.adjacency import Adjacency, edge_data
from zettel_lsp.graph.link_graph import EdgeKind

LINK, EMBED = EdgeKind.LINK, EdgeKind.EMBED


def test_equal_edge_data_is_one_shared_read_only_mapping() -> None:
    a, b = edge_data({LINK: 1}), edge_data({LINK: 1, EMBED: 0})
    assert a is b and a == {LINK: 1}
    assert edge_data({EMBED: 0}) is None and edge_data({}) is None
    assert edge_data({LINK: 2}) is not a
    with pytest.raises(TypeError):
        a[LINK] = 5  # type: ignore[index]
    assert edge_data({LINK: 1}) == {LINK: 1}


def test_edges_both_ways_and_removal() -> None:
    g = Adjacency()
    g.add_node("lonely")
    one = edge_data({LINK: 1})
    g.set_edge("a", "b", one)
    g.set_edge("c", "b", edge_data({EMBED: 1}))
    g.set_edge("b", "b", one)  # a card linking itself
    assert "a" in g and "b" in g and "lonely" in g and "zzz" not in g
    assert dict(g.succ("a")) == {"b": {LINK: 1}}
    assert set(g.pred("b")) == {"a", "c", "b"}
    assert g.succ("lonely") == {} and g.pred("nowhere") == {}
    assert g.edge("a", "b") is one and g.edge("b", "a") is None
    assert g.number_of_edges() == 3
    g.set_edge("a", "b", None)  # removed, both sides
    assert g.edge("a", "b") is None and set(g.pred("b")) == {"c", "b"} and g.succ("a") == {}
    g.set_edge("a", "b", None)  # removing a missing edge is a no-op
    g.remove_node("b")  # every edge into or out of it goes
    assert "b" not in g and g.succ("c") == {} and g.pred("b") == {}
    assert list(g.edges()) == [] and "a" in g and "c" in g


def test_pickle_keeps_edges_and_shares_their_data_again() -> None:
    g = Adjacency()
    for i in range(50):
        g.set_edge(f"s{i}", f"t{i % 7}", edge_data({LINK: 1}))
    g.set_edge("s0", "t9", edge_data({LINK: 2, EMBED: 1}))
    g.add_node("alone")
    back = pickle.loads(pickle.dumps(g, protocol=5))
    assert sorted(back.edges()) == sorted(g.edges())
    assert "alone" in back and len(back) == len(g)
    assert {id(d) for _, _, d in back.edges() if d == {LINK: 1}} == {id(edge_data({LINK: 1}))}
    assert set(back.pred("t0")) == set(g.pred("t0"))
