"""The command line, run as a user runs it (a subprocess), on a copy of examples/vault."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zettel_lsp", *args], capture_output=True, text=True, timeout=120
    )


def test_graph_json_on_the_example_vault(example_vault: Path) -> None:
    out = run("graph", str(example_vault), "--json", "--card", "RRF")
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    assert stats["cards"] == 45
    assert stats["unresolved_links"] == 2
    assert {u["link"] for u in stats["unresolved_sample"]} == {
        "[[Rye sourdough]]",
        "[[Learned sparse retrieval]]",
    }
    assert stats["skipped_files"] == 0 and stats["problems"] == []
    top = {m["path"] for m in stats["most_linked"][:2]}
    assert top == {"retrieval/BM25.md", "baking/Bulk fermentation.md"}
    card = stats["card"]
    assert card["resolved"]["path"] == "retrieval/Reciprocal rank fusion.md"
    assert card["stage"] == "alias"
    assert {"path": "retrieval/Vector database.md", "title": "Vector database"} in card[
        "mentioned_without_link_by"
    ]
    assert set(stats["seconds"]) == {"load", "graph", "total"}


def test_graph_human_output_reports_bad_files(example_vault: Path) -> None:
    (example_vault / "broken.md").write_bytes(b"---\ntitle: [oops\n---\ncaf\xe9 [[BM25]]\n")
    (example_vault / "blob.md").write_bytes(b"\x00\x01\x02" * 100)
    out = run("graph", str(example_vault))
    assert out.returncode == 0, out.stderr
    assert "cards                           46" in out.stdout
    assert "skipped files                    1" in out.stdout
    assert "blob.md: skipped, looks like a binary file" in out.stdout
    assert "broken.md: invalid UTF-8" in out.stdout
    assert "broken.md: invalid YAML frontmatter" in out.stdout


def test_unknown_card_and_missing_vault(example_vault: Path, tmp_path: Path) -> None:
    out = run("graph", str(example_vault), "--card", "No such card")
    assert "[[No such card]] does not resolve to any card" in out.stdout
    out = run("graph", str(tmp_path / "nope"))
    assert out.returncode == 2 and "does not exist" in out.stderr and out.stdout == ""
    (tmp_path / "file.md").write_text("x")
    out = run("graph", str(tmp_path / "file.md"))
    assert out.returncode == 2 and "is not a folder" in out.stderr


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("zettel-lsp ")
    assert "graph" in run("--help").stdout


def test_index_json_then_warm_run(example_vault: Path, tmp_path: Path) -> None:
    args = ["index", str(example_vault), "--json", "--index-dir", str(tmp_path / "idx")]
    args += ["--cache-dir", str(tmp_path / "cache")]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    s = json.loads(first.stdout)
    assert (s["cards"], s["indexed"], s["unchanged"], s["deleted"]) == (45, 45, 0, 0)
    assert s["embedded"] == s["chunks"] > 45 and s["model_tokens"] > 0
    assert s["model"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert set(s["seconds"]) == {"lexical_ready", "dense", "model", "total"}
    assert first.stderr == ""  # no progress bar when stderr is not a terminal
    (example_vault / "baking" / "Crumb.md").unlink()
    second = json.loads(run(*args).stdout)
    assert (second["indexed"], second["unchanged"], second["deleted"], second["embedded"]) == (
        0,
        44,
        1,
        0,
    )


def test_index_refuses_a_missing_vault(tmp_path: Path) -> None:
    out = run("index", str(tmp_path / "nope"), "--index-dir", str(tmp_path / "idx"))
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_search_json_finds_the_card_about_the_query(example_vault: Path, tmp_path: Path) -> None:
    args = ["search", str(example_vault), "letting flour and water rest before mixing", "--json"]
    args += ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    out = run(*args, "--limit", "3")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows[0]["path"] == "baking/Autolyse.md"
    assert set(rows[0]) >= {"path", "title", "score", "line_start", "line_end", "excerpt", "legs"}
    assert len(rows[0]["excerpt"]) <= 200 and rows[0]["legs"]
    # one leg only, and an empty query answers with the most-linked cards
    only_bm25 = json.loads(run(*args, "--legs", "bm25", "--no-graph").stdout)
    assert all(set(r["legs"]) == {"bm25"} for r in only_bm25)
    empty = run("search", str(example_vault), "", "--json", *args[4:])
    assert {r["path"] for r in json.loads(empty.stdout)[:2]} == {
        "retrieval/BM25.md",
        "baking/Bulk fermentation.md",
    }
    bad = run(*args, "--legs", "nope")
    assert bad.returncode != 0 and "unknown leg" in bad.stderr
