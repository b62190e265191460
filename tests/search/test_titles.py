"""The title/alias leg: match kinds and their order."""

from __future__ import annotations

from zettel_lsp.search.query import parse_query
from zettel_lsp.search.titles import TitleIndex

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
