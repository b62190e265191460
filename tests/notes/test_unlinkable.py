"""Where a mention must not become a link (issue #14): URLs, other links, HTML, math, headings.

The unit cases name each mask; the property test applies every suggested mention to random notes
built from those pieces and re-parses them: no existing link or URL changes, and the note has its
old links plus exactly the new ones.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.masking import (
    html_tag_spans,
    math_spans,
    reference_link_spans,
    unlinkable_spans,
    url_spans,
)
from zettel_lsp.notes.mentions import unlinkable
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search.suggest import mention_suggestions

VAULT = {
    "Drama.md": "---\naliases: [Principles]\n---\n- Not caring about the laws of physics\n",
    "Agile.md": "---\naliases: [agile manifesto]\n---\nA way of working.\n",
    "Scrum.md": "Sprints.\n",
    "Lean.md": "Flow.\n",
    "Linear.md": "Straight.\n",
    "Org.md": "An org.\n",
}


def graph() -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in VAULT.items())


def mentioned(text: str) -> list[str]:
    draft = parse_card("Draft.md", text)
    return [m.text for m in mention_suggestions(graph(), draft)]


def cut(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[s:e] for s, e in spans]


def test_the_agile_md_link_destination_is_never_rewritten() -> None:
    """The reported case: "Link all" made ``.../[[Drama|principles]].html`` of a link."""
    text = (
        "The [agile manifesto](https://agilemanifesto.org/principles.html) describes 12 "
        "principles.\n"
    )
    got = mention_suggestions(graph(), parse_card("Draft.md", text))
    assert [(m.text, m.start) for m in got] == [("principles", text.rindex("principles"))]


def test_bare_urls_autolinks_and_www_are_not_mentions() -> None:
    text = (
        "See https://example.org/scrum/lean?x=agile#linear and www.lean.org/scrum, "
        "<https://scrum.org/lean> or mailto:lean@scrum.org, then Scrum.\n"
    )
    assert mentioned(text) == ["Scrum"]
    assert cut(text, url_spans(text)) == [
        "https://example.org/scrum/lean?x=agile#linear",
        "www.lean.org/scrum,",
        "https://scrum.org/lean",
        "mailto:lean@scrum.org,",
    ]


def test_html_tags_and_attributes_are_masked_but_not_their_text() -> None:
    text = '<a href="scrum.html" title="Lean">Agile</a> a < b and <br/>\n\n<div lean\n\nx>\n'
    assert cut(text, html_tag_spans(text)) == [
        '<a href="scrum.html" title="Lean">',
        "</a>",
        "<br/>",
    ]
    assert mentioned(text) == ["Agile", "lean"]  # a blank line before ">": "<div lean" is prose


def test_math_inline_and_blocks_but_not_prices() -> None:
    text = "Let $lean + scrum$ be.\n$$\n\\text{Agile}\n$$\nIt costs $10 or $20 in Lean.\n"
    assert cut(text, math_spans(text)) == ["$lean + scrum$", "$$\n\\text{Agile}\n$$"]
    assert mentioned(text) == ["Lean"]
    assert math_spans("a \\$lean$ b") == []  # an escaped dollar opens nothing


def test_reference_definitions_and_reference_links() -> None:
    text = (
        "Read [the scrum guide][guide], [Lean][] and [guide].\n"
        "[guide]: https://scrumguides.org/scrum.html 'Scrum guide'\n"
        '[lean]: <https://lean.org> "Lean"\n'
        "[^1]: A footnote about Agile.\n"
    )
    assert cut(text, reference_link_spans(text)) == [
        "[the scrum guide][guide]",
        "[Lean][]",
        "[guide]",
        "[guide]: https://scrumguides.org/scrum.html 'Scrum guide'",
        '[lean]: <https://lean.org> "Lean"',
    ]
    assert mentioned(text) == ["Agile"]


def test_headings_tags_front_matter_and_other_markdown_links() -> None:
    text = (
        "---\ntitle: Draft about Scrum\ntags: [lean]\n---\n# Agile and Scrum\n"
        "Body with #lean and #agile/scrum, ![Lean](lean.png) and [Scrum](https://scrum.org).\n"
        "## Lean ##\nAgile here.\n"
    )
    # the title line is masked; a section heading is offered, but never linked in bulk
    got = mention_suggestions(graph(), parse_card("Draft.md", text))
    assert [(m.text, m.in_heading) for m in got] == [("Lean", True), ("Agile", False)]


def test_a_dotted_token_is_one_word_hyphens_and_slashes_separate_words() -> None:
    text = "Node.js, org.lean, site.org/principles and agilemanifesto.org/lean.html here"
    assert mentioned(text) == []
    assert mentioned("non-linear, lean-ish, scrum/kanban, Linear.") == [
        "linear",
        "lean",
        "scrum",
        "Linear",
    ]
    assert mentioned("Lean's flow and (Scrum) - Agile.") == ["Lean", "Scrum", "Agile"]


def test_unlinkable_covers_the_parser_masks_and_links() -> None:
    text = "`Lean` [[Scrum]] <!-- Agile --> https://lean.org Lean\n"
    card = parse_card("Draft.md", text)
    spans = unlinkable(card)
    assert cut(text, spans) == ["`Lean`", "[[Scrum]]", "<!-- Agile -->", "https://lean.org"]
    assert unlinkable_spans("") == []


# ------------------------------------------------------------------ property: link all is safe

URLS = [
    "https://agilemanifesto.org/principles.html",
    "http://lean.org/Scrum_(software)",
    "www.scrum.org/agile",
    "<https://example.org/lean>",
]
PIECES = [
    "Agile",
    "agile",
    "Scrum",
    "lean",
    "principles",
    "Linear",
    "org",
    "the",
    "non-linear",
    "[agile manifesto](https://agilemanifesto.org/principles.html)",
    "[Scrum](Scrum.md)",
    "[the lean way](Lean.md)",
    "[[Drama|principles]]",
    "[[Lean]]",
    "![[Scrum]]",
    "[[Missing page]]",
    '<a href="agile.html">',
    "</a>",
    "`scrum`",
    "$lean$",
    "#agile",
    "(Scrum)",
    "\n# Agile heading\n",
    "\n```\nScrum\n```\n",
    "\n[ref]: https://lean.org/agile\n",
    "[Agile][ref]",
    "$$\nScrum\n$$",
    *URLS,
]


def _link_keys(text: str) -> Counter[tuple[str, str, str | None]]:
    return Counter((ln.kind.value, ln.target, ln.label) for ln in parse_card("P.md", text).links)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.sampled_from(PIECES), st.sampled_from([" ", " ", "\n", ". ", ", ", "\n\n"])),
        max_size=25,
    )
)
def test_linking_every_mention_keeps_links_and_urls(parts: list[tuple[str, str]]) -> None:
    text = "".join(p + sep for p, sep in parts)
    g = graph()
    card = parse_card("P.md", text)
    suggestions = mention_suggestions(g, card)
    new = text
    for m in sorted(suggestions, key=lambda m: m.start, reverse=True):
        assert text[m.start : m.end] == m.text
        new = new[: m.start] + m.replacement + new[m.end :]
    # the note re-parses with the same links plus the new ones, each to its card
    before, after = _link_keys(text), _link_keys(new)
    added = after - before
    assert before <= after
    assert sum(added.values()) == len(suggestions)

    def targets(t: str) -> Counter[str | None]:
        return Counter(g.resolve_link(ln, "P.md").target for ln in parse_card("P.md", t).links)

    assert targets(new) - targets(text) == Counter(m.target for m in suggestions)
    # no URL changes
    for url in URLS:
        assert new.count(url) == text.count(url), url


def test_the_masks_are_linear_on_adversarial_input() -> None:
    """Each scan of unlinkable_spans, timed on a unit repeated n and 8n times (as in
    test_regex_linear.py): linear work grows ~8x, quadratic ~64x. Past a floor of 0.5 s only:
    on a busy machine short timings jump; a quadratic scan of ~100,000 characters takes
    seconds."""
    import time

    def once(text: str) -> float:
        t = time.perf_counter()
        unlinkable_spans(text)
        return time.perf_counter() - t

    units = ["<a ", "<a <a >", "$a ", "$$ $a", "[a][", "[x]: y\n[x]", "://", "a://", "www.",
             "# a\n", "a <b\n\n", "[a](", "\\$a$ "]  # fmt: skip
    for unit in units:
        small, large = unit * 2000, unit * 16000
        t1 = min(once(small) for _ in range(3))
        t2 = min(once(large) for _ in range(3))
        assert t2 < 0.5 or t2 / max(t1, 1e-6) < 32, (unit, t1, t2)
