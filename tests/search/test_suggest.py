"""Link suggestions: exact ranges, the alias form, exclusion of linked cards and of the card."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search.suggest import link_name, linked_targets, mention_suggestions

VAULT = {
    "retrieval/Reciprocal rank fusion.md": "---\naliases: [RRF]\n---\n# Reciprocal rank fusion\n",
    "retrieval/BM25.md": "# BM25\n",
    "baking/Overview.md": "# Overview\n",
    "retrieval/Overview.md": "# Overview\n",
}


def graph() -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in VAULT.items())


def test_mentions_with_exact_ranges_and_replacements() -> None:
    g = graph()
    text = "We fuse with RRF 🍞 and reciprocal rank fusion, unlike [[BM25]] or bm25 alone."
    draft = parse_card("retrieval/Hybrid.md", text)  # unsaved: not in the graph
    got = mention_suggestions(g, draft)
    assert [(m.text, m.replacement) for m in got] == [
        ("RRF", "[[Reciprocal rank fusion|RRF]]"),
        ("reciprocal rank fusion", "[[Reciprocal rank fusion|reciprocal rank fusion]]"),
        ("bm25", "[[BM25|bm25]]"),
    ]
    for m in got:
        assert text[m.start : m.end] == m.text
        assert m.start_pos.line == 0 and m.start_pos.character == m.start
    # after the emoji, code-point columns still equal offsets on line 0
    assert got[1].start == text.index("reciprocal")


def test_link_name_uses_a_path_when_the_stem_is_ambiguous() -> None:
    g = graph()
    assert link_name(g, "retrieval/BM25.md", "x/Card.md") == "BM25"
    assert link_name(g, "retrieval/Overview.md", "baking/Card.md") == "retrieval/Overview"
    assert link_name(g, "baking/Overview.md", "baking/Card.md") == "Overview"


def test_linked_targets_follow_the_unsaved_text() -> None:
    g = graph()
    draft = parse_card("retrieval/Hybrid.md", "[[RRF]] and [[Overview]] and [[Missing]]")
    assert linked_targets(g, draft) == {
        "retrieval/Reciprocal rank fusion.md",
        "retrieval/Overview.md",
    }


def test_suggest_cli_excludes_linked_cards_and_itself(example_vault: Path, tmp_path: Path) -> None:
    card = "retrieval/Vector database.md"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "zettel_lsp",
            "suggest",
            str(example_vault),
            card,
            "--json",
            "--index-dir",
            str(tmp_path / "idx"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    g = LinkGraph.build(
        parse_card(p.relative_to(example_vault).as_posix(), p.read_text())
        for p in example_vault.rglob("*.md")
    )
    linked = set(g.outgoing(card))
    related = [r["path"] for r in data["related"]]
    assert related and card not in related and not (set(related) & linked)
    assert all(r["reason"] for r in data["related"])
    (m,) = [m for m in data["unlinked_mentions"] if m["text"] == "reciprocal rank fusion"]
    line = (example_vault / card).read_text().split("\n")[m["line"]]
    assert line[m["start_character"] : m["end_character"]] == "reciprocal rank fusion"
