"""Card-level editing helpers: the paragraph at a line, where "Add related links" inserts, and
which names a card already wikilinks. Headings, fences and links are the parser's (one rule each),
including where the server's old private checks (a ```/~~~ toggle, a wikilink regex over the raw
text) differed."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.notes.editing import (
    find_section,
    insert_related,
    paragraph_at,
    paragraph_lines,
    unlinked_names,
    wikilinked_names,
)
from zettel_lsp.notes.parser import parse_card


def apply(text: str, heading: str, names: list[str]) -> str:
    at, new = insert_related(parse_card("A.md", text), heading, names)
    return text[:at] + new + text[at:]


# ------------------------------------------------------------------ paragraph_at


def test_paragraph_is_the_run_of_non_blank_lines() -> None:
    card = parse_card("A.md", "# A\n\nfirst line\nsecond line\n\nother\n")
    assert paragraph_at(card, 2) == (2, 3, "first line\nsecond line")
    assert paragraph_at(card, 3) == (2, 3, "first line\nsecond line")
    assert paragraph_at(card, 5) == (5, 5, "other")
    assert paragraph_at(card, 0) == (0, 0, "# A")


def test_no_paragraph_on_a_blank_line_past_the_end_or_in_the_frontmatter() -> None:
    card = parse_card("A.md", "---\ntitle: A\n---\nbody starts\nhere\n\n   \n")
    assert card.body_start_line == 3
    assert paragraph_at(card, 1) is None  # frontmatter
    assert paragraph_at(card, 5) is None and paragraph_at(card, 6) is None  # blank, spaces only
    assert paragraph_at(card, 99) is None
    # the paragraph right after the frontmatter does not reach into it
    assert paragraph_at(card, 4) == (3, 4, "body starts\nhere")


def test_paragraph_lines_take_the_given_line_blank_or_not() -> None:
    lines = ["a", "b", "", "c", "d"]
    assert paragraph_lines(lines, 1) == (0, 1)
    assert paragraph_lines(lines, 1, first=1) == (1, 1)
    assert paragraph_lines(lines, 2) == (0, 4)  # a blank line joins the lines on both sides


def test_paragraph_of_a_real_card() -> None:
    path = EXAMPLE_VAULT / "retrieval" / "BM25.md"
    text = path.read_text(encoding="utf-8")
    card = parse_card("retrieval/BM25.md", text)
    line = next(i for i, ln in enumerate(text.split("\n")) if "sums one contribution" in ln)
    got = paragraph_at(card, line)
    assert got is not None and got[0] == got[1] == line
    assert got[2].startswith("For a query Q")


# ------------------------------------------------------------------ insert_related


def test_new_section_at_the_end() -> None:
    assert apply("# A\n\nBody.\n", "## Related", ["B", "C"]) == (
        "# A\n\nBody.\n\n## Related\n\n- [[B]]\n- [[C]]\n"
    )
    assert apply("# A\n\nBody.", "## Related", ["B"]) == "# A\n\nBody.\n\n## Related\n\n- [[B]]\n"
    assert apply("# A\n\n", "## Related", ["B"]) == "# A\n\n## Related\n\n- [[B]]\n"
    assert apply("", "## See also", ["B"]) == "## See also\n\n- [[B]]\n"


def test_appends_to_an_existing_section_before_the_next_heading() -> None:
    text = "# A\n\n## Related\n\n- [[X]]\n\n## Sources\n\nbook\n"
    assert apply(text, "## Related", ["B"]) == (
        "# A\n\n## Related\n\n- [[X]]\n- [[B]]\n\n## Sources\n\nbook\n"
    )


def test_empty_section_case_and_deeper_headings() -> None:
    text = "# A\n\n## related\n\n## Next\n"
    assert apply(text, "## Related", ["B"]) == "# A\n\n## related\n\n- [[B]]\n\n## Next\n"
    deeper = "## Related\n\n- [[X]]\n\n### More\n\n- [[Y]]\n"
    assert apply(deeper, "## Related", ["B"]) == deeper + "- [[B]]\n"
    # a higher level ends the section too
    assert apply("## Related\n- [[X]]\n# Top\n", "## Related", ["B"]) == (
        "## Related\n- [[X]]\n- [[B]]\n# Top\n"
    )


def test_the_heading_setting_is_read_with_the_shared_heading_rule() -> None:
    # plain text means level 2; a closing '#' sequence is not part of the text
    assert apply("# A\n\n## Related ##\n", "Related", ["B"]) == "# A\n\n## Related ##\n\n- [[B]]\n"
    assert apply("# A\n\n## Related\n", "## Related ##", ["B"]) == "# A\n\n## Related\n\n- [[B]]\n"
    # another level is another section
    assert apply("### Related\n", "## Related", ["B"]).endswith(
        "### Related\n\n## Related\n\n- [[B]]\n"
    )


def test_a_heading_inside_code_is_not_the_section() -> None:
    text = "# A\n\n```md\n## Related\n```\n"
    assert apply(text, "## Related", ["B"]).endswith("```\n\n## Related\n\n- [[B]]\n")


@pytest.mark.parametrize(
    "text",
    [
        # a ~~~ fence is not closed by ``` (the old toggle flipped on any fence-like line)
        "# A\n\n~~~\n```\n## Related\n~~~\n",
        # a four-backtick fence is closed only by four or more
        "# A\n\n````\n```\n## Related\n````\n",
        # an HTML comment is not prose
        "# A\n\n<!--\n## Related\n-->\n",
        # a YAML comment in the frontmatter is not a heading
        "---\n## Related\ntitle: A\n---\n# A\n",
    ],
)
def test_headings_that_are_not_headings_under_the_shared_rules(text: str) -> None:
    card = parse_card("A.md", text)
    assert find_section(card, "## Related") is None
    assert apply(text, "## Related", ["B"]) == text + "\n## Related\n\n- [[B]]\n"


def test_an_indented_fence_line_is_not_a_fence() -> None:
    # four spaces of indentation: not a fence (the old toggle used lstrip() and skipped the
    # heading after it as "inside code")
    text = "# A\n\n    ```\n\n## Related\n\n- [[X]]\n"
    assert apply(text, "## Related", ["B"]) == text + "- [[B]]\n"


def test_inline_code_stays_in_the_heading_text() -> None:
    text = "# A\n\n## Related `x`\n"
    assert find_section(parse_card("A.md", text), "## Related") is None
    card = parse_card("A.md", text)
    h = find_section(card, "## Related `x`")
    assert h is not None and h.line == 2


def test_a_text_is_parsed_when_no_card_is_given() -> None:
    text = "# A\n\n## Related\n\n- [[X]]\n\n## Sources\n"
    assert insert_related(text, "## Related", ["B"]) == insert_related(
        parse_card("A.md", text), "## Related", ["B"]
    )


def test_insert_related_into_a_real_card() -> None:
    text = (EXAMPLE_VAULT / "retrieval" / "BM25.md").read_text(encoding="utf-8")
    at, new = insert_related(parse_card("retrieval/BM25.md", text), "## IDF", ["Stopwords"])
    out = text[:at] + new + text[at:]
    idf = out.index("## IDF")
    assert out.index("- [[Stopwords]]") > idf
    assert out.index("- [[Stopwords]]") < out.index("## Strengths and limits")
    assert "left in the index.\n- [[Stopwords]]\n\n## Strengths" in out


# ------------------------------------------------------------------ names already linked


def test_wikilinked_names_are_the_parsers_links() -> None:
    card = parse_card(
        "A.md",
        "See [[B]], [[c#Heading|see c]], ![[D]], [[ E ]], [[folder/F]] and [x](G.md).\n"
        "| [[H\\|h]] |\n"
        "`[[InCode]]`\n\n```\n[[InFence]]\n```\n<!-- [[InComment]] -->\n[[#Local]]\n",
    )
    assert wikilinked_names(card) == {"b", "c", "d", "e", "folder/f", "h"}


def test_frontmatter_wikilinks_count_as_present() -> None:
    card = parse_card("A.md", '---\nup: "[[Parent]]"\nrelated: ["[[Sib|s]]"]\n---\nBody [[B]].\n')
    assert wikilinked_names(card) == {"parent", "sib", "b"}
    assert unlinked_names(card, ["B", "Parent", "Other", "sib", "New"]) == ["Other", "New"]


def test_unlinked_names_keep_order_and_ignore_case() -> None:
    card = parse_card("A.md", "[[bm25]] and `[[TF-IDF]]`\n")
    # a wikilink in inline code is not a link (the old regex over the raw text counted it)
    assert unlinked_names(card, ["TF-IDF", "BM25", "Stemming"]) == ["TF-IDF", "Stemming"]
    assert unlinked_names(card, []) == []
