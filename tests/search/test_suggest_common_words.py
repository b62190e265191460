"""One-word names that are common words ("rule" for the card "Rule") are not offered as links
unless the vault links them often (issue #45, item 6); the reasons of related cards in plain
words."""

from __future__ import annotations

from tests.conftest import shared_vault
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.suggest.legs import DEFAULT_SUGGEST_FUSION, SuggestionLegs
from zettel_lsp.search.suggest.mentions import (
    SHOWN,
    common_word,
    linked_targets,
    mention_confidence,
    mention_evidence,
    mention_suggestions,
    rank_mentions,
    ranked_mentions,
)
from zettel_lsp.search.suggest.names import inflected, labelled, named_as_common_words
from zettel_lsp.search.suggest.reasons import reason

NAMERS = 40  # cards that write "rule" and "point" without a link, half of them "court"


def common_words_vault() -> LinkGraph:
    """The card Rule is linked by 3 of the 43 cards that name it, Court by one of 21, Point by
    two of 42 (both with the label "points"): all three shown by the mention confidence alone.
    Scrum is linked by four of five."""
    spec = {
        "Rule.md": "# Rule\n\nControl by a person with power.\n",
        "Point.md": "# Point\n",
        "Scrum.md": "# Scrum\n",
        "Court.md": "# Court\n",
        "Links/C.md": "A [[Court]].\n",
        "Links/P1.md": "It makes two [[Point|points]] clear.\n",
        "Links/P2.md": "Both [[Point|points]] hold.\n",
    }
    for i in range(3):
        spec[f"Links/R{i}.md"] = "See [[Rule]].\n"
    for i in range(NAMERS):
        court = " of the court" if i % 2 else ""
        spec[f"Notes/Note {i}.md"] = f"Note {i} makes a point under a rule{court}.\n"
    for i in range(4):
        spec[f"Teams/Team {i}.md"] = f"Team {i} runs [[Scrum]].\n"
    spec["Teams/Team 4.md"] = "Team 4 runs scrum too.\n"
    return LinkGraph.build(parse_card(p, t) for p, t in spec.items())


NAME_LEGS = {"inflections": inflected, "labels": labelled}
DRAFT = "By this rule the court makes two points; scrum helps. A Rule, with a capital."


def test_a_common_one_word_name_needs_a_capital_or_a_vault_that_links_it() -> None:
    g = common_words_vault()
    draft = parse_card("Draft.md", DRAFT.replace("A Rule, with a capital.", ""))
    ranked = ranked_mentions(g, draft)
    # "rule" (linked by 3 of 43) and "court" (1 of 21) are common words; "scrum" is not
    for path, said in (("Rule.md", "rule"), ("Court.md", "court")):
        assert mention_confidence(mention_evidence(g, path, [said])) >= SHOWN
    assert [t.target for t in ranked] == ["Scrum.md"]
    # the related ranking's mention leg keeps them (the editor lists no mentioned card there)
    kept = rank_mentions(g, mention_suggestions(g, draft), common=True)
    assert {t.target for t in kept} == {"Scrum.md", "Rule.md", "Court.md"}
    # written with a capital, as its title is, the name is offered
    ranked = ranked_mentions(g, parse_card("Draft.md", DRAFT))
    assert [t.target for t in ranked] == ["Scrum.md", "Rule.md"]
    assert [m.text for m in ranked[1].mentions] == ["rule", "Rule"]


def test_a_card_named_only_by_a_common_word_is_not_listed_as_related() -> None:
    g = common_words_vault()
    draft = parse_card("Draft.md", DRAFT)
    exclude = linked_targets(g, draft) | {draft.path}
    # "points": the label two cards' links give Point, and Point in another number
    via = {leg: dict(find(g, draft, exclude)) for leg, find in NAME_LEGS.items()}
    assert via["labels"] == via["inflections"] == {"Point.md": ["points"]}
    assert named_as_common_words(g, via) == {"Point.md"}
    # once the vault links Point where it names it, "points" is a name for it
    for i in range(NAMERS):
        g.upsert(parse_card(f"Notes/Note {i}.md", f"Note {i} makes a [[Point|point]]."))
    assert named_as_common_words(g, via) == set()


def test_common_word_rule() -> None:
    assert common_word(["rule"], 1, 30) and common_word(["rule", "rule"], 0, 5)
    assert not common_word(["rule"], 4, 30)  # linked often enough
    assert not common_word(["rule", "Rule"], 1, 30)  # once with a capital
    assert not common_word(["rule of law"], 0, 30) and not common_word(["c++"], 0, 30)
    assert not common_word(["rule"], 0, 0)  # no judgement of the vault's yet
    assert not common_word([], 0, 30)


CASTE = "Analysis of Caste.md"


def test_analysis_of_caste_gets_no_common_words() -> None:
    cards, _ = load_vault(shared_vault("vaultofknowledge"))
    g = LinkGraph.build(cards)
    card = g.cards[CASTE]
    named = {t.target_title for t in ranked_mentions(g, card)}
    assert not named & {"Rule", "Court"}
    exclude = linked_targets(g, card) | {CASTE}
    via = {leg: dict(find(g, card, exclude)) for leg, find in NAME_LEGS.items()}
    assert {"Point", "Rule"} <= {g.cards[p].title for p in named_as_common_words(g, via)}


def test_reasons_are_plain_words() -> None:
    g = LinkGraph.build(
        parse_card(p, t)
        for p, t in {"Fermion.md": "x", "Hub.md": "[[Fermion]] [[Boson]]", "Boson.md": "y"}.items()
    )
    fusion = DEFAULT_SUGGEST_FUSION

    def why(leg: str, via: list[str] | None, text: str = "") -> str:
        legs = SuggestionLegs({leg: ["Fermion.md"]}, {}, {leg: {"Fermion.md": via}} if via else {})
        return reason(g, "Fermion.md", legs, fusion, text)

    assert why("inflections", ["fermions"]) == "mentions «fermions»"
    assert why("mentions", ["fermion"]) == "mentions «fermion»"
    assert why("short_names", ["FD"]) == "mentions «FD»"
    assert why("labels", ["spin-half"]) == "mentions «spin-half», as other notes' links call it"
    assert why("cocitation", ["Hub.md"]) == "linked together with this note in Hub"
    assert why("backlinks", None) == "links to this note"
    assert why("dense", None, "Half-integer spin.") == "similar passage: «Half-integer spin.»"
