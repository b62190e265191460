"""Link anchors: which heading or block a ``#subpath`` names, and the text a link previews."""

from __future__ import annotations

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.notes.anchors import (
    anchor_lines,
    block_for,
    heading_for,
    heading_key,
    link_section,
)
from zettel_lsp.notes.model import Card, Link
from zettel_lsp.notes.parser import parse_card


def real(rel: str) -> Card:
    return parse_card(rel, (EXAMPLE_VAULT / rel).read_text(encoding="utf-8"))


def link_to(target: str, subpath: str | None = None) -> Link:
    raw = f"[[{target}#{subpath}]]" if subpath else f"[[{target}]]"
    links = parse_card("Src.md", raw).links
    assert len(links) == 1
    return links[0]


def test_heading_key_folds_case_punctuation_and_spacing() -> None:
    assert heading_key("Saturation & the  k1 parameter!") == "saturation the k1 parameter"
    assert heading_key("Größe – Ünits") == "größe ünits"
    assert heading_key("") == ""


def test_heading_and_block_lookup_on_a_real_card() -> None:
    card = real("retrieval/BM25.md")
    h = heading_for(card, "Saturation and the k1 parameter")
    assert h is not None and h.text == "Saturation and the k1 parameter" and h.level == 2
    assert heading_for(card, "saturation AND the k1 parameter") == h  # case
    assert heading_for(card, "BM25#Saturation and the k1 parameter") == h  # nested: last part
    assert heading_for(card, "No such heading") is None
    b = block_for(card, "bm25-formula")
    assert b is not None and "^bm25-formula" in card.text.split("\n")[b.line]
    assert block_for(card, "BM25-FORMULA") is None  # block ids are exact


def test_anchor_lines_of_links() -> None:
    card = real("retrieval/BM25.md")
    lines = card.text.split("\n")
    sat = anchor_lines(card, link_to("BM25", "Saturation and the k1 parameter"))
    assert sat is not None
    assert lines[sat[0]] == "## Saturation and the k1 parameter"
    assert lines[sat[1] + 1] == "## Length normalization and b"
    blk = anchor_lines(card, link_to("BM25", "^bm25-formula"))
    assert blk is not None and blk[0] == blk[1] and lines[blk[0]].endswith("^bm25-formula")
    assert anchor_lines(card, link_to("BM25")) is None
    assert anchor_lines(card, link_to("BM25", "Missing")) is None
    assert anchor_lines(card, link_to("BM25", "^missing")) is None


def test_a_heading_in_code_or_a_comment_is_no_anchor() -> None:
    card = parse_card("A.md", "# A\n\n```\n## Inside\n```\n<!--\n## Hidden\n-->\n## Real\n")
    assert heading_for(card, "Inside") is None
    assert heading_for(card, "Hidden") is None
    h = heading_for(card, "Real")
    assert h is not None and h.line == 8


def test_link_section_previews_the_section_or_block() -> None:
    card = real("retrieval/BM25.md")
    sat = link_section(card, link_to("BM25", "Saturation and the k1 parameter"))
    assert sat.startswith("## Saturation and the k1 parameter\n\nIn classic [[TF-IDF]]")
    assert sat.endswith("Lucene uses 1.2.")
    blk = link_section(card, link_to("BM25", "^bm25-formula"))
    assert blk.startswith("score(D, Q)") and "\n" not in blk


def test_link_section_of_the_whole_card_leaves_out_the_title_heading() -> None:
    card = real("retrieval/BM25.md")
    body = link_section(card, link_to("BM25"))
    assert body.startswith('BM25 ("Best Matching 25")')  # no frontmatter, no "# BM25"
    # a missing anchor previews the whole card too
    assert link_section(card, link_to("BM25", "Missing")) == body
    # a link to the title heading itself starts at the body: the heading is left out as well
    assert link_section(card, link_to("BM25", "BM25")) == body


def test_title_heading_rule() -> None:
    def section(path: str, text: str) -> str:
        return link_section(parse_card(path, text), link_to("X"))

    # up to case, spacing and characters a file name cannot hold
    assert section("What is DevOps.md", "\n\n# What is DevOps?\n\nBody.") == "Body."
    # a closing '#' sequence is not part of the heading (shared rule)
    assert section("Title.md", "# Title #\nBody.") == "Body."
    # a different opening heading stays
    assert section("Title.md", "# Other\nBody.") == "# Other\nBody."
    # not a heading under the shared rule: kept (the old "lstrip('# ')" dropped these)
    assert section("Title.md", "Title\nBody.") == "Title\nBody."
    assert section("Title.md", "#Title\nBody.") == "#Title\nBody."
    # inline code stays part of the heading's text
    assert section("The tool.md", "# The `grep` tool\nBody.") == "# The `grep` tool\nBody."
    assert section("Empty.md", "") == ""


def test_title_heading_after_frontmatter() -> None:
    text = "---\ntitle: Frontmatter title\n---\n# Frontmatter title\n\nBody.\n"
    card = parse_card("zz-1.md", text)
    assert card.title == "Frontmatter title"
    assert link_section(card, link_to("zz-1")) == "Body."
