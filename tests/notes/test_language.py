"""English or not (notes/language.py): the routing question of the multilingual issue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import EVAL
from zettel_lsp.notes.language import LATIN, NONE, OTHER, is_english, script_of


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
