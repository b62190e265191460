"""Parser: every link form, what is ignored, titles, aliases, tags, ids, headings, ranges."""

from __future__ import annotations

import pytest

from zettel_lsp.notes.masking import LIST_ITEM, fence_line, fenced_code_spans
from zettel_lsp.notes.model import LinkKind, Position, file_stem, strip_md
from zettel_lsp.notes.parser import parse_card


def only_link(text: str):
    card = parse_card("note.md", text)
    assert len(card.links) == 1, card.links
    link = card.links[0]
    assert text[link.span.start : link.span.end] == link.raw
    return link


@pytest.mark.parametrize(
    ("text", "kind", "target", "subpath", "label"),
    [
        ("see [[Target]] here", LinkKind.WIKI, "Target", None, None),
        ("see [[Target|shown text]]", LinkKind.WIKI, "Target", None, "shown text"),
        ("see [[Target#Some heading]]", LinkKind.WIKI, "Target", "Some heading", None),
        ("see [[Target#^block-1]]", LinkKind.WIKI, "Target", "^block-1", None),
        ("see [[Target#Head|label]]", LinkKind.WIKI, "Target", "Head", "label"),
        ("see [[folder/Target]]", LinkKind.WIKI, "folder/Target", None, None),
        ("![[Target]]", LinkKind.EMBED, "Target", None, None),
        ("![[image.png]]", LinkKind.EMBED, "image.png", None, None),
        ("[[#Local heading]]", LinkKind.WIKI, "", "Local heading", None),
        ("| [[Target\\|alias]] |", LinkKind.WIKI, "Target", None, "alias"),
        ("[text](Target.md)", LinkKind.MARKDOWN, "Target.md", None, "text"),
        ("[text](../dir/My%20Note.md)", LinkKind.MARKDOWN, "../dir/My Note.md", None, "text"),
        ("[text](<../dir/My Note.md>)", LinkKind.MARKDOWN, "../dir/My Note.md", None, "text"),
        ("[text](Target.md#Heading)", LinkKind.MARKDOWN, "Target.md", "Heading", "text"),
        ('[text](Target.md "a title")', LinkKind.MARKDOWN, "Target.md", None, "text"),
        ("[text](#local)", LinkKind.MARKDOWN, "", "local", "text"),
        ("![alt](pics/a.png)", LinkKind.MARKDOWN_EMBED, "pics/a.png", None, "alt"),
        ("[a [nested] b](T.md)", LinkKind.MARKDOWN, "T.md", None, "a [nested] b"),
        ("[x](Note_(draft).md)", LinkKind.MARKDOWN, "Note_(draft).md", None, "x"),
    ],
)
def test_link_forms(
    text: str, kind: LinkKind, target: str, subpath: str | None, label: str | None
) -> None:
    link = only_link(text)
    assert (link.kind, link.target, link.subpath, link.label) == (kind, target, subpath, label)


def test_link_properties() -> None:
    link = only_link("[[T#^b1]]")
    assert link.block_id == "b1" and link.heading is None
    link = only_link("![[T#H]]")
    assert link.heading == "H" and link.is_embed


@pytest.mark.parametrize(
    "text",
    [
        "[web](https://example.com/a.md)",
        "[mail](mailto:someone@example.com)",
        "[app](obsidian://open?vault=x&file=y)",
        "[proto](//cdn.example.com/x.md)",
        "plain [brackets] only",
        "[[]]",
        "[ref][label]",
    ],
)
def test_not_card_links(text: str) -> None:
    assert parse_card("n.md", text).links == []


def test_code_and_comments_are_ignored() -> None:
    text = (
        "real [[One]]\n"
        "```python\n[[InFence]] and #notatag\n```\n"
        "~~~\n[[InTilde]]\n~~~\n"
        "inline `[[InCode]]` and ``a ` [[InDouble]]`` then [[Two]]\n"
        "<!-- [[InComment]]\nstill comment [[InComment2]] -->\n"
        "> ```\n> [[InQuotedFence]]\n> ```\n"
        "after [[Three]]"
    )
    card = parse_card("n.md", text)
    assert [ln.target for ln in card.links] == ["One", "Two", "Three"]
    assert "notatag" not in card.tag_names


def test_unclosed_fence_runs_to_end_and_lone_backtick_is_literal() -> None:
    card = parse_card("n.md", "a ` b [[Seen]]\n```\n[[Hidden]]")
    assert [ln.target for ln in card.links] == ["Seen"]


def test_a_fence_line_is_a_line_the_parser_reads_as_a_fence() -> None:
    for line in ("```", "  ~~~ py", "> > ```js", "````", "``", "    ```", "```a`b", "~~", "x"):
        assert fence_line(line) == bool(fenced_code_spans(line + "\n[[x]]")), line


def test_where_a_list_items_text_starts() -> None:
    for line, text in [("- a", "a"), ("  *\ta", "a"), ("12) a", "a"), ("1. [x] done", "done")]:
        assert LIST_ITEM.sub("", line) == text, line
    for line in ("-a", "1234567890. a", "１. a", "-\u00a0a", "> - a", "---", "1.5 a"):
        assert LIST_ITEM.match(line) is None, line


def test_link_positions_are_line_and_codepoint_column() -> None:
    text = "---\ntitle: X\n---\nfirst line\n🍞 café 酸種 [[Levain]] end"
    card = parse_card("n.md", text)
    link = card.links[0]
    assert link.span.start_pos == Position(4, 10)
    assert link.span.end_pos == Position(4, 20)
    line = text.split("\n")[4]
    assert line[10:20] == "[[Levain]]"


def test_title_precedence() -> None:
    # the file name is the title; an opening H1 is the title only when the file name is an
    # identifier (tests/notes/test_title_rule.py has the whole rule)
    assert parse_card("a/Stem.md", "---\ntitle: From YAML\n---\n# H1\n").title == "From YAML"
    assert parse_card("a/Stem.md", "\n# The H1\ntext").title == "Stem"
    assert parse_card("a/202311211530.md", "\n# The H1\ntext").title == "The H1"
    assert parse_card("a/202311211530.md", "text first\n# Later H1").title == "202311211530"
    assert parse_card("a/1a2b.md", "# [[Other note]]\n").title == "1a2b"  # a link is no title
    assert parse_card("a/1a2b.md", "## Only H2").title == "1a2b"
    assert parse_card("a/Stem.md", "---\ntitle: 2023\n---\n").title == "2023"


def test_aliases_list_string_and_alias_key() -> None:
    card = parse_card("n.md", "---\naliases: [RRF, rank fusion]\nalias: fusion\n---\n")
    assert card.aliases == ["RRF", "rank fusion", "fusion"]
    card = parse_card("n.md", "---\naliases: Single alias\n---\n")
    assert card.aliases == ["Single alias"]
    card = parse_card("n.md", "---\naliases:\n  - one\n  -\n  - 2\n---\n")
    assert card.aliases == ["one", "2"]


def test_tags_frontmatter_and_inline() -> None:
    text = (
        "---\ntags: [ir, '#search']\ntag: one two\n---\n"
        "Body #method/zettelkasten and (#paren) but not a#b, not #123, not [[x#y]]"
        " nor [l](p.md#frag) nor http://x.org/#frag. #end-"
    )
    card = parse_card("n.md", text)
    assert card.tag_names == ["ir", "search", "one", "two", "method/zettelkasten", "paren", "end"]
    inline = [t for t in card.tags if t.span is not None]
    for tag in inline:
        assert text[tag.span.start : tag.span.end] == "#" + tag.name


def test_heading_is_not_a_tag() -> None:
    card = parse_card("n.md", "# Title\n## Section two\n")
    assert card.tag_names == []
    assert [(h.level, h.text, h.line, h.end_line) for h in card.headings] == [
        (1, "Title", 0, 2),
        (2, "Section two", 1, 2),
    ]


def test_heading_ranges_nest() -> None:
    text = "# A\nx\n## B\ny\n### C\nz\n## D\nw\n# E\n"
    spans = {h.text: (h.line, h.end_line) for h in parse_card("n.md", text).headings}
    assert spans == {"A": (0, 7), "B": (2, 5), "C": (4, 5), "D": (6, 7), "E": (8, 9)}


def test_ids_from_frontmatter_and_zettel_file_name() -> None:
    assert parse_card("202311211530 Atomic notes.md", "x").card_id == "202311211530"
    assert parse_card("202311211530 A.md", "---\nid: custom-7\n---\n").card_id == "custom-7"
    assert parse_card("2023 notes.md", "x").card_id is None


def test_block_ids() -> None:
    card = parse_card("n.md", "para one ^first\n\n- item\n^list-id\n`code ^nope`\n")
    assert [(b.name, b.line) for b in card.block_ids] == [("first", 0), ("list-id", 3)]


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\nbody [[Link]]",
        "---\n- just\n- a list\n---\nbody [[Link]]",
        "---\n: : :\n\t- bad\n---\nbody [[Link]]",
    ],
)
def test_broken_frontmatter_is_reported_and_body_still_parsed(text: str) -> None:
    card = parse_card("n.md", text)
    assert card.problems and "frontmatter" in card.problems[0]
    assert [ln.target for ln in card.links] == ["Link"]
    assert card.title == "n"


def test_frontmatter_is_masked_and_body_start_line() -> None:
    card = parse_card("n.md", "---\nup: '[[Parent]]'\n---\nBody")
    assert card.links == []  # frontmatter text is not prose
    assert card.body_start_line == 3 and card.body == "Body"


def test_unterminated_frontmatter_is_plain_text() -> None:
    card = parse_card("n.md", "---\ntitle: x\n[[Link]]")
    assert card.frontmatter == {} and [ln.target for ln in card.links] == ["Link"]


def test_empty_and_whitespace_cards() -> None:
    for text in ("", "\n\n", "---\n---\n"):
        card = parse_card("Empty.md", text)
        assert card.title == "Empty" and card.links == []


def test_a_cards_file_stem_drops_md_in_any_case_and_nothing_else() -> None:
    assert strip_md("a/B.MD") == "a/B" and strip_md("a.markdown.md") == "a.markdown"
    assert file_stem("a/b/Note.md") == "Note" and file_stem("x.markdown") == "x.markdown"
    card = parse_card("a/x.markdown", "text")
    assert (card.title, card.stem) == ("x.markdown", "x")
