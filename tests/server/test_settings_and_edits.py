"""Pure parts of the server: settings parsing and the words a hover asks about. (Where "Add
related links" inserts is tested with its code, in tests/notes/test_editing.py.)"""

from __future__ import annotations

import pytest

from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.search.query import words_around
from zettel_lsp.server.settings import ServerSettings, parse_settings


def test_settings_defaults_and_camel_case() -> None:
    s, problems = parse_settings(
        {"zettel": {"symbolLimit": 7, "legs": "bm25,title", "graph": False, "ignore": ["x/**"]}}
    )
    assert problems == []
    assert (s.symbol_limit, s.legs, s.graph, s.ignore) == (7, ("bm25", "title"), False, ("x/**",))
    assert parse_settings(None) == (ServerSettings(), [])
    # Lua clients send an empty table as a JSON array
    assert parse_settings([]) == (ServerSettings(), [])
    assert parse_settings({"zettel": []}) == (ServerSettings(), [])


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"symbolLimit": "ten"}, "symbolLimit"),
        ({"symbolLimit": 0}, "symbolLimit"),
        ({"watch": "yes"}, "watch"),
        ({"legs": ["dense", "magic"]}, "legs"),
        ({"relatedHeading": "Related"}, "relatedHeading"),
        ({"ignore": "*.tmp"}, "ignore"),
        ({"nonsense": 1}, "nonsense"),
        ({"titleSource": "heading"}, "titleSource"),
        ({"titleSource": 1}, "titleSource"),
    ],
)
def test_bad_values_fall_back_to_defaults_with_a_message(
    raw: dict[str, object], field: str
) -> None:
    s, problems = parse_settings(raw, ServerSettings(symbol_limit=3))
    assert len(problems) == 1 and field in problems[0]
    if field == "symbolLimit":
        assert s.symbol_limit == ServerSettings().symbol_limit
    assert s.legs == ServerSettings().legs


def test_index_key_changes_only_with_index_settings() -> None:
    base = ServerSettings()
    assert parse_settings({"symbolLimit": 5}, base)[0].index_key() == base.index_key()
    assert parse_settings({"ignore": ["a"]}, base)[0].index_key() != base.index_key()
    assert parse_settings({"titleSource": "h1"}, base)[0].index_key() != base.index_key()


def test_title_source_setting() -> None:
    assert ServerSettings().title_source == TitleSource.AUTO
    for value in ("auto", "filename", "h1", "frontmatter", " H1 "):
        s, problems = parse_settings({"zettel": {"titleSource": value}})
        assert problems == [] and s.title_source == value.strip().lower()
        assert s.index_settings().title_source == value.strip().lower()
    s, problems = parse_settings(
        {"titleSource": "heading"}, ServerSettings(title_source=TitleSource.H1)
    )
    assert s.title_source == TitleSource.AUTO  # a bad value is reported and the default used
    assert problems == [
        "setting 'titleSource': expected one of auto, filename, h1, frontmatter, got 'heading'; "
        "using the default"
    ]


def test_words_around_the_cursor() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    assert words_around("short text", 3) == "short text"
    assert words_around(text, 0, 10) == " ".join(f"w{i}" for i in range(10))
    middle = text.index("w50")
    assert words_around(text, middle, 10) == " ".join(f"w{i}" for i in range(45, 55))
    assert words_around(text, len(text), 10) == " ".join(f"w{i}" for i in range(90, 100))
