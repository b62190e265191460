"""`zettel-lsp ask` and `search --expand/--llm-rerank`, with Ollama embeddings from the stand-in
(fast to index). In-process through cli.main, and once as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.stub import OllamaStub, free_port
from zettel_lsp import cli

QUESTION = "How does reciprocal rank fusion combine rankings?"
RRF = "retrieval/Reciprocal rank fusion.md"


@pytest.fixture
def common(example_vault: Path, tmp_path: Path, cache_dir: Path, stub: OllamaStub) -> list[str]:
    return [
        "--model",
        "ollama:nomic-embed-text",
        "--ollama-host",
        stub.url,
        "--index-dir",
        str(tmp_path / "index"),
        "--cache-dir",
        str(cache_dir),
    ]


def test_ask_streams_the_answer_then_the_sources(
    example_vault: Path, common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ask", str(example_vault), QUESTION, *common]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("According to [Reciprocal rank fusion], the notes answer the question.")
    assert "\nSources (llama3.2):\n 1. Reciprocal rank fusion  (retrieval/Reciprocal" in out
    assert out.count("score ") == 7
    assert err == ""


def test_ask_json(
    example_vault: Path, common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ask", str(example_vault), QUESTION, "--json", "--max-context-chunks", "2", *common]
    assert cli.main(argv) == 0
    out, _ = capsys.readouterr()
    result = json.loads(out)
    assert result["answer"].startswith("According to [Reciprocal rank fusion]")
    assert result["model"] == "llama3.2" and result["fallback"] is None
    assert result["context_chunks"] == 2 and len(result["sources"]) == 2
    assert result["sources"][0]["path"] == RRF
    assert set(result["sources"][0]) == {
        "path",
        "title",
        "chunk",
        "line_start",
        "line_end",
        "score",
        "excerpt",
        "heading",
        "excerpt_text",
    }


def test_ask_with_a_missing_model_prints_why_and_the_cards(
    example_vault: Path, common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ask", str(example_vault), QUESTION, "--chat-model", "nope", *common]
    assert cli.main(argv) == 3
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "model 'nope' not found" in err and "ollama pull nope" in err
    assert out.startswith("Retrieved cards (no answer):\n 1. Reciprocal rank fusion")


def test_ask_when_ollama_is_gone(
    example_vault: Path,
    common: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["index", str(example_vault), *common]) == 0  # Ollama was there then
    capsys.readouterr()
    gone = f"http://127.0.0.1:{free_port()}"
    argv = ["ask", str(example_vault), QUESTION, *common, "--ollama-host", gone]
    assert cli.main(argv) == 3
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 2  # one line per problem: no query vector, no answer
    assert lines[0].startswith("zettel-lsp: dense leg skipped: embedding model 'ollama:nomic")
    assert lines[1].startswith(f"zettel-lsp: Ollama at {gone} is not reachable")
    assert "Retrieved cards (no answer):" in out and RRF in out  # lexical legs found it


def test_ask_when_ollama_goes_away_with_pending_vectors(
    example_vault: Path, common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["index", str(example_vault), *common]) == 0
    (example_vault / "New card.md").write_text("# New card\n\nA fresh levain build.\n")
    capsys.readouterr()
    gone = f"http://127.0.0.1:{free_port()}"
    argv = ["search", str(example_vault), "fresh levain build", *common, "--ollama-host", gone]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "not reachable; start Ollama" in err and "searching without the dense leg" in err
    # the card with no vector yet is found by the lexical legs, among the first two (the
    # keyword leg's weight is small since issue #11, so "Levain", whose title is in the query,
    # may come first)
    firsts = [line for line in out.splitlines() if line[:4] in (" 1. ", " 2. ")]
    assert any(
        line.startswith((" 1. New card  (New card.md:", " 2. New card  (New card.md:"))
        for line in firsts
    ), out


def test_search_with_expansion_and_rerank(
    example_vault: Path, common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["search", str(example_vault), "levain and inverted index", "--json", *common]
    assert cli.main([*argv, "--expand", "--llm-rerank"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert err == ""
    assert any(leg.startswith("q1:") for r in rows for leg in r["legs"])
    assert any("llm" in r["legs"] for r in rows)
    assert cli.main(argv) == 0  # off by default
    rows = json.loads(capsys.readouterr().out)
    assert not any(leg.startswith("q1:") or leg == "llm" for r in rows for leg in r["legs"])


def test_search_expansion_failure_is_reported(
    example_vault: Path, common: list[str], stub: OllamaStub, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.answer_expand = lambda body: "Here are some ideas: levain; inverted index."
    assert cli.main(["search", str(example_vault), "levain and index", *common, "--expand"]) == 0
    out, err = capsys.readouterr()
    assert err == "zettel-lsp: query expansion skipped: the model did not answer in JSON\n"
    assert out.startswith(" 1. ")


def test_ask_as_a_subprocess(example_vault: Path, common: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "zettel_lsp", "ask", str(example_vault), QUESTION, *common],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("According to [Reciprocal rank fusion]")
    assert "Sources (llama3.2):" in done.stdout
