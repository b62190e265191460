"""The title/alias leg: match kinds and their order."""

from __future__ import annotations

from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import parse_query
from zettel_lsp.search.titles import TitleIndex, TitleMatch, exact_first

NAMES = [
    ("Maps of Content", "method/Maps of Content.md"),
    ("MOC", "method/Maps of Content.md"),
    ("Sourdough map of content", "Sourdough map of content.md"),
    ("Reciprocal rank fusion", "retrieval/Reciprocal rank fusion.md"),
    ("RRF", "retrieval/Reciprocal rank fusion.md"),
    ("Data", "Data.md"),
]


def kinds(query: str) -> list[tuple[str, str]]:
    idx = TitleIndex(NAMES)
    return [(m.path, m.kind) for m in idx.search(parse_query(query), 10)]


def test_exact_title_or_alias_first_case_insensitive() -> None:
    assert kinds("rrf")[0] == ("retrieval/Reciprocal rank fusion.md", "exact")
    assert kinds("Maps of content")[0] == ("method/Maps of Content.md", "exact")


def test_singular_and_plural_meet() -> None:
    # "map of content" is the title "Maps of Content" up to a plural
    assert kinds("map of content")[0] == ("method/Maps of Content.md", "exact")
    got = kinds("what is a map of content")
    assert got[:2] == [
        ("method/Maps of Content.md", "covers"),  # fewer words first
        ("Sourdough map of content.md", "covers"),
    ]


def test_prefix_while_typing() -> None:
    assert kinds("recipro") == [("retrieval/Reciprocal rank fusion.md", "prefix")]


def test_titles_inside_a_longer_query_but_not_common_single_words() -> None:
    got = kinds("how does reciprocal rank fusion combine data")
    assert ("retrieval/Reciprocal rank fusion.md", "inside") in got
    assert ("Data.md", "inside") not in got


def test_exact_matches_move_to_the_front_in_fused_order() -> None:
    results = [CardResult(p, 1.0 / (i + 1), {}) for i, p in enumerate("abcd")]
    matches = [TitleMatch("d", "exact", "d"), TitleMatch("b", "exact", "b")]
    matches.append(TitleMatch("a", "covers", "a x"))
    moved = exact_first(results, matches)
    assert [r.path for r in moved] == ["b", "d", "a", "c"]
    assert moved[0].notes == {"exact_title": 1.0} and moved[2].notes == {}
    no_exact = [TitleMatch("a", "prefix", "a")]
    assert [r.path for r in exact_first(results, no_exact)] == ["a", "b", "c", "d"]
