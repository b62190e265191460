"""English or not (notes/language.py): the routing question of the multilingual issue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import EVAL
from zettel_lsp.notes.language import (
    LATIN,
    NONE,
    OTHER,
    card_language,
    is_english,
    language_of,
    prose_of,
    script_of,
)
from zettel_lsp.notes.parser import parse_card


def _queries(name: str) -> list[dict[str, Any]]:
    path = EVAL / name
    if not path.is_file():
        pytest.skip(f"{path} is missing (the shared evaluation data sits beside the project)")
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("queries", data) if isinstance(data, dict) else data
    assert isinstance(items, list) and items
    return items


def test_the_golden_queries_english_and_russian() -> None:
    items = _queries("obsidian-help.golden.json")
    russian = {q["query"] for q in items if q["category"] == "multilingual"}
    wrong = [q["query"] for q in items if is_english(q["query"]) == (q["query"] in russian)]
    assert wrong == []
    assert len(russian) == 6


def test_the_translated_queries_are_not_english() -> None:
    items = _queries("obsidian-help.ru52.json")
    assert len(items) == 52
    assert [q["query"] for q in items if is_english(q["query"])] == []


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("Der Zettelkasten ist eine Methode, um Notizen zu verknüpfen.", False),
        ("La méthode Zettelkasten relie les notes entre elles.", False),
        ("El método de notas enlazadas es muy útil para el estudio.", False),
        ("Het is een methode voor notities met links.", False),
        ("Как работает поиск по заметкам", False),
        ("我的笔记都在这里", False),
        ("ノートの書き方", False),
        ("The slip box is a method for linking notes.", True),
        ("search inside vault", True),  # no evidence: English
        ("Zettelkasten", True),
        ("Die Methode", True),  # one function word is not clear evidence
        ("the die is cast", True),  # "die" as an English word too
        ("12345 --- !!!", True),  # no letters
    ],
)
def test_examples(text: str, english: bool) -> None:
    assert is_english(text) is english


def test_script_of() -> None:
    assert script_of("Ünïcödé Latin") == LATIN
    assert script_of("Заметка about notes") == LATIN  # more Latin letters than Cyrillic
    assert script_of("Заметки о заметках, notes") == OTHER
    assert script_of("2026-11-23") == NONE


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Der Zettelkasten ist eine Methode, um Notizen zu verknüpfen.", "de"),
        ("La méthode Zettelkasten relie les notes entre elles.", "fr"),
        ("El método de notas enlazadas es muy útil para el estudio.", "es"),
        ("Het is een methode voor notities met links.", "nl"),
        ("O método não é difícil e ajuda com as notas.", "pt"),
        ("Il metodo della scatola è come una rete di note.", "it"),
        ("Как работает поиск по заметкам", "ru"),
        ("我的笔记都在这里", "zh"),
        ("ノートの書き方", "ja"),
        ("日本語のノートと漢字", "ja"),  # kana beside Han
        ("메모를 연결하는 방법", "ko"),
        ("Οι σημειώσεις συνδέονται", "el"),
        ("The slip box is a method for linking notes.", "en"),
        ("12345 --- !!!", "en"),
        ("Größe Häuser", "de"),  # no function words: the letters decide
    ],
)
def test_language_of(text: str, code: str) -> None:
    assert language_of(text) == code


def test_prose_of_leaves_out_code_front_matter_and_urls() -> None:
    text = "---\ntags: [x]\n---\nLe texte est ici.\n```\nthe code is not prose\n```\nhttps://example.com/el/la/los\n"
    masked = [(0, text.index("Le")), (text.index("```"), text.rindex("```") + 3)]
    prose = prose_of(text, masked)
    assert "Le texte est ici." in prose
    assert "code" not in prose and "tags" not in prose and "example" not in prose


def test_a_card_of_code_and_links_is_english() -> None:
    # zettelkasten-13k: Prolog and URL cards were read as Spanish before code and URLs were
    # left out (single letters like "y" and URL parts "es" are not words of a language)
    text = "```c\nappend([],Y,Y).\nappend([X|Xs],Y,[X|Zs]) :- append(Xs,Y,Zs).\n```\n- https://a.es/y/el/la\n"
    masked = [(0, text.index("- https"))]
    assert language_of(prose_of(text, masked)) == "en"


@pytest.mark.parametrize(
    "path, text",
    [  # English cards that hold a few words of another language by chance
        (
            "Peter schießt den Vogel ab.md",
            "Peter schießt den Vogel ab is a 1959 West German comedy film directed by Géza von "
            "Cziffra, starring Peter Alexander and Germaine Damar.\n",
        ),
        (
            "Geologic Time Scale.md",
            "- [[Hadean Era]] - 4.5 Ga\n- [[Archean Era]] - 4 Ga\n- [[Mezozoic Era]] - 252 Ma\n"
            "- [[Cenozoic Era]] - 66 Ma\n- la Tierra, de la era\n",
        ),
    ],
)
def test_a_card_needs_clear_evidence_to_be_another_language(path: str, text: str) -> None:
    assert card_language(parse_card(path, text)) == "en"


def test_a_german_card_is_german() -> None:
    text = (
        "Sauerteig ist ein Teig, der durch Milchsäurebakterien und Hefen gesäuert wird. Er "
        "lockert das Brot und macht es haltbar; die Hefen leben mit den Bakterien zusammen.\n"
    )
    assert card_language(parse_card("Sauerteig.md", text)) == "de"
