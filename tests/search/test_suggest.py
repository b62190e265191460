"""Link suggestions: exact ranges, the alias form, exclusion of linked cards and of the card."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from tests.conftest import copy_indexed
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.search.suggest.mentions import (
    MentionEvidence,
    by_specificity,
    link_name,
    linked_targets,
    mention_confidence,
    mention_suggestions,
    rank_mentions,
    ranked_mentions,
)

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


def test_suggest_cli_excludes_linked_cards_and_itself(
    tmp_path: Path, indexed_example: Path
) -> None:
    example_vault = tmp_path / "vault"
    copy_indexed(indexed_example, example_vault, tmp_path / "idx")  # a first run's index
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


def common_word_vault() -> LinkGraph:
    """The card "Process" is named by ten cards and linked by none; "Kanban board" is linked by
    four of the five cards that name it."""
    spec = {
        "Process.md": "# Process\n",
        "Kanban board.md": "# Kanban board\n",
        "Drama.md": "---\naliases: [Principles]\n---\nActing.\n",
    }
    for i in range(10):
        spec[f"n/Note {i}.md"] = f"Note {i} follows a process, step by step.\n"
    for i in range(4):
        spec[f"k/Team {i}.md"] = f"Team {i} uses a [[Kanban board]].\n"
    spec["k/Team 4.md"] = "Team 4 has a Kanban board too.\n"
    return LinkGraph.build(parse_card(p, t) for p, t in spec.items())


def test_each_card_once_with_its_count_most_confident_first() -> None:
    g = common_word_vault()
    text = "The Process: put the process on a Kanban board. principles apply."
    draft = parse_card("Draft.md", text)
    ranked = rank_mentions(g, mention_suggestions(g, draft))
    assert [(t.target, t.count) for t in ranked] == [
        ("Kanban board.md", 1),
        ("Drama.md", 1),
        ("Process.md", 2),
    ]
    kanban, drama, process = ranked
    assert (kanban.linked_by, kanban.named_by) == (4, 1)
    assert (process.linked_by, process.named_by) == (0, 10)
    assert kanban.confident and not process.confident and not drama.confident
    assert [m.text for m in process.mentions] == ["Process", "process"]
    assert by_specificity(g, mention_suggestions(g, draft)) == [t.target for t in ranked]
    assert [t.target for t in ranked_mentions(g, draft)] == [t.target for t in ranked]
    # named only in lower case, "process" is a common word in this vault: not offered
    lower = parse_card("Draft.md", text.replace("The Process", "The process"))
    assert [t.target for t in ranked_mentions(g, lower)] == ["Kanban board.md", "Drama.md"]


def test_confidence_weighs_link_rate_length_case_and_heading_aliases() -> None:
    base = MentionEvidence(linked_by=3, named_by=3, words=1, chars=8, case=0, heading_alias=False)
    c = mention_confidence
    assert c(replace(base, linked_by=30)) > c(base) > c(replace(base, named_by=300))
    assert c(replace(base, words=3, chars=20)) > c(base) > c(replace(base, chars=4))
    assert c(replace(base, case=1)) > c(base) > c(replace(base, case=-1))
    assert c(replace(base, heading_alias=True)) < c(base)
    assert all(0.0 < c(replace(base, named_by=n)) < 1.0 for n in (0, 10**6))


def test_a_card_the_note_already_links_comes_last_and_is_never_confident() -> None:
    g = common_word_vault()
    draft = parse_card("Draft.md", "A [[Kanban board]]; the Kanban board and the Process.")
    ranked = ranked_mentions(g, draft)
    assert [(t.target, t.already_linked) for t in ranked] == [
        ("Process.md", False),
        ("Kanban board.md", True),
    ]
    assert ranked[1].confidence > ranked[0].confidence and not ranked[1].confident
