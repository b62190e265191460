"""The link graph: typed edges, backlinks, mentions, distances, and incremental updates."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card


def cards(spec: dict[str, str]) -> list[Card]:
    return [parse_card(path, text) for path, text in spec.items()]


VAULT = {
    "BM25.md": "---\naliases: [Okapi BM25]\n---\nA ranking function. See [[Inverted index]].",
    "Inverted index.md": "Maps terms to postings. Used by bm25 scoring.",
    "Hub.md": "- [[BM25]]\n- [[Inverted index]]\n- ![[Dense retrieval]]\n- [[Missing]]",
    "Dense retrieval.md": "Embeddings. Compare with Okapi BM25 and [[Hub]].",
    "Lonely.md": "Nothing links here.",
}


def test_edges_backlinks_and_kinds() -> None:
    g = LinkGraph.build(cards(VAULT))
    assert g.backlinks("BM25.md") == ["Hub.md"]
    assert g.backlinks("Dense retrieval.md") == ["Hub.md"]
    assert g.graph.edges["Hub.md", "Dense retrieval.md"] == {"embed": 1}
    assert g.outgoing("Hub.md") == ["BM25.md", "Dense retrieval.md", "Inverted index.md"]
    assert [rl.link.raw for rl in g.unresolved_links()] == ["[[Missing]]"]
    assert g.linked_pairs() == {
        ("BM25.md", "Inverted index.md"),
        ("Hub.md", "BM25.md"),
        ("Hub.md", "Inverted index.md"),
        ("Hub.md", "Dense retrieval.md"),
        ("Dense retrieval.md", "Hub.md"),
    }
    assert g.most_linked(2) == [("Inverted index.md", 2), ("BM25.md", 1)]


def test_backlink_counts_are_the_backlinks_counted() -> None:
    spec = VAULT | {"Self.md": "I link [[Self]] and [[BM25]]; [[Hub]] mentions Lonely."}
    g = LinkGraph.build(cards(spec))
    counts = g.backlink_counts()
    assert counts == {p: len(g.backlinks(p)) for p in g.cards}
    assert counts["Self.md"] == 0 and counts["BM25.md"] == 2 and counts["Lonely.md"] == 0


def test_unlinked_mentions_use_titles_and_aliases_and_skip_links() -> None:
    g = LinkGraph.build(cards(VAULT))
    assert [(m.target, m.text) for m in g.mentions_of("Inverted index.md")] == [("BM25.md", "bm25")]
    assert [(m.target, m.text) for m in g.mentions_of("Dense retrieval.md")] == [
        ("BM25.md", "Okapi BM25")
    ]
    assert g.mentions_of("Hub.md") == []  # everything there is inside links
    assert g.mentioned_by("BM25.md") == ["Dense retrieval.md", "Inverted index.md"]
    assert not g.graph.has_edge("Inverted index.md", "BM25.md")  # mentions are no edges
    assert g.neighbours("BM25.md") == {"Hub.md", "Inverted index.md"}
    assert g.link_counts("BM25.md") == (len(g.backlinks("BM25.md")), 2)


def test_mentions_of_own_title_are_not_counted() -> None:
    g = LinkGraph.build(cards({"Levain.md": "A levain is a starter build.", "Other.md": "levain"}))
    assert g.mentions_of("Levain.md") == []
    assert [m.target for m in g.mentions_of("Other.md")] == ["Levain.md"]


def test_find_mentions_in_unsaved_text() -> None:
    g = LinkGraph.build(cards(VAULT))
    draft = parse_card("Lonely.md", "Now about the inverted index and [[BM25]].")
    assert [(m.target, m.text) for m in g.find_mentions_in(draft)] == [
        ("Inverted index.md", "inverted index")
    ]


def test_distance_and_within() -> None:
    chain = {f"n{i}.md": f"[[n{i + 1}]]" for i in range(6)} | {"n6.md": "", "far.md": ""}
    g = LinkGraph.build(cards(chain))
    assert g.distance("n0.md", "n0.md") == 0
    assert g.distance("n0.md", "n1.md") == 1
    assert g.distance("n3.md", "n0.md") == 3  # undirected
    assert g.distance("n0.md", "n4.md", cutoff=3) is None
    assert g.distance("n0.md", "n4.md", cutoff=4) == 4
    assert g.distance("n0.md", "far.md", cutoff=10) is None
    assert g.distance("n0.md", "nope.md") is None
    assert g.within("n3.md", 1) == {"n3.md": 0, "n2.md": 1, "n4.md": 1}


def test_distance_does_not_follow_mentions() -> None:
    g = LinkGraph.build(
        cards({"Alpha.md": "about beta things", "Beta.md": "", "Gamma.md": "[[Alpha]]"})
    )
    assert g.mentioned_by("Beta.md") == ["Alpha.md"]
    assert g.distance("Gamma.md", "Beta.md") is None


def test_an_edge_holds_its_kinds_and_counts_and_goes_with_its_links() -> None:
    spec = {
        "Alpha.md": "[[Beta]] and [[Beta|again]], ![[Beta]], [[Alpha]] itself, [[Gamma]]",
        "Beta.md": "[[Alpha]] and the gamma card",
        "Gamma.md": "",
        "Alone.md": "",
    }
    g = LinkGraph.build(cards(spec))
    assert set(g.graph) == set(spec)  # every card is a node, linked or not
    assert g.graph.edges["Alpha.md", "Beta.md"] == {"link": 2, "embed": 1}
    assert g.graph.edges["Alpha.md", "Alpha.md"] == {"link": 1}  # a card linking itself
    assert not g.graph.has_edge("Beta.md", "Gamma.md")  # a mention is no edge
    assert g.degree("Alone.md") == 0 and g.degree("nope.md") == 0
    # Alpha: out to itself, Beta, Gamma, in from itself, Beta; Gamma: in from Alpha, named by Beta
    assert g.degree("Alpha.md") == 3 + 2 and g.degree("Gamma.md") == 0 + 2
    g.upsert(parse_card("Alpha.md", "[[Gamma]] only"))
    assert sorted(g.graph.edges) == [("Alpha.md", "Gamma.md"), ("Beta.md", "Alpha.md")]
    g.remove("Gamma.md")  # its edges go both ways, and it is no node
    assert "Gamma.md" not in g.graph and sorted(g.graph.edges) == [("Beta.md", "Alpha.md")]


# ---------------------------------------------------------------- incremental updates


def snapshot(g: LinkGraph) -> dict[str, Any]:
    return {
        "cards": sorted(g.cards),
        "nodes": sorted(g.graph),
        "edges": sorted((u, v, sorted(d.items())) for u, v, d in g.graph.edges(data=True)),
        "links": {p: [(rl.link.raw, rl.target) for rl in g.links_of(p)] for p in sorted(g.cards)},
        "mentions": {
            p: [(m.target, m.start, m.end) for m in g.mentions_of(p)] for p in sorted(g.cards)
        },
        "named_by": {p: (g.mentioned_by(p), g.link_counts(p)) for p in sorted(g.cards)},
        "degree": {p: g.degree(p) for p in sorted(g.cards)},
    }


def test_adding_a_card_resolves_waiting_links_and_mentions() -> None:
    g = LinkGraph.build(cards(VAULT))
    g.upsert(parse_card("Missing.md", "Now exists; it mentions lonely things."))
    assert g.backlinks("Missing.md") == ["Hub.md"]
    assert [m.target for m in g.mentions_of("Missing.md")] == ["Lonely.md"]
    assert snapshot(g) == snapshot(LinkGraph.build([*cards(VAULT), g.cards["Missing.md"]]))


def test_removing_a_card_unresolves_links_and_drops_mentions() -> None:
    g = LinkGraph.build(cards(VAULT))
    g.remove("BM25.md")
    assert g.backlinks("Inverted index.md") == ["Hub.md"]
    assert "[[BM25]]" in [rl.link.raw for rl in g.unresolved_links()]
    assert g.mentions_of("Inverted index.md") == []
    rest = {k: v for k, v in VAULT.items() if k != "BM25.md"}
    assert snapshot(g) == snapshot(LinkGraph.build(cards(rest)))


def test_alias_change_moves_links_and_mentions() -> None:
    g = LinkGraph.build(cards(VAULT))
    g.upsert(parse_card("Lonely.md", "---\naliases: [Missing, embeddings]\n---\nNow linked."))
    assert g.backlinks("Lonely.md") == ["Hub.md"]
    assert ("Lonely.md", "embeddings") not in [
        (m.target, m.text) for m in g.mentions_of("Dense retrieval.md")
    ]
    assert next((m.target, m.text) for m in g.mentions_of("Dense retrieval.md")) == (
        "Lonely.md",
        "Embeddings",
    )
    spec = VAULT | {"Lonely.md": "---\naliases: [Missing, embeddings]\n---\nNow linked."}
    assert snapshot(g) == snapshot(LinkGraph.build(cards(spec)))


def test_rename_keeps_graph_consistent() -> None:
    g = LinkGraph.build(cards(VAULT))
    moved = parse_card("archive/BM25.md", VAULT["BM25.md"])
    g.rename("BM25.md", moved)
    assert g.backlinks("archive/BM25.md") == ["Hub.md"]
    spec = {k: v for k, v in VAULT.items() if k != "BM25.md"} | {
        "archive/BM25.md": VAULT["BM25.md"]
    }
    assert snapshot(g) == snapshot(LinkGraph.build(cards(spec)))


NAMES = ["Alpha", "Beta", "Gamma", "Delta", "sub/Alpha", "sub/Epsilon"]
TEXTS = st.lists(
    st.sampled_from(
        [
            "[[Alpha]]",
            "[[Beta|b]]",
            "![[Gamma]]",
            "[[sub/Alpha]]",
            "[[Epsilon]]",
            "[[Zeta]]",
            "alpha",
            "beta gamma",
            "the delta",
            "epsilon",
            "zeta",
            "\n",
            " ",
            "[x](Delta.md)",
            "---\naliases: [Zeta]\n---\n",
            "---\ntitle: Omega\n---\n",
            "omega",
            "[[Omega]]",
        ]
    ),
    max_size=6,
).map("".join)
OPS = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "remove", "rename"]),
        st.sampled_from(NAMES),
        st.sampled_from(NAMES),
        TEXTS,
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_any_sequence_of_updates_equals_a_rebuild(ops: list[tuple[str, str, str, str]]) -> None:
    state: dict[str, str] = {}
    g = LinkGraph.build([])
    for op, name, other, text in ops:
        path, other_path = f"{name}.md", f"{other}.md"
        if op == "upsert":
            state[path] = text
            g.upsert(parse_card(path, text))
        elif op == "remove" and path in state:
            del state[path]
            g.remove(path)
        elif op == "rename" and path in state and other_path not in state:
            state[other_path] = state.pop(path)
            g.rename(path, parse_card(other_path, state[other_path]))
        fresh = LinkGraph.build(cards(state))
        assert snapshot(g) == snapshot(fresh)
        # the cards to re-resolve when a name changes: each once, no key left empty
        assert {k: sorted(v) for k, v in g._by_key.items()} == {
            k: sorted(v) for k, v in fresh._by_key.items()
        }
        assert all(len(set(v)) == len(v) for v in g._by_key.values())
        for p, card in g.cards.items():
            # the stored mentions stand in for a search of the same text (issue #18) ...
            assert g.find_mentions_in(card) == g.mentions.scan(card), p
            # ... and the counts walk the linkers only: the same as the two lists
            assert g.link_counts(p) == (len(g.backlinks(p)), len(g.mentioned_by(p))), p


def test_touches_agrees_with_neighbours_on_both_sides() -> None:
    hub = {"Hub.md": "\n".join(f"- [[c{i}]]" for i in range(30))}
    spec = hub | {f"c{i}.md": "" for i in range(30)} | {"x.md": "[[Hub]]", "y.md": "Hub mention"}
    g = LinkGraph.build(cards(spec))
    paths = list(spec)
    groups = [set(), {"c3.md"}, {"x.md"}, {"y.md"}, {"Hub.md"}, {"y.md", "nope.md"}, set(paths)]
    for p in [*paths, "nope.md"]:
        for others in groups:
            assert g.touches(p, others) == (not others.isdisjoint(g.neighbours(p))), (p, others)
    assert g.touches("Hub.md", {"c3.md"}) and g.touches("c3.md", {"Hub.md"})
    assert not g.touches("Hub.md", {"y.md"})  # a mention is no link


# ---------------------------------------------------------------- mentions kept between runs


@settings(max_examples=150, deadline=None)
def apply_ops(state: dict[str, str], ops: list[tuple[str, str, str, str]]) -> None:
    """Cards written, edited, renamed and deleted between two runs (on the texts by path)."""
    for op, name, other, text in ops:
        path, other_path = f"{name}.md", f"{other}.md"
        if op == "upsert":
            state[path] = text
        elif op == "remove":
            state.pop(path, None)
        elif op == "rename" and path in state and other_path not in state:
            state[other_path] = state.pop(path)


@given(OPS, OPS)
def test_a_rebuild_with_the_last_runs_mentions_equals_a_fresh_one(
    first: list[tuple[str, str, str, str]], then: list[tuple[str, str, str, str]]
) -> None:
    """Cards written, edited, renamed and deleted between two runs: the second run's graph,
    built with the first run's mentions, is the graph built from scratch."""

    state: dict[str, str] = {}
    apply_ops(state, first)
    cache = LinkGraph.build(cards(state)).mention_cache()
    apply_ops(state, then)
    again = LinkGraph.build(cards(state), mentions=cache)
    assert snapshot(again) == snapshot(LinkGraph.build(cards(state)))
    assert again.mentions_found <= len(state)


def test_mentions_are_searched_again_only_where_they_can_change() -> None:
    g = LinkGraph.build(cards(VAULT))
    assert g.mentions_found == len(VAULT)
    cache = g.mention_cache()
    same = LinkGraph.build(cards(VAULT), mentions=cache)
    assert same.mentions_found == 0
    assert snapshot(same) == snapshot(g)
    # a new card whose title "Lonely" is named in one card: that card and the new one only
    spec = VAULT | {"Postings.md": "Lists of documents.", "Lonely.md": "No postings here."}
    again = LinkGraph.build(cards(spec), mentions=cache)
    assert again.mentions_found == 3  # Postings.md (new), Lonely.md (edited), Inverted index.md
    assert snapshot(again) == snapshot(LinkGraph.build(cards(spec)))
    # another minimum length or format: nothing reused
    assert LinkGraph.build(cards(VAULT), mentions=cache, mention_min_length=4).mentions_found == 5


def test_mentions_round_trip_through_the_database(tmp_path) -> None:
    from zettel_lsp.graph.rows import load_mentions, save_mentions
    from zettel_lsp.index.db import IndexDB

    db = IndexDB(tmp_path)
    try:
        assert load_mentions(db) is None
        g = LinkGraph.build(cards(VAULT))
        save_mentions(db, g.mention_cache())
        loaded = load_mentions(db)
        assert loaded is not None and loaded.cards == g.mention_cache().cards
        again = LinkGraph.build(cards(VAULT), mentions=loaded)
        assert again.mentions_found == 0 and snapshot(again) == snapshot(g)
    finally:
        db.close()


# ---------------------------------------------------------------- queries


def joined(g: LinkGraph, mentions: bool = False) -> set[tuple[str, str]]:
    """(source, target) of every link and embed (and ``mentions``), from the cards' lists."""
    pairs = {(p, rl.target) for p in g.cards for rl in g.links_of(p) if rl.target is not None}
    if mentions:
        pairs.update((p, m.target) for p in g.cards for m in g.mentions_of(p))
    return pairs


def hops(pairs: set[tuple[str, str]], start: str) -> dict[str, int]:
    """Undirected breadth-first distances from ``start`` over ``pairs``."""
    dist, front = {start: 0}, [start]
    while front:
        nxt = []
        for node in front:
            for u, v in pairs:
                other = v if u == node else u if v == node else None
                if other is not None and other not in dist:
                    dist[other] = dist[node] + 1
                    nxt.append(other)
        front = nxt
    return dist


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_queries_agree_with_the_cards_links_and_mentions(
    ops: list[tuple[str, str, str, str]],
) -> None:
    state: dict[str, str] = {}
    apply_ops(state, ops)
    g = LinkGraph.build(cards(state))
    paths = sorted(g.cards)
    pairs = joined(g)
    assert g.linked_pairs() == {(u, v) for u, v in pairs if u != v}
    for p in paths:
        near = {v for u, v in pairs if u == p} | {u for u, v in pairs if v == p}
        assert g.neighbours(p) == near - {p}, p
        assert g.backlinks(p) == sorted({u for u, v in pairs if v == p and u != p})
        assert g.outgoing(p) == sorted({v for u, v in pairs if u == p and v != p})
        for others in [set(), {p}, set(paths[:2]), set(paths[2:])]:
            assert g.touches(p, others) == bool(others & (near - {p}))
        dist = hops(pairs, p)
        for cutoff in range(4):
            assert g.within(p, cutoff) == {q: d for q, d in dist.items() if d <= cutoff}
            for q in paths:
                expected = dist.get(q)
                if expected is not None and expected > cutoff:
                    expected = None
                assert g.distance(p, q, cutoff) == expected, (p, q, cutoff)
    assert g.backlink_counts() == {p: len(g.backlinks(p)) for p in paths}
    with_mentions = joined(g, mentions=True)
    for p in paths:
        out = {v for u, v in with_mentions if u == p}
        inc = {u for u, v in with_mentions if v == p}
        assert g.degree(p) == len(out) + len(inc), p
    counts = g.backlink_counts()
    ranked = sorted(((p, n) for p, n in counts.items() if n), key=lambda x: (-x[1], x[0]))
    assert g.most_linked(3) == ranked[:3]
