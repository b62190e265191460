"""The command line, run as a user runs it (a subprocess), on a copy of examples/vault."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_indexed
from zettel_lsp.index.db import IndexDB
from zettel_lsp.index.state import read_state
from zettel_lsp.search.calibrate import Calibration, load_calibration
from zettel_lsp.vault import Vault


@pytest.fixture
def indexed_vault(tmp_path: Path, indexed_example: Path) -> Path:
    """A copy of examples/vault with a copy of its complete index in ``tmp_path / "idx"``, for
    commands whose first run would otherwise index (and embed) the vault from scratch."""
    vault = tmp_path / "vault"
    copy_indexed(indexed_example, vault, tmp_path / "idx")
    return vault


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


def test_index_json_then_warm_run(
    example_vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    args = ["index", str(example_vault), "--json", "--index-dir", str(tmp_path / "idx")]
    args += ["--cache-dir", str(tmp_path / "cache")]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    s = json.loads(first.stdout)
    assert (s["cards"], s["indexed"], s["unchanged"], s["deleted"]) == (45, 45, 0, 0)
    assert s["embedded"] == s["chunks"] > 45 and s["model_tokens"] > 0
    assert s["model"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert set(s["seconds"]) == {
        "lexical_ready",
        "graph",
        "dense",
        "multilingual",
        "model",
        "multilingual_model",
        "self_tune",
        "total",
    }
    # an English vault: the multilingual phase does not start (``auto``, no query yet)
    assert s["languages"] == {"en": 45} and s["embedded_multilingual"] == 0
    assert s["self_tune"] == {"ran": False, "chosen": False}  # only with --self-tune
    assert first.stderr == ""  # no progress bar when stderr is not a terminal
    # the graph's rows are written: a start after the index parses and searches no note
    with Vault(example_vault, tmp_path / "idx", cache_dir=tmp_path / "cache") as vault:
        vault.indexer.sync()
        with caplog.at_level(logging.INFO, logger="zettel_lsp.graph.rows"):
            graph, _, _ = vault.load_graph()
    assert len(graph.cards) == 45 and graph.mentions_found == 0
    assert "45 from the database, 0 parsed" in caplog.text
    (example_vault / "baking" / "Crumb.md").unlink()
    second = json.loads(run(*args).stdout)
    assert (second["indexed"], second["unchanged"], second["deleted"], second["embedded"]) == (
        0,
        44,
        1,
        0,
    )


def test_search_json_finds_the_card_about_the_query(indexed_vault: Path, tmp_path: Path) -> None:
    example_vault = indexed_vault
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


def test_rows_no_leg_found_read_via_links(indexed_vault: Path, tmp_path: Path) -> None:
    """An empty query answers with the most-linked cards: no leg found them, the links did."""
    dirs = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    out = run("search", str(indexed_vault), "", "--limit", "2", *dirs)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert len(rows) == 2 and all(r.endswith("[via links]") for r in rows), out.stdout
    assert "[]" not in out.stdout


def test_a_russian_search_finds_english_cards(example_vault: Path, tmp_path: Path) -> None:
    # English cards (the example vault's baking folder), a query in Russian: ``auto`` embeds
    # every card with the multilingual model first (once; the index keeps it), then the dense
    # leg uses it
    baking = example_vault / "baking"
    args = ["search", str(baking), "дать муке и воде постоять перед замесом", "--json"]
    args += ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    out = run(*args, "--limit", "5")
    assert out.returncode == 0, out.stderr
    assert "Autolyse.md" in [r["path"] for r in json.loads(out.stdout)]
    off = run(*args, "--limit", "5", "--multilingual", "off")
    assert off.returncode == 0, off.stderr
    state = read_state(tmp_path / "idx")
    assert state is not None
    assert state.multilingual_all is True and state.multilingual_model.startswith(
        "use-multilingual"
    )
    assert all(f.multilingual for f in state.files.values())


def write_beir(root: Path) -> Path:
    """A tiny judged collection in BEIR layout, with a citation graph."""
    docs = [
        ("d1", "Sourdough starter", "A starter is flour and water fermented by wild yeast."),
        ("d2", "Reciprocal rank fusion", "RRF merges ranked lists by summing 1/(k + rank)."),
        ("d3", "Tides", "The moon's gravity raises the ocean in two bulges: the tides."),
        ("d4", "Garbage collection: a survey", ""),  # title only, unsafe ':' in the name
        ("d5", "Tides", "A 1950s jazz album."),  # a repeated title
    ]
    root.mkdir()
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    queries = [
        ("q1", "wild yeast bread culture"),
        ("q2", "combining ranked result lists"),
        ("q3", "why does the sea rise and fall"),
        ("q4", "memory reclamation in programming languages"),
        ("q5", "an unjudged query"),
    ]
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries)
    )
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\n"
    )
    (root / "links.tsv").write_text("src\tdst\ttype\nd2\td4\tcitation\nd3\td5\tcitation\n")
    return root


def test_eval_beir_end_to_end(tmp_path: Path) -> None:
    coll = write_beir(tmp_path / "coll")
    args = ["eval-beir", str(coll), "--work-dir", str(tmp_path / "work")]
    args += ["--cache-dir", str(tmp_path / "cache")]
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert (r["collection"], r["docs"], r["queries"], r["queries_total"]) == ("coll", 5, 4, 5)
    assert set(r["overall"]) >= {"ndcg@10", "mrr", "recall@100", "ndcg@5", "hit@1"}
    assert r["overall"]["recall@100"] == 1.0 and r["overall"]["mrr"] >= 0.5
    assert r["by_category"]["coll"]["queries"] == 4
    assert r["legs"] == ["dense", "bm25", "keyword", "title"] and r["graph"] is True
    assert r["vault_reused"] is False and r["index_dir"] == str(tmp_path / "work" / "index")
    vault = tmp_path / "work" / "vault"
    assert sorted(p.name for p in vault.glob("*.md")) == [
        "Garbage collection a survey.md",
        "Reciprocal rank fusion.md",
        "Sourdough starter.md",
        "Tides (d3).md",
        "Tides (d5).md",
    ]
    assert (
        "## Cites\n\n- [[Garbage collection a survey|Garbage collection: a survey]]"
        in (vault / "Reciprocal rank fusion.md").read_text()
    )
    # second run: the vault copy is reused; human output with one leg and custom weights
    again = run(*args, "--legs", "bm25", "--no-graph", "--weights", "bm25=1.5")
    assert again.returncode == 0, again.stderr
    assert "Collection coll" in again.stdout and "(reused)" in again.stdout
    assert "recall@100" in again.stdout and "4 judged queries scored (of 5)" in again.stdout
    # the collection folder is never a work folder, and bad weights are refused
    bad = run("eval-beir", str(coll), "--work-dir", str(coll / "w"))
    assert bad.returncode == 2 and "inside the collection folder" in bad.stderr
    assert not (coll / "w").exists()
    bad = run(*args, "--weights", "dense=two")
    assert bad.returncode != 0 and "not a number" in bad.stderr
    missing = run("eval-beir", str(tmp_path / "nope"), "--work-dir", str(tmp_path / "w2"))
    assert missing.returncode == 2 and "not a folder" in missing.stderr


def test_weights_option() -> None:
    from zettel_lsp.cli.common import CliError, parse_weights
    from zettel_lsp.search.engine import DEFAULT_WEIGHTS

    assert parse_weights(None) == DEFAULT_WEIGHTS
    assert parse_weights("dense=1, title=0") == DEFAULT_WEIGHTS | {"dense": 1.0, "title": 0.0}
    for bad, reason in [
        ("dense", "LEG=W"),
        ("sparse=1", "LEG=W"),
        ("dense=-1", ">= 0"),
        ("dense=nan", ">= 0"),
        ("dense=1,dense=2", "twice"),
        (",", "empty"),
    ]:
        with pytest.raises(CliError, match=reason):
            parse_weights(bad)


def test_title_source_option(tmp_path: Path) -> None:
    """--title-source picks the title rule wherever vault options are taken."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Linear Algebra.md").write_text("# Notes\n\nVectors and matrices.\n")
    (vault / "Power Supply Unit.md").write_text("# PSU\n\nWatts.\n")
    (vault / "202311211530.md").write_text("# Atomic notes\n\nOne idea per card.\n")

    def card(name: str, *more: str) -> dict[str, object]:
        out = run("graph", str(vault), "--json", "--card", name, *more)
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout)["card"])

    # auto: the file name is the title, the id-named card takes its H1, "PSU" is an alias
    assert card("Notes")["resolved"] is None
    assert card("Atomic notes")["stage"] == "title"
    psu = card("PSU")
    assert psu["stage"] == "alias" and psu["resolved"] == {
        "path": "Power Supply Unit.md",
        "title": "Power Supply Unit",
    }
    # h1: every opening H1 is the title (the rule before titleSource)
    notes = card("Notes", "--title-source", "h1")
    assert notes["stage"] == "title"
    assert notes["resolved"] == {"path": "Linear Algebra.md", "title": "Notes"}
    # filename: even the id-named card is titled by its file name
    assert card("Atomic notes", "--title-source", "filename")["resolved"] is None
    bad = run("graph", str(vault), "--title-source", "heading")
    assert bad.returncode == 2 and "invalid choice: 'heading'" in bad.stderr
    from zettel_lsp.cli import build_parser

    for command in (["index", "v"], ["search", "v", "q"], ["suggest", "v", "c.md"]):
        args = build_parser().parse_args([*command, "--title-source", "frontmatter"])
        assert args.title_source == "frontmatter"


def test_fusion_option(capsys: pytest.CaptureFixture[str]) -> None:
    from zettel_lsp.cli import build_parser
    from zettel_lsp.cli.common import _search_options

    parse = build_parser().parse_args
    assert _search_options(parse(["search", "v", "q"]), 10).fusion == "dbsf"
    assert _search_options(parse(["search", "v", "q", "--fusion", "convex"]), 10).fusion == "convex"
    assert _search_options(parse(["search", "v", "q"]), 10).known_item == 1.0
    assert _search_options(parse(["eval", "v", "g", "--known-item", "0"]), 10).known_item == 0.0
    assert _search_options(parse(["search", "v", "q"]), 10).exact_title_first
    assert not _search_options(parse(["eval", "v", "g", "--no-exact-title"]), 10).exact_title_first
    assert _search_options(parse(["eval", "v", "g.json", "--fusion", "rrf"]), 10).fusion == "rrf"
    with pytest.raises(SystemExit):
        parse(["search", "v", "q", "--fusion", "average"])
    assert "invalid choice: 'average'" in capsys.readouterr().err


def run_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zettel_lsp", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_suggest_takes_a_card_as_any_path_or_a_name(indexed_vault: Path, tmp_path: Path) -> None:
    """An absolute path, a path relative to the current folder or to the vault, or a title; a
    near miss gets "did you mean" (issue #14: an absolute path was glued to the vault's)."""
    example_vault = indexed_vault
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    card = example_vault / "retrieval" / "Vector database.md"
    forms = [
        (str(card), tmp_path),  # absolute
        ("retrieval/Vector database.md", tmp_path),  # relative to the vault
        ("Vector database.md", example_vault / "retrieval"),  # relative to the current folder
        ("./retrieval/Vector database.md", example_vault),
        ("Vector database", tmp_path),  # its title
        ("vector database", tmp_path),  # as a [[link]] would name it
    ]
    for form, cwd in forms:
        out = run_in(cwd, "suggest", str(example_vault), form, "--json", *where)
        assert out.returncode == 0, (form, out.stderr)
        assert json.loads(out.stdout)["card"] == "retrieval/Vector database.md", form
    miss = run("suggest", str(example_vault), "Vector databse", *where)
    assert miss.returncode == 2 and miss.stdout == ""
    assert "did you mean 'Vector database' (retrieval/Vector database.md)?" in miss.stderr
    (tmp_path / "elsewhere.md").write_text("# Elsewhere\n")
    outside = run("suggest", str(example_vault), str(tmp_path / "elsewhere.md"), *where)
    assert outside.returncode == 2 and "is not inside the vault" in outside.stderr


def test_graph_card_offers_near_misses(example_vault: Path) -> None:
    out = run("graph", str(example_vault), "--card", "Vectr database")
    assert out.returncode == 0, out.stderr
    assert "[[Vectr database]] does not resolve to any card" in out.stdout
    assert "did you mean 'Vector database' (retrieval/Vector database.md)?" in out.stdout
    as_json = json.loads(run("graph", str(example_vault), "--json", "--card", "Levian").stdout)
    assert as_json["card"]["did_you_mean"][0]["path"] == "baking/Levain.md"


def test_one_table_of_exit_codes(tmp_path: Path) -> None:
    """The same mistake ends with the same code from every command (docs/cli.md)."""
    from zettel_lsp.cli.common import (
        EXIT_FAILED,
        EXIT_INTERRUPTED,
        EXIT_NO_ANSWER,
        EXIT_OK,
        EXIT_USAGE,
    )

    assert (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_ANSWER, EXIT_INTERRUPTED) == (0, 1, 2, 3, 130)
    missing = str(tmp_path / "nope")
    for command in (
        ["index", missing],
        ["search", missing, "q"],
        ["suggest", missing, "a.md"],
        ["graph", missing],
        ["ask", missing, "q"],
        ["eval", missing, __file__],
    ):
        out = (
            run(*command, "--index-dir", str(tmp_path / "i"))
            if command[0] != "graph"
            else run(*command)
        )
        assert out.returncode == EXIT_USAGE, (command, out.stderr)
        assert out.stderr.count("\n") == 1 and "does not exist" in out.stderr, command
    vault = tmp_path / "v"
    vault.mkdir()
    not_golden = run("eval", str(vault), __file__, "--index-dir", str(tmp_path / "i"))
    assert not_golden.returncode == EXIT_USAGE and "not a judged-queries file" in not_golden.stderr
    assert "Traceback" not in not_golden.stderr
    for bad in (
        ["--legs", "nope"],
        ["--weights", "dense=two"],
        ["--limit", "0"],
        ["--known-item", "-1"],
        ["--known-item", "nan"],
    ):
        out = run("search", str(vault), "q", *bad)
        assert out.returncode == EXIT_USAGE and out.stderr.startswith("zettel-lsp: "), bad
        assert "Traceback" not in out.stderr


def test_an_empty_folder_is_indexed_with_a_warning(tmp_path: Path) -> None:
    vault = tmp_path / "empty"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "notes.txt").write_text("not a note")
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    out = run("index", str(vault), *where)
    assert out.returncode == 0, out.stderr
    assert "Indexed 0 cards" in out.stdout
    assert "warning: no notes found in" in out.stderr and ".md" in out.stderr
    found = run("search", str(vault), "anything", *where)
    assert found.returncode == 0 and "warning: no notes found" in found.stderr


def test_suggest_lists_each_mentioned_card_once_as_the_server_ranks_them(tmp_path: Path) -> None:
    """Issue #14: the same mention was listed once per occurrence, and mentions inside URLs
    were offered. The CLI shows what the editors show: each card once with its lines."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sourdough.md").write_text("Bread leavened by a culture.\n")
    for name in ("Rye", "Spelt", "Wheat"):
        (vault / f"{name}.md").write_text(f"{name} makes a good [[Sourdough]].\n")
    (vault / "Note.md").write_text(
        "Sourdough needs time.\n\nSee https://example.org/Sourdough for more.\n\n"
        "A second Sourdough loaf.\n"
    )
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    text = run("suggest", str(vault), "Note.md", *where)
    assert text.returncode == 0, text.stderr
    lines = [line for line in text.stdout.splitlines() if "→ [[Sourdough]]" in line]
    assert lines == ["  'Sourdough' → [[Sourdough]]  (lines 1, 5; confident)"], text.stdout
    out = json.loads(run("suggest", str(vault), "Note.md", "--json", *where).stdout)
    mentions = out["unlinked_mentions"]
    assert [m["line"] for m in mentions] == [0, 4]
    assert all(m["count"] == 2 and m["confident"] and m["confidence"] > 0.5 for m in mentions)


def stored_calibration(index_dir: Path) -> Calibration | None:
    db = IndexDB(index_dir, readonly=True)
    try:
        return load_calibration(db)
    finally:
        db.close()


def test_index_chooses_the_suggestion_weights_and_suggest_only_reads_them(
    indexed_vault: Path, tmp_path: Path
) -> None:
    """Issue #43: the first ``suggest`` on a large vault waited tens of seconds while it chose
    the weights. ``suggest`` answers with the stored or default weights; ``index`` chooses
    them after embedding when asked (``--self-tune``)."""
    idx = tmp_path / "idx"
    where = ["--index-dir", str(idx), "--cache-dir", str(tmp_path / "cache")]
    card = "retrieval/Vector database.md"
    first = run("suggest", str(indexed_vault), card, "--json", *where)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["related"]  # with the default weights
    assert "choosing" not in first.stderr and stored_calibration(idx) is None
    made = run("index", str(indexed_vault), "--json", "--self-tune", *where)
    assert made.returncode == 0, made.stderr
    s = json.loads(made.stdout)
    assert s["self_tune"] == {"ran": True, "chosen": True} and s["seconds"]["self_tune"] > 0
    assert "choosing the suggestions' weights" in made.stderr
    assert stored_calibration(idx) is not None
    again = json.loads(run("index", str(indexed_vault), "--json", "--self-tune", *where).stdout)
    assert again["self_tune"] == {"ran": False, "chosen": True}


def test_index_chooses_no_weights_unless_asked(indexed_vault: Path, tmp_path: Path) -> None:
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    out = run("index", str(indexed_vault), "--json", *where)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["self_tune"] == {"ran": False, "chosen": False}
    assert out.stderr == ""
