"""The legs of the related-card ranking (issue #15, item 3): graph evidence that is not a title
(co-citation, coupling, hub lines, backlinks), the weighted fusion, and the ranking the server
uses on a real index (co-citation as the only evidence for the right card)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search.suggest.graph_legs import (
    co_cited,
    coupled,
    graph_legs,
    hub_line_neighbours,
    linked_by_similar,
    linking_here,
)
from zettel_lsp.search.suggest.legs import (
    DEFAULT_SUGGEST_FUSION,
    GRAPH_LEGS,
    SUGGEST_LEGS,
    SuggestFusion,
    fuse_suggestions,
    suggestion_legs,
)
from zettel_lsp.search.suggest.mentions import linked_targets
from zettel_lsp.search.suggest.names import (
    inflected,
    inflected_form,
    labelled,
    link_labels,
    short_named,
    short_names,
)
from zettel_lsp.search.suggest.reasons import related_suggestions
from zettel_lsp.vault import Vault


def build(cards: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in cards.items())


def exclude(g: LinkGraph, path: str) -> set[str]:
    return linked_targets(g, g.cards[path]) | {path}


def paths(ranked: list[tuple[str, list[str]]]) -> list[str]:
    return [p for p, _ in ranked]


def test_cocitation_ranks_cards_linked_together_from_the_same_sources() -> None:
    g = build(
        {
            "Src.md": "Nothing linked here.",
            "Target.md": "Unrelated words.",
            "Once.md": "Other words.",
            "Hub1.md": "[[Src]] and [[Target]] and [[Once]]",
            "Hub2.md": "[[Src]] then [[Target]]",
            "Lone.md": "[[Once]] only",
        }
    )
    got = co_cited(g, "Src.md", exclude(g, "Src.md"))
    assert paths(got) == ["Target.md", "Once.md"]
    assert dict(got)["Target.md"] == ["Hub1.md", "Hub2.md"]
    # a source with fewer links counts more: Small (2 links) outweighs Big (5 links)
    g2 = build(
        {
            "Src.md": "x",
            "A.md": "a",
            "B.md": "b",
            **{f"{n}.md": n for n in "CDE"},
            "Big.md": "[[Src]] [[A]] [[C]] [[D]] [[E]]",
            "Small.md": "[[Src]] [[B]]",
        }
    )
    assert paths(co_cited(g2, "Src.md", {"Src.md"}))[0] == "B.md"


def test_coupling_ranks_cards_that_link_the_same_targets() -> None:
    g = build(
        {
            "Src.md": "[[A]] and [[B]]",
            "A.md": "a",
            "B.md": "b",
            "Both.md": "[[A]] [[B]]",
            "OnlyA.md": "[[A]]",
            "Elsewhere.md": "[[Other]]",
            "Other.md": "o",
        }
    )
    got = coupled(g, "Src.md", exclude(g, "Src.md"))
    assert paths(got) == ["Both.md", "OnlyA.md"]
    assert dict(got)["Both.md"] == ["A.md", "B.md"]
    # the card's current links decide, not the graph's copy of it
    assert coupled(g, "Src.md", {"Src.md"}) == []


def test_hub_lines_same_line_or_adjacent_list_items_only() -> None:
    hub = (
        "# Hub\n"
        "- [[Src]] with [[Same]]\n"
        "- [[Next]]\n"
        "\n"
        "- [[Far]]\n"
        "Prose with [[Src]].\n"
        "Prose after with [[ProseNext]].\n"
        "| [[Src]] | x |\n"
        "| [[Row]] | y |\n"
    )
    g = build(
        {
            "Hub.md": hub,
            "Src.md": "s",
            **{f"{n}.md": n for n in ("Same", "Next", "Far", "ProseNext", "Row")},
        }
    )
    got = dict(hub_line_neighbours(g, "Src.md", exclude(g, "Src.md")))
    assert set(got) == {"Same.md", "Next.md", "Row.md"}
    ranked = paths(hub_line_neighbours(g, "Src.md", exclude(g, "Src.md")))
    assert ranked[0] == "Same.md"  # same line: 1, adjacent item: 0.5
    assert got["Next.md"] == ["Hub.md"]


def test_backlinks_leg_lists_cards_linking_here_that_are_not_linked_back() -> None:
    g = build(
        {
            "Src.md": "[[Mutual]]",
            "Mutual.md": "[[Src]]",
            "Short.md": "[[Src]]",
            "Long.md": "[[Src]] [[A]] [[B]] [[C]]",
            **{f"{n}.md": n for n in "ABC"},
        }
    )
    assert paths(linking_here(g, "Src.md", exclude(g, "Src.md"))) == ["Short.md", "Long.md"]


def test_graph_legs_use_links_never_titles() -> None:
    g = build({"Src.md": "Target is named but not linked.", "Target.md": "t", "X.md": "[[Src]]"})
    legs = graph_legs(g, "Src.md", exclude(g, "Src.md"))
    assert set(legs) == set(GRAPH_LEGS) - {"similar_links", "labels"}  # need the index, the text
    assert all("Target.md" not in paths(r) for r in legs.values())


def test_labels_find_a_card_named_as_other_cards_links_name_it() -> None:
    g = build(
        {
            "Web.md": "Call the API over the mains. See [[HTTP]].",
            "Application Programming Interface.md": "Calls.",
            "Academic Performance Index.md": "Schools.",
            "Alternating Current.md": "Both directions.",
            "HTTP.md": "A protocol.",
            "A.md": "- [[Application Programming Interface|API]]\n- [[Alternating Current|mains]]",
            "B.md": "Use [[Application Programming Interface|API]] here, [[HTTP|the web]].",
            "C.md": "Scores: [[Academic Performance Index|API]], [[Alternating Current|mains]].",
            "E.md": "Also [[Academic Performance Index|API]], once [[HTTP|here]].",
            "D.md": "[[Alternating Current|alternating  current]] again",  # its own name
        }
    )
    labels = link_labels(g)
    assert labels.uses[("api", "Application Programming Interface.md")] == 2
    assert labels.uses[("api", "Academic Performance Index.md")] == 2
    assert labels.total["api"] == 4
    assert ("alternating current", "Alternating Current.md") not in labels.uses  # its name
    assert ("here", "HTTP.md") not in labels.uses  # one card's word
    got = labelled(g, g.cards["Web.md"], exclude(g, "Web.md"))
    # "mains": two of two cards that show it mean Alternating Current; "API": two of four
    assert paths(got) == [
        "Alternating Current.md",
        "Academic Performance Index.md",
        "Application Programming Interface.md",
    ]
    assert dict(got)["Application Programming Interface.md"] == ["API"]
    # a card's own links are no names in it, and a linked card is left out
    assert paths(labelled(g, g.cards["A.md"], exclude(g, "A.md"))) == []
    g.upsert(parse_card("Web.md", "Call the API. See [[Application Programming Interface]]."))
    got = paths(labelled(g, g.cards["Web.md"], exclude(g, "Web.md")))
    assert got == ["Academic Performance Index.md"]


def test_inflected_form_of_a_name_s_last_word() -> None:
    forms = {n: inflected_form(n) for n in ("digital certificate", "logic gates", "query")}
    assert forms == {
        "digital certificate": "digital certificates",
        "logic gates": "logic gate",
        "query": "queries",
    }
    assert inflected_form("patches") == "patch" and inflected_form("box") == "boxes"
    assert inflected_form("analysis") == "analyses" and inflected_form("process") == "processes"
    assert inflected_form("corpus") is None and inflected_form("c++") is None


def test_inflections_find_a_card_named_in_another_number() -> None:
    g = build(
        {
            "Web.md": "Digital Certificates sign. A logic gate, another logic gate. [[Query]]",
            "Digital Certificate.md": "x",
            "Logic Gates.md": "y",
            "Query.md": "z",
            "Queries.md": "a card named in the plural too",
        }
    )
    got = inflected(g, g.cards["Web.md"], exclude(g, "Web.md"))
    assert paths(got) == ["Logic Gates.md", "Digital Certificate.md"]  # twice, then once
    assert dict(got)["Digital Certificate.md"] == ["Digital Certificates"]
    # a form that is a card's own name is a mention, not an inflection ("Queries")
    g.upsert(parse_card("Web.md", "Many queries."))
    assert paths(inflected(g, g.cards["Web.md"], exclude(g, "Web.md"))) == []
    g.upsert(parse_card("Patch.md", "p"))  # a new card is named in the plural at once
    g.upsert(parse_card("Web.md", "Two patches."))
    assert paths(inflected(g, g.cards["Web.md"], exclude(g, "Web.md"))) == ["Patch.md"]


def test_short_names_are_found_as_written() -> None:
    g = build(
        {
            "Net.md": (
                "The OS boots. Each OS has a kernel; the os module and Os are other words.\n"
                "Written in C, not C++ or C#. A DC motor. `OS` in code. See http://x.org/DC.\n"
                "Go home. We write Go daily. os.path, DC.md"
            ),
            "Operating System.md": "---\naliases: [OS]\n---\nx",
            "Direct Current.md": "---\naliases: [DC]\n---\ny",
            "C.md": "the language",
            "Go.md": "the language",
            "ls.md": "a lower-case short name: an everyday word, not looked for",
        }
    )
    got = short_named(g, g.cards["Net.md"], exclude(g, "Net.md"))
    # most often first; "Go" at the start of a sentence is any word, "We write Go" is the name
    assert paths(got) == ["Operating System.md", "C.md", "Direct Current.md", "Go.md"]
    assert dict(got)["Operating System.md"] == ["OS"]
    # a name that comes with a card, and goes with it
    g.upsert(parse_card("Web.md", "UI and UX."))
    assert short_named(g, g.cards["Web.md"], {"Web.md"}) == []
    g.upsert(parse_card("User Interface.md", "---\naliases: [UI]\n---\nz"))
    assert paths(short_named(g, g.cards["Web.md"], {"Web.md"})) == ["User Interface.md"]
    g.remove("User Interface.md")
    assert short_named(g, g.cards["Web.md"], {"Web.md"}) == []
    # a title long enough for the mention pass is left to it
    g.upsert(parse_card("UXD.md", "x"))
    g.upsert(parse_card("Web.md", "UXD"))
    assert short_named(g, g.cards["Web.md"], {"Web.md"}) == []


def test_labels_follow_the_graph_s_changes() -> None:
    g = build(
        {
            "Direct Current.md": "x",
            "Power.md": "Ohm's DCV power.",
            "A.md": "no",
            "B.md": "[[Direct Current|DCV]]",
        }
    )
    assert labelled(g, g.cards["Power.md"], {"Power.md"}) == []  # one card's name for it
    g.upsert(parse_card("A.md", "[[Direct Current|DCV]]"))
    assert paths(labelled(g, g.cards["Power.md"], {"Power.md"})) == ["Direct Current.md"]
    g.remove("A.md")
    assert labelled(g, g.cards["Power.md"], {"Power.md"}) == []


def test_a_save_of_prose_keeps_the_tables_of_links_and_names() -> None:
    g = build({"Direct Current.md": "---\naliases: [DC]\n---\nx", "B.md": "[[Direct Current|DCV]]"})
    labels, short = link_labels(g), short_names(g)
    g.upsert(parse_card("B.md", "Other words. [[Direct Current|DCV]]"))  # prose only
    assert link_labels(g) is labels and short_names(g) is short
    g.upsert(parse_card("B.md", "Other words. [[Direct Current|DC volts]]"))  # a label
    assert link_labels(g) is not labels
    labels, short = link_labels(g), short_names(g)
    g.upsert(parse_card("Direct Current.md", "---\naliases: [DC, CC]\n---\nx"))  # a name
    assert short_names(g) is not short and "CC" in short_names(g).owners
    short = short_names(g)
    g.upsert(parse_card("C.md", "a new card"))  # links may resolve elsewhere now
    assert short_names(g) is not short and link_labels(g) is not labels
    labels = link_labels(g)
    g.remove("C.md")
    assert link_labels(g) is not labels


def test_weighted_rrf_with_depth_and_k() -> None:
    legs = {"a": ["x", "y", "z"], "b": ["z", "y"], "c": ["w"]}
    f = SuggestFusion({"a": 1.0, "b": 1.0}, k=60.0, depth=30)
    assert fuse_suggestions(legs, f) == ["z", "y", "x"]  # z: 1/63+1/61 > y: 1/62+1/62
    # b at half weight: y 1.5/62 > z 1/63+0.5/61
    assert fuse_suggestions(legs, SuggestFusion({"a": 1.0, "b": 0.5})) == ["y", "z", "x"]
    assert fuse_suggestions(legs, SuggestFusion({"a": 1.0, "b": 1.0}, depth=1)) == ["x", "z"]
    assert fuse_suggestions(legs, SuggestFusion({"a": 1.0, "b": 0.0})) == ["x", "y", "z"]
    assert fuse_suggestions(legs, f.only(["c"])) == []  # c has no weight in f
    assert f.without(["a"]).legs == ("b",) and f.only(["a", "c"]).legs == ("a",)
    # k decides how much the top ranks dominate: with k = 0, x's rank 1 (1) beats y (0.75)
    assert fuse_suggestions(legs, SuggestFusion({"a": 1.0, "b": 0.5}, k=0.0)) == ["x", "z", "y"]


def test_a_lead_leg_comes_first_in_its_own_order() -> None:
    legs = {"a": ["x", "y", "z"], "b": ["z", "y"], "lead": ["y", "w"]}
    f = SuggestFusion({"a": 1.0, "b": 1.0, "lead": 0.1}, k=60.0, depth=30, lead="lead")
    assert fuse_suggestions(legs, f) == ["y", "w", "z", "x"]
    # a lead leg without a weight (ablated) leads nothing: the plain fusion
    assert fuse_suggestions(legs, f.without(["lead"])) == ["z", "y", "x"]
    assert fuse_suggestions(legs, replace(f, lead=None)) == ["y", "z", "x", "w"]
    # read to the fusion's depth like every leg
    assert fuse_suggestions(legs, replace(f, depth=1))[:1] == ["y"]
    assert "w" not in fuse_suggestions(legs, replace(f, depth=1))


def test_default_fusion_names_known_legs() -> None:
    assert set(DEFAULT_SUGGEST_FUSION.weights) <= set(SUGGEST_LEGS)
    assert DEFAULT_SUGGEST_FUSION.legs


# ------------------------------------------------------------ a real index, the real model

# Src is about sourdough; Near shares its topic; Target (about tides) is linked together with
# Src from two hub cards and has nothing else in common with it.
CARDS = {
    "Src.md": "# Src\n\nA sourdough loaf rises with a levain of flour and water; bake the dough "
    "in a hot Dutch oven for a crisp crust.",
    "Near.md": "# Near\n\nThe levain is the sourdough starter built for one bake: flour, water "
    "and a spoon of ripe starter, ready to leaven the dough.",
    "Crust.md": "# Crust\n\nA dark crust comes from a hot oven and steam while the loaf bakes.",
    "Target.md": "# Target\n\nTides follow the moon's pull on the oceans, twice a day.",
    "Hub one.md": "# Hub one\n\n- [[Src]]\n- [[Target]]\n",
    "Hub two.md": "# Hub two\n\nSee [[Src]] and [[Target]].\n",
    "Dutch oven.md": "# Dutch oven\n\nA heavy pot with a lid.\n",
    "Namer.md": "# Namer\n\nBake it in a Dutch oven; see Crust.\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    root: Path = tmp_path_factory.mktemp("legs") / "vault"
    root.mkdir()
    for rel, text in CARDS.items():
        (root / rel).write_text(text, encoding="utf-8")
    v = Vault(root, root.parent / "index")
    v.open()
    yield v
    v.close()


def test_cocitation_is_the_only_evidence_for_the_right_card(vault: Vault) -> None:
    card = vault.graph.cards["Src.md"]
    content = SuggestFusion({"dense": 1.0, "bm25": 1.0})
    with_cocitation = SuggestFusion({"dense": 1.0, "bm25": 1.0, "cocitation": 2.0})
    plain = [r.path for r in related_suggestions(vault.engine, card, 10, fusion=content)]
    assert plain[0] != "Target.md"
    assert plain.index("Target.md") > plain.index("Near.md")
    got = related_suggestions(vault.engine, card, 10, fusion=with_cocitation)
    assert got[0].path == "Target.md"
    assert got[0].reason.startswith("linked together with this note in Hub")


def test_legs_exclude_the_card_and_its_links_and_default_ranking_runs(vault: Vault) -> None:
    card = vault.graph.cards["Hub one.md"]
    legs = suggestion_legs(vault.engine, card).rankings
    assert {"dense", "dense_max", "bm25", "cocitation"} <= set(legs)
    for ranking in legs.values():
        assert not {"Hub one.md", "Src.md", "Target.md"} & set(ranking)
    assert legs["cocitation"] == ["Hub two.md"] or "Hub two.md" not in legs["cocitation"]
    got = related_suggestions(vault.engine, card, 3)
    assert got and all(r.reason for r in got)
    assert not {"Hub one.md", "Src.md", "Target.md"} & {r.path for r in got}


def test_similar_links_are_what_the_most_similar_cards_link() -> None:
    g = build(
        {
            "Src.md": "s",
            "Like1.md": "[[Wanted]] [[Common]]",
            "Like2.md": "[[Wanted]]",
            "Unlike.md": "[[Other]] [[Common]]",
            **{f"{n}.md": n for n in ("Wanted", "Common", "Other")},
        }
    )
    got = linked_by_similar(g, ["Like1.md", "Like2.md", "Unlike.md"], {"Src.md"})
    assert paths(got) == ["Wanted.md", "Common.md", "Other.md"]
    assert dict(got)["Wanted.md"] == ["Like1.md", "Like2.md"]
    # the order of similarity counts: the same links, listed by the least similar card only
    assert paths(linked_by_similar(g, ["Unlike.md", "Like2.md"], {"Src.md"}))[0] != "Wanted.md"


def test_mention_legs_rank_named_cards_and_keep_the_confident_apart(vault: Vault) -> None:
    legs = suggestion_legs(vault.engine, vault.graph.cards["Namer.md"], ["mentions", "confident"])
    # a two-word name written as its title is confident; a short single word is only offered
    assert legs.rankings == {
        "mentions": ["Dutch oven.md", "Crust.md"],
        "confident": ["Dutch oven.md"],
    }


def test_unmentioned_leaves_out_the_cards_the_note_names(vault: Vault) -> None:
    """The editor offers named cards as "Link" fixes in place; "Add related links" lists the
    others, in the same order as the full ranking."""
    card = vault.graph.cards["Namer.md"]
    full = [r.path for r in related_suggestions(vault.engine, card, 10)]
    assert {"Dutch oven.md", "Crust.md"} <= set(full)
    shown = [r.path for r in related_suggestions(vault.engine, card, 10, unmentioned=True)]
    assert shown == [p for p in full if p not in {"Dutch oven.md", "Crust.md"}]
