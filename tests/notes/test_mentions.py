"""Unlinked-mention matching: whole words, case-insensitive, longest match, exclusions."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zettel_lsp.notes.mentions import MentionMatcher, nfc_with_offsets


def spans(matcher: MentionMatcher, text: str, excluded: list[tuple[int, int]] | None = None):
    return [(text[m.start : m.end], m.keys) for m in matcher.find(text, excluded or [])]


def test_whole_words_case_insensitive() -> None:
    m = MentionMatcher([("BM25", "bm25.md"), ("rank", "rank.md")])
    text = "bm25 ranks; Rank! xbm25 bm25x _rank rank_ (BM25)"
    assert spans(m, text) == [
        ("bm25", ("bm25.md",)),
        ("Rank", ("rank.md",)),
        ("BM25", ("bm25.md",)),
    ]


def test_longest_match_wins_and_matches_do_not_overlap() -> None:
    m = MentionMatcher(
        [("rank fusion", "rf.md"), ("reciprocal rank fusion", "rrf.md"), ("fusion", "f.md")]
    )
    text = "Use reciprocal  rank fusion, not rank fusion or fusion."
    # whitespace inside a phrase must match exactly one space; the double space breaks the long one
    assert spans(m, text) == [
        ("rank fusion", ("rf.md",)),
        ("rank fusion", ("rf.md",)),
        ("fusion", ("f.md",)),
    ]
    text = "Use reciprocal rank fusion here."
    assert spans(m, text) == [("reciprocal rank fusion", ("rrf.md",))]


def test_the_longest_of_overlapping_matches_wins_not_the_leftmost() -> None:
    # zettelkasten-13k: "the Internet Service Provider" named "The Internet", a word earlier
    m = MentionMatcher(
        [
            ("The Internet", "net.md"),
            ("Internet Service Provider", "isp.md"),
            ("The Matrix", "film.md"),
            ("Matrix Transposition", "mt.md"),
        ]
    )
    assert spans(m, "Call the Internet Service Provider.") == [
        ("Internet Service Provider", ("isp.md",))
    ]
    text = "On the internet, the Matrix; then the Matrix Transposition of the Internet"
    assert spans(m, text) == [
        ("the internet", ("net.md",)),
        ("the Matrix", ("film.md",)),
        ("Matrix Transposition", ("mt.md",)),
        ("the Internet", ("net.md",)),
    ]


def test_a_run_of_overlapping_matches_keeps_the_longest_and_what_it_leaves_free() -> None:
    m = MentionMatcher(
        [("alpha beta", "ab.md"), ("beta gamma delta", "bgd.md"), ("delta epsilon", "de.md")]
    )
    assert spans(m, "alpha beta gamma delta epsilon") == [("beta gamma delta", ("bgd.md",))]
    # equal lengths: the leftmost
    m = MentionMatcher([("red fox", "rf.md"), ("fox den", "fd.md")])
    assert spans(m, "a red fox den") == [("red fox", ("rf.md",))]
    # the longest overlaps an excluded span: the others compete without it
    m = MentionMatcher([("The Internet", "net.md"), ("Internet Service Provider", "isp.md")])
    text = "the Internet Service Provider"
    assert [(x.start, x.end) for x in m.find(text, [(20, 29)])] == [(0, 12)]


def test_shared_phrases_keep_every_owner() -> None:
    m = MentionMatcher([("Overview", "a/Overview.md"), ("overview", "b/Overview.md")])
    assert spans(m, "An overview.") == [("overview", ("a/Overview.md", "b/Overview.md"))]


def test_excluded_spans_drop_overlapping_mentions() -> None:
    m = MentionMatcher([("levain", "l.md")])
    text = "levain [[Levain]] levain"
    assert [(x.start, x.end) for x in m.find(text, [(7, 17)])] == [(0, 6), (18, 24)]


def test_short_and_numeric_phrases_are_ignored_by_default() -> None:
    m = MentionMatcher([("Go", "go.md"), ("2024", "y.md"), ("Rust", "rust.md")])
    assert spans(m, "Go and Rust in 2024") == [("Rust", ("rust.md",))]


def test_non_ascii_phrases_and_offsets() -> None:
    m = MentionMatcher([("pâte fermentée", "p.md"), ("酸種", "s.md")])
    text = "🍞 Une pâte fermentée et 酸種 パン"
    found = m.find(text)
    assert [text[x.start : x.end] for x in found] == ["pâte fermentée", "酸種"]
    assert found[0].start == 6  # code points: the emoji counts 1 (the server converts to UTF-16)


def test_case_changes_that_lengthen_do_not_shift_offsets() -> None:
    m = MentionMatcher([("levain", "l.md")])
    text = "İİİ levain"
    (x,) = m.find(text)
    assert text[x.start : x.end] == "levain"


def test_cjk_titles_match_inside_running_text() -> None:
    m = MentionMatcher([("酸種", "s.md"), ("x", "x.md")])
    assert spans(m, "酸種パンを焼く") == [("酸種", ("s.md",))]


@pytest.mark.parametrize("title_form", ["NFC", "NFD"])
@pytest.mark.parametrize("text_form", ["NFC", "NFD"])
def test_normal_forms_do_not_matter(title_form: str, text_form: str) -> None:
    """macOS writes file names decomposed (NFD); editors write text composed (NFC)."""
    titles = [("Crème brûlée", "dessert.md"), ("한국어", "korean.md"), ("Ёлка", "tree.md")]
    m = MentionMatcher((unicodedata.normalize(title_form, t), k) for t, k in titles)
    text = unicodedata.normalize(text_form, "Über: crème brûlée, 한국어 und ёлка.\n")
    found = [(text[x.start : x.end], x.keys) for x in m.find(text)]
    assert [(unicodedata.normalize("NFC", w), k) for w, k in found] == [
        ("crème brûlée", ("dessert.md",)),
        ("한국어", ("korean.md",)),
        ("ёлка", ("tree.md",)),
    ]
    # spans are the text's own: exactly the written word, nothing around it
    assert all(w == w.strip(" ,.:") for w, _ in found)


@given(
    st.text(alphabet=st.sampled_from("ae \u0301\u0300\u1100\u1161\u11a8한.Ё\u0308x"), max_size=40)
)
def test_nfc_offsets_map_back_into_the_text(text: str) -> None:
    nfc, starts, ends = nfc_with_offsets(text)
    # the same text up to normal form
    assert unicodedata.normalize("NFC", nfc) == unicodedata.normalize("NFC", text)
    assert len(starts) == len(ends) == len(nfc)
    assert starts == sorted(starts) and ends == sorted(ends)
    for i, ch in enumerate(nfc):
        assert 0 <= starts[i] < ends[i] <= len(text)
        assert ch in unicodedata.normalize("NFC", text[starts[i] : ends[i]])


_ALPHABET = st.sampled_from("ab é\u0301İ中文./-_1")


@given(
    st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), max_size=8),
    st.text(alphabet=_ALPHABET, max_size=40),
)
def test_phrases_in_finds_what_the_automaton_finds(names: list[str], text: str) -> None:
    """The title index looks names up span by span (no automaton): the same mentions."""
    from zettel_lsp.notes.mentions import normalise, phrases_in

    table = {normalise(n) for n in names} - {""}
    matcher = MentionMatcher((k, k) for k in table)
    longest = max(map(len, table), default=0)
    want = [(m.start, m.end, m.phrase) for m in matcher.find(text)]
    got = [(m.start, m.end, m.phrase) for m in phrases_in(text, table, longest)]
    assert got == want


def test_phrases_in_by_hand() -> None:
    from zettel_lsp.notes.mentions import phrases_in

    table = {"machine learning", "learning", "node", "rank"}
    found = phrases_in("Machine Learning for node.js ranking, and rank", table, 16)
    # longest first, whole words only, never inside a dotted token
    assert [m.phrase for m in found] == ["machine learning", "rank"]
    # names longer than ``longest`` are not looked up
    assert [m.phrase for m in phrases_in("machine learning", table, 8)] == ["learning"]
    assert phrases_in("", table, 16) == [] and phrases_in("rank", set(), 0) == []


_MIXED = st.sampled_from("ab é\u0301İ中文😀./-_1\n")


@given(
    st.lists(st.text(alphabet=_MIXED, min_size=1, max_size=6), max_size=10),
    st.text(alphabet=_MIXED, max_size=60),
)
def test_the_boundary_automaton_finds_what_the_plain_one_finds(names: list[str], text: str) -> None:
    """With many titles the automaton matches at word boundaries only (a spaced copy of the
    text): the same mentions as matching the text as written and checking each hit."""
    from zettel_lsp.notes.mentions import normalise, phrases_in

    pairs = [(n, f"{i}.md") for i, n in enumerate(names)]
    plain = MentionMatcher(pairs, boundary=False)
    spaced = MentionMatcher(pairs, boundary=True)
    want = [(m.start, m.end, m.phrase, m.keys) for m in plain.find(text)]
    assert [(m.start, m.end, m.phrase, m.keys) for m in spaced.find(text)] == want
    table = {normalise(n) for n in names} - {""}
    oracle = phrases_in(text, table, max(map(len, table), default=0))
    assert [(m.start, m.end, m.phrase) for m in oracle] == [w[:3] for w in want]


def test_the_boundary_automaton_by_hand() -> None:
    names = ["rank", "a-b", "a.b", "a b", "-ab", "ab", "c++", "酸種", "Node"]
    m = MentionMatcher(((n, n) for n in names), boundary=True)
    text = "ranks rank a-b a.b a b -ab xab 酸種パン c++ node.js Node"
    assert spans(m, text) == [
        ("rank", ("rank",)),
        ("a-b", ("a-b",)),
        ("a.b", ("a.b",)),
        ("a b", ("a b",)),
        ("-ab", ("-ab",)),
        ("酸種", ("酸種",)),
        ("c++", ("c++",)),
        ("Node", ("Node",)),
    ]
    # it is the default with many titles, not with a few
    many, few = (
        MentionMatcher([(f"t{i:04}", "x") for i in range(300)]),
        MentionMatcher([("rank", "x")]),
    )
    many.prepare()
    few.prepare()
    assert many._spaced is not None
    assert few._spaced is None
