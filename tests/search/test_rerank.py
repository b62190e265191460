"""Graph rerank on hand-built graphs where the answer is known."""

from __future__ import annotations

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import light_stem
from zettel_lsp.search.rerank import HubLine, RerankParams, evidence, graph_rerank

CARDS = {
    "Levain.md": "# Levain\nA levain is an off-shoot of the starter, fed and left to ripen before "
    "it leavens the dough.\n",
    "Bread index.md": "# Bread index\n- [[Levain]]\n- [[Levain|levain builds]]\n- [[Crumb]]\n",
    "See also.md": "# See also\nFor the levain, see [[Levain]].\n",
    "Proofing.md": "# Proofing\nThe final rise. A ripe levain makes it faster; watch the dough.\n",
    "Crumb.md": "# Crumb\nOpen crumb needs strong gluten.\n",
    "Mentioner.md": "# Mentioner\nSomething about levain here.\n",
}


def graph() -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in CARDS.items())


def result(path: str, score: float, g: LinkGraph) -> CardResult:
    lines = CARDS[path].count("\n")
    chunk = {"path": path, "title": g.cards[path].title, "line_start": 0, "line_end": lines}
    return CardResult(path, score, chunk, {"bm25": 1})


def test_evidence_separates_own_prose_from_mentions() -> None:
    g = graph()
    terms = {"levain"}
    hub = evidence(g, result("Bread index.md", 1.0, g), terms)
    # "[[Levain]]" once, "[[Levain|levain builds]]" twice: all inside links
    assert hub is not None and hub.own == 0 and hub.in_mentions == 3 and hub.share == 1.0
    assert dict(hub.targets) == {"Levain.md": 3.0}
    about = evidence(g, result("Levain.md", 1.0, g), terms)
    assert about is not None and about.share == 0.0 and about.own == 3 + 2  # title x3 + prose
    pointer = evidence(g, result("See also.md", 1.0, g), terms)
    # "For the levain" names the Levain card in prose (an unlinked mention), "[[Levain]]" links
    assert pointer is not None and pointer.share == 1.0
    mixed = evidence(g, result("Proofing.md", 1.0, g), {"levain", "dough"})
    # "a ripe levain" (a mention) and "watch the dough" (its own prose): half and half
    assert mixed is not None and mixed.share == 0.5
    prose = evidence(g, result("Mentioner.md", 1.0, g), terms)
    # "levain" in Mentioner is an unlinked mention of the Levain card
    assert prose is not None and prose.share == 1.0 and dict(prose.targets) == {"Levain.md": 1.0}


def test_hub_that_only_lists_the_title_drops_below_the_card_about_it() -> None:
    g = graph()
    fused = [
        result("Bread index.md", 0.033, g),
        result("See also.md", 0.032, g),
        result("Levain.md", 0.031, g),
        result("Proofing.md", 0.030, g),
    ]
    out = graph_rerank(fused, g, ["levain"], title_matches={"Levain.md": "exact"})
    assert out[0].path == "Levain.md"
    assert out[0].notes["credit"] > 0
    hub = next(r for r in out if r.path == "Bread index.md")
    assert hub.notes["mention_share"] == 1.0 and hub.score < 0.033
    # Proofing's own prose mentions levain without linking: an unlinked mention, share 1.0,
    # discounted less than a link (proximity 0.6)
    proof = next(r for r in out if r.path == "Proofing.md")
    assert proof.notes["discount"] > hub.notes["discount"]


def test_cards_with_their_own_matching_prose_keep_their_score() -> None:
    g = graph()
    fused = [result("Levain.md", 0.05, g), result("Crumb.md", 0.04, g)]
    out = graph_rerank(fused, g, ["crumb", "gluten"], title_matches={"Crumb.md": "covers"})
    assert [r.path for r in out] == ["Levain.md", "Crumb.md"]
    crumb = next(r for r in out if r.path == "Crumb.md")
    assert crumb.score == 0.04 and "discount" not in crumb.notes


def test_only_cards_the_query_names_are_targets() -> None:
    g = graph()
    fused = [
        result("Bread index.md", 0.033, g),
        result("Proofing.md", 0.030, g),
        result("Levain.md", 0.02, g),
    ]
    # Levain is a candidate, but the query does not name it: nothing moves
    out = graph_rerank(fused, g, ["levain"])
    assert [r.score for r in out] == [0.033, 0.030, 0.02]
    fused = fused[:2]
    # as a title match, it is credited and added with its first chunk
    out = graph_rerank(
        fused,
        g,
        ["levain"],
        title_matches={"Levain.md": "exact"},
        first_chunk=lambda p: {"path": p, "title": "Levain", "line_start": 0, "line_end": 2},
    )
    assert "Levain.md" in [r.path for r in out]
    assert next(r for r in out if r.path == "Bread index.md").score < 0.033


def test_strength_zero_is_the_identity() -> None:
    g = graph()
    fused = [result("Bread index.md", 0.033, g), result("Levain.md", 0.031, g)]
    out = graph_rerank(
        fused,
        g,
        ["levain"],
        title_matches={"Levain.md": "exact"},
        params=RerankParams(strength=0.0),
    )
    assert [(r.path, r.score) for r in out] == [("Bread index.md", 0.033), ("Levain.md", 0.031)]


def test_titles_found_inside_a_longer_query_are_not_targets() -> None:
    g = graph()
    fused = [result("Bread index.md", 0.033, g), result("Levain.md", 0.031, g)]
    out = graph_rerank(fused, g, ["levain"], title_matches={"Levain.md": "inside"})
    assert [r.score for r in out] == [0.033, 0.031]


# ---------------------------------------------------------------- hub lines (issue #15)

SORTING = {
    "Sorting algorithms.md": "# Sorting algorithms\n"
    "- [[Merge sort]]: split the list in halves, sort each half, merge them\n"
    "- [[Quicksort]]: pick a pivot, partition around it, recurse on both sides\n",
    "Merge sort.md": "# Merge sort\nDivide and conquer: the two halves are sorted recursively, "
    "then combined in one linear pass.\n",
    "Quicksort.md": "# Quicksort\nPartition around a pivot element.\n",
    "Essay.md": "# Essay\nTo sort a list, split it and merge the parts; see [[Merge sort]] for one "
    "way to do it.\n",
}
GLOSS = ["split", "list", "halves", "sort", "each", "half", "merge"]


def sorting_graph(cards: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in cards.items())


def hit(path: str, score: float, cards: dict[str, str], g: LinkGraph) -> CardResult:
    chunk = {
        "path": path,
        "title": g.cards[path].title,
        "line_start": 0,
        "line_end": cards[path].count("\n"),
    }
    return CardResult(path, score, chunk, {"bm25": 1})


def test_a_hub_line_credits_the_card_it_links() -> None:
    g = sorting_graph(SORTING)
    terms = {light_stem(w) for w in GLOSS}
    hub = evidence(g, hit("Sorting algorithms.md", 1.0, SORTING, g), terms)
    # the gloss of the Merge sort line holds the query's terms (not "Merge sort" itself, the
    # title rule's) but "sort", a word of the hub's own title "Sorting algorithms" (its topic,
    # not a gloss); the Quicksort line holds none
    assert hub is not None
    assert dict(hub.lines) == {1: HubLine(("Merge sort.md",), frozenset(terms - {"sort"}), 10)}
    fused = [
        hit("Sorting algorithms.md", 0.033, SORTING, g),
        hit("Merge sort.md", 0.025, SORTING, g),
        hit("Quicksort.md", 0.020, SORTING, g),
        hit("Essay.md", 0.019, SORTING, g),
    ]
    out = graph_rerank(fused, g, GLOSS)
    order = [r.path for r in out]
    assert order[0] == "Merge sort.md", [(r.path, r.score) for r in out]
    assert order.index("Sorting algorithms.md") <= 2  # still near the top: partly relevant
    # prose that links in passing is not a hub line: the essay keeps its score
    assert next(r for r in out if r.path == "Essay.md").score == 0.019
    off = graph_rerank(fused, g, GLOSS, params=RerankParams(line_credit=0.0))
    assert [r.score for r in off] == [r.score for r in fused]


def test_a_hub_of_a_hundred_links_spreads_its_credit_and_collects_none() -> None:
    cards = {f"Topic {i}.md": f"# Topic {i}\nAbout topic number {i}.\n" for i in range(100)}
    cards["Index.md"] = "# Index\n" + "".join(
        f"- [[Topic {i}]]: notes on this subject\n" for i in range(100)
    )
    # a hundred cards link the index from a list line with no gloss that matches
    for i in range(100):
        cards[f"Topic {i}.md"] += "- [[Index]]\n"
    g = sorting_graph(cards)
    fused = [hit("Index.md", 0.033, cards, g)] + [
        hit(f"Topic {i}.md", 0.030 - i * 1e-5, cards, g) for i in range(20)
    ]
    out = graph_rerank(fused, g, ["notes", "subject"])
    by = {r.path: r for r in out}
    # the index's match is spread over 100 lines: no single topic gains more than 1/100 of it
    gains = [by[f"Topic {i}.md"].score - (0.030 - i * 1e-5) for i in range(20)]
    assert max(gains) <= RerankParams().line_credit * 0.033 / 100 + 1e-12
    # and the index, linked from a hundred list lines, collects no credit: their words do not
    # match the query
    assert "credit" not in by["Index.md"].notes
    assert by["Index.md"].score < 0.033


def test_cards_without_hub_lines_are_unaffected() -> None:
    cards = {
        "A.md": "# A\nMerge the halves after sorting each one.\n",
        "B.md": "# B\nSplit the list, see [[A]] for the merge.\n",
    }
    g = sorting_graph(cards)
    fused = [hit("A.md", 0.03, cards, g), hit("B.md", 0.02, cards, g)]
    out = graph_rerank(fused, g, GLOSS)
    assert [(r.path, r.score) for r in out] == [("A.md", 0.03), ("B.md", 0.02)]


def test_a_card_the_query_names_keeps_its_hub_lines() -> None:
    """The query names the card ("Command palette ..."): its list lines are its own topic, not
    glosses handing the match to the cards they link."""
    cards = {
        "Command palette.md": "# Command palette\n"
        "- [[Ribbon]]: run commands from the palette with Ctrl+P or the ribbon\n",
        "Ribbon.md": "# Ribbon\nThe bar of icons on the left.\n",
    }
    g = sorting_graph(cards)
    fused = [hit("Command palette.md", 0.033, cards, g), hit("Ribbon.md", 0.02, cards, g)]
    words = ["command", "palette", "run", "commands", "ctrl"]
    named = graph_rerank(fused, g, words, title_matches={"Command palette.md": "covers"})
    assert [(r.path, r.score) for r in named] == [
        ("Command palette.md", 0.033),
        ("Ribbon.md", 0.02),
    ]
    # the same line credits the Ribbon when the query does not name the palette
    unnamed = graph_rerank(fused, g, ["run", "commands", "ctrl", "ribbon", "icons"])
    assert next(r for r in unnamed if r.path == "Ribbon.md").score > 0.02


def test_a_title_named_in_a_gloss_is_part_of_the_gloss() -> None:
    """ "collection" is another card's title, so the text around it is a mention span; on a hub
    line it is still the gloss's word, and it decides which line describes the query."""
    cards = {
        "Venn diagrams.md": "# Venn diagrams\n"
        "- [[Outcome|Outcomes]] are expressed as dots\n"
        "- [[Event|Events]] are expressed as a collection of dots\n",
        "Outcome.md": "# Outcome\nA result of an experiment.\n",
        "Event.md": "# Event\nA set of outcomes.\n",
        "Collection.md": "# Collection\nA group of things.\n",
    }
    g = sorting_graph(cards)
    fused = [hit("Venn diagrams.md", 0.033, cards, g), hit("Outcome.md", 0.02, cards, g)]
    out = graph_rerank(
        fused,
        g,
        ["expressed", "collection", "dots"],
        first_chunk=lambda p: hit(p, 0, cards, g).chunk,
    )
    assert out[0].path == "Event.md", [(r.path, r.score) for r in out]


def test_query_words_are_split_as_the_text_is() -> None:
    """The query keeps "non-null" whole; the text's words are "non" and "null"."""
    cards = {
        "Equals.md": "# Equals\n"
        "- [[Reflexive]]: for any non-null object, x equals x\n"
        "- [[Symmetric]]: any object\n",
        "Reflexive.md": "# Reflexive\nEvery element relates to itself.\n",
        "Symmetric.md": "# Symmetric\nIf a relates to b, b relates to a.\n",
    }
    g = sorting_graph(cards)
    fused = [hit("Equals.md", 0.033, cards, g)]
    out = graph_rerank(
        fused, g, ["non-null", "object"], first_chunk=lambda p: hit(p, 0, cards, g).chunk
    )
    assert out[0].path == "Reflexive.md", [(r.path, r.score) for r in out]


def test_the_lift_raises_a_card_above_a_weak_hub_by_how_much_its_line_covers() -> None:
    """A hub far down the list (its long chunk matches the query only through one line) holds
    the whole query in one gloss: with ``line_lift`` its card may rise past the hub's own score,
    toward the best candidate's, by the line's cover; without it, at most to the hub's score."""
    cards = dict(SORTING)
    cards["Other.md"] = "# Other\nA list of halves, each sorted.\n"
    g = sorting_graph(cards)
    fused = [
        hit("Other.md", 0.030, cards, g),
        hit("Essay.md", 0.029, cards, g),
        hit("Sorting algorithms.md", 0.010, cards, g),
        hit("Merge sort.md", 0.005, cards, g),
    ]

    def rerank(params: RerankParams, words: list[str] = GLOSS) -> tuple[float, float]:
        """Merge sort's score and the hub's cover."""
        by = {r.path: r for r in graph_rerank(fused, g, words, params=params)}
        return by["Merge sort.md"].score, float(by["Sorting algorithms.md"].notes["line_cover"])

    # no lift: the card rises at most to its hub's score before the rerank
    assert rerank(RerankParams(line_lift=0.0, line_credit=10.0))[0] == 0.010
    # the gloss holds every query term but "sort" (a word of the hub's title)
    lifted, cover = rerank(RerankParams(line_lift=1.0, line_credit=10.0))
    assert 0.5 < cover < 1.0
    assert abs(lifted - (0.010 + cover * (0.030 - 0.010))) < 1e-4
    assert lifted < 0.030  # lift 1: below the top unless the line holds the whole query
    # the credit itself still bounds the rise (line_credit * cover * the hub's score)
    bounded, _ = rerank(RerankParams(line_lift=2.0, line_credit=1.0))
    assert abs(bounded - (0.005 + 1.0 * cover * 0.010)) < 1e-4
    # a line holding fewer of the query's terms lifts less
    partial, less = rerank(
        RerankParams(line_lift=1.0, line_credit=10.0), ["split", "halves", "each", "quantum"]
    )
    assert less < cover
    assert abs(partial - (0.010 + less * (0.030 - 0.010))) < 1e-4
    # below line_cover nothing happens, lift or not
    out = graph_rerank(fused, g, GLOSS, params=RerankParams(line_lift=1.0, line_cover=0.95))
    assert [(r.path, r.score) for r in out] == [(r.path, r.score) for r in fused]
