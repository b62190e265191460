"""benchmarks/completion_quality.py: a link removed from a generated vault comes back first
when ``[[`` is typed where it was; the baselines do worse; the real hold-out runs (skipped
without ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import completion_quality as cq
from tests.conftest import EVAL, shared_vault
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

TOPICS = {
    "Sourdough starter": "A starter is flour and water fermented by wild yeast and lactic "
    "acid bacteria; feed it daily so it stays active and bubbly.",
    "Bread crust": "The crust browns in a hot oven through the Maillard reaction; steam "
    "keeps it thin and crackly.",
    "Gluten network": "Kneading develops gluten, the protein network that traps the gas "
    "and gives bread dough its strength and stretch.",
    "BM25": "BM25 ranks documents by term frequency and inverse document frequency, with "
    "length normalisation, for lexical search engines.",
    "Dense retrieval": "Dense retrieval embeds queries and passages as vectors and ranks "
    "them by cosine similarity of their meaning.",
}


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "baking").mkdir(parents=True)
    (vault / "search").mkdir()
    for title, text in TOPICS.items():
        folder = "search" if title in ("BM25", "Dense retrieval") else "baking"
        (vault / folder / f"{title}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    for i in range(40):  # unrelated cards, first in the alphabet, linked from a hub
        (vault / f"Aardvark {i:02d}.md").write_text(
            f"# Aardvark {i:02d}\n\nNotes on the burrowing mammals of Africa, number {i}.\n",
            encoding="utf-8",
        )
    hub = "\n".join(f"- [[Aardvark {i:02d}]]" for i in range(40))
    (vault / "Animals.md").write_text(f"# Animals\n\n{hub}\n", encoding="utf-8")
    (vault / "Bread.md").write_text(
        "# Bread\n\nA loaf needs a lively leaven: feed the [[Sourdough starter]] with flour "
        "and water so the wild yeast ferments and the bubbles rise.\n\n"
        "In the oven the [[Bread crust]] browns.\n\n"
        "Searching recipes uses [[BM25]] and [[Dense retrieval]] over passages, by the "
        "meaning of the query vectors.\n",
        encoding="utf-8",
    )
    return vault


def test_a_removed_link_comes_back_and_beats_the_baselines(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    holdout = tmp_path / "holdout.tsv"
    holdout.write_text(
        "src\tdst\nBread.md\tbaking/Sourdough starter.md\nBread.md\tsearch/Dense retrieval.md\n"
        "Bread.md\tNowhere.md\n",  # a target that does not exist is skipped
        encoding="utf-8",
    )
    out = cq.run(vault, holdout, n=10, seed=0, index_dir=None)
    assert out["links"] == 2
    s = out["scores"]
    assert set(s) == {"ours", "meaning", "graph", "alphabetical", "most_linked"}
    assert s["ours"]["recall@10"] == 1.0
    assert s["ours"]["mrr"] >= 0.5
    assert s["alphabetical"]["recall@10"] == 0.0  # forty aardvarks first
    assert s["most_linked"]["mrr"] < s["ours"]["mrr"]


def test_the_case_puts_the_cursor_where_the_link_was(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    cards, _ = load_vault(vault)
    graph = LinkGraph.build(cards)
    case = cq.make_case(graph, cq.HeldOut("Bread.md", "baking/Sourdough starter.md"))
    assert case is not None
    line = case.card.text.split("\n")[case.line]
    assert line[: case.col].endswith("feed the [[")
    assert line[case.col :].startswith(" with flour")
    assert cq.make_case(graph, cq.HeldOut("Bread.md", "Animals.md")) is None  # no such link


def test_on_the_shared_hold_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = shared_vault("obsidian-help-en")
    holdout = EVAL / "links" / "obsidian-help-en.holdout20.tsv"
    if not holdout.is_file():
        pytest.skip(f"hold-out {holdout} not found (../shared is beside the project in CI)")
    index = cq.DEFAULT_INDEX_ROOT / "obsidian-help-en"
    args = [str(vault), str(holdout), "--n", "15", "--json"]
    if not index.is_dir():
        args += ["--index-dir", str(tmp_path / "none")]  # indexes into a temporary folder
    assert cq.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["links"] == 15
    assert out["scores"]["ours"]["mrr"] > out["scores"]["alphabetical"]["mrr"]
