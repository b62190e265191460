"""Property-based tests: the parser never raises and every reported range is exact."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zettel_lsp.notes.mentions import MentionMatcher
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.positions import LineIndex

# Markdown-ish fragments mixed with arbitrary Unicode (emoji, CJK, combining marks, surrogates'
# neighbours, controls), so both random noise and near-valid syntax are explored.
FRAGMENTS = st.sampled_from(
    [
        "[[",
        "]]",
        "[",
        "]",
        "(",
        ")",
        "|",
        "#",
        "^",
        "!",
        "`",
        "```",
        "~~~",
        "<!--",
        "-->",
        "---\n",
        "\n",
        " ",
        "\\",
        "<",
        ">",
        "%20",
        ".md",
        "/",
        "[[a|b]]",
        "[[x#h]]",
        "![[e]]",
        "[t](p.md)",
        "[t](<a b.md>)",
        "#tag/x",
        "# H\n",
        "^id",
        "🍞",
        "酸種",
        "é",
        "e\u0301",
        "\u200b",
        "\ufeff",
        "\r\n",
        "\t",
        "İ",
        "ß",
        "ﬃ",
        "𝔘",
        "title: x\n",
        "aliases: [a]\n",
    ]
)
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join)


def check_card(text: str) -> None:
    card = parse_card("dir/Note.md", text)
    lines = LineIndex(text)
    for link in card.links:
        assert text[link.span.start : link.span.end] == link.raw
        for offset, pos in (
            (link.span.start, link.span.start_pos),
            (link.span.end, link.span.end_pos),
        ):
            assert lines.offset(pos) == offset
            assert lines.position(offset) == pos
        assert "\n" not in link.raw
    for tag in card.tags:
        if tag.span is not None:
            assert text[tag.span.start : tag.span.end] == "#" + tag.name
    for h in card.headings:
        assert 0 <= h.line <= h.end_line < lines.line_count
    assert isinstance(card.title, str) and card.title


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_parser_never_raises_and_ranges_slice_back(text: str) -> None:
    check_card(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_on_arbitrary_unicode(text: str) -> None:
    check_card(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_parser_on_decoded_junk_bytes(data: bytes) -> None:
    check_card(data.decode("utf-8", errors="replace"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6), TEXT)
def test_mentions_are_whole_word_exact_and_disjoint(phrases: list[str], text: str) -> None:
    matcher = MentionMatcher(((p, f"k{i}") for i, p in enumerate(phrases)), min_length=1)
    found = matcher.find(text)
    last_end = 0
    for m in found:
        assert m.start >= last_end
        last_end = m.end
        assert " ".join(text[m.start : m.end].split()).lower() == m.phrase
