"""benchmarks/remembered_phrases.py on a hand-built vault: each query is words of one of its
card's own prose sentences, a passage copied into another card gives no query, and frontmatter,
code and headings never become queries. (The benchmark scripts are not a package; the folder
beside ``tests`` is importable as ``benchmarks`` from the project root, where pytest runs.)"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import remembered_phrases
from zettel_lsp.eval.evaluate import load_golden

COPIED = "Reciprocal rank fusion merges several rankings by summing inverse positions of each card."

CARDS = {
    "Sourdough.md": "---\ntitle: Sourdough starter maintenance schedule\n---\n"
    "# Feeding routine explained carefully\n\n"
    "A healthy starter doubles within six hours after feeding at warm kitchen temperatures.\n",
    "Glacier.md": "Glaciers carve valleys slowly because compacted snow becomes dense ice.\n\n"
    "```\nimport glacier module carefully everywhere today\n```\n",
    "Fusion.md": f"{COPIED}\n",
    "Copy of fusion.md": f"{COPIED}\n\nSee the note above.\n",
    "Empty.md": "Short.\n",
}


def make_vault(root: Path) -> Path:
    root.mkdir()
    for name, text in CARDS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_queries_come_from_the_cards_own_sentences(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    rows = remembered_phrases.build(vault, n=10, seed=0)
    by_card = {r["relevant_paths"][0]: r for r in rows}  # type: ignore[index]
    # the copied passage stands in two cards: no query for either; a card without a long
    # enough sentence gives none
    assert set(by_card) == {"Sourdough.md", "Glacier.md"}
    for path, row in by_card.items():
        words = str(row["query"]).split()
        assert 3 <= len(words) <= 6
        sentence = str(row["notes"]).split(": ", 1)[1]
        assert all(w in sentence.lower() for w in words)
        assert sentence in CARDS[path]
    # neither frontmatter, a heading nor a code block is prose
    assert "maintenance" not in str(by_card["Sourdough.md"]["query"])
    assert "routine" not in str(by_card["Sourdough.md"]["query"])
    assert "module" not in str(by_card["Glacier.md"]["query"])
    # the same seed gives the same queries
    assert remembered_phrases.build(vault, n=10, seed=0) == rows


def test_the_output_is_a_judged_set(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    out = tmp_path / "remembered.json"
    rows = remembered_phrases.build(vault, n=1, seed=3)
    out.write_text(json.dumps(rows), encoding="utf-8")
    judged = load_golden(out)
    assert len(judged) == 1 and judged[0].category == "remembered"
    assert set(judged[0].relevant) <= set(CARDS)
