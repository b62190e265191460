"""benchmarks/scale.py: the growth exponents, the table composed from saved sub-benchmark JSON
(fixtures written here), the CLI on ``--from-results``, and the model-alone run merged into a
saved cold result."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks import scale

SIZES = (1000, 2000, 4000)


def test_fit_recovers_a_power_law_and_the_end_to_end_exponent() -> None:
    pts = [(float(n), 3.0 * n**1.3) for n in SIZES]
    assert scale.fit_exponent(pts) == pytest.approx(1.3)
    assert scale.pair_exponent(pts) == pytest.approx(1.3)
    # the pair exponent uses only the smallest and largest size: log(f100/f25) / log(4)
    bent = [(25_000.0, 1.0), (50_000.0, 10.0), (100_000.0, 4.0)]
    assert scale.pair_exponent(bent) == pytest.approx(1.0)
    slope = scale.fit_exponent(bent)
    assert slope is not None and 0 < slope < math.log(10) / math.log(2)
    # fewer than two usable points, zero or missing values: no exponent
    assert scale.fit_exponent([(1000.0, 5.0)]) is None
    assert scale.fit_exponent([(1000.0, 5.0), (2000.0, 0.0)]) is None
    assert scale.pair_exponent([(1000.0, 5.0), (1000.0, 6.0)]) is None


def test_sizes_and_phase_steps() -> None:
    sizes = scale.parse_sizes("13k, 25000,25_000,100000")
    assert [(s.label, s.n) for s in sizes] == [("13k", None), ("25000", 25000), ("100000", 100000)]
    with pytest.raises(ValueError):
        scale.parse_sizes("25k")
    steps = scale.phase_steps({"phases_ms": {"syncing": 3.0, "ready": 900.0, "graph": 40.0}})
    assert steps == {"syncing": 37.0, "graph": 860.0}  # the last phase seen has no duration
    assert scale.phase_steps(None) == {}


def write(folder: Path, name: str, data: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(data))


def fixtures(work: Path) -> None:
    """Saved results for three generated sizes and the real vault: the cold index grows as
    N^1.5, the graph phase (a start-up step) as N^1.25, the first answer stays flat;
    completion was never measured."""
    for n in SIZES:
        folder = work / "results" / str(n)
        write(
            folder,
            "index_bench",
            {
                "cold": {
                    "cards": n,
                    "chunks": 2 * n,
                    "seconds": 1e-3 * n**1.5,
                    "lexical_ready_seconds": 1e-3 * n,
                    "peak_rss_mb": 300 + n / 100,
                },
                "model_only": {"seconds": 0.9e-3 * n**1.5},
                "cold_over_model_only": 1.11,
                "warm_start_seconds": {"median": 1.0},
                "edit_to_searchable": {"lexical_seconds": {"median": 0.2, "p95": 0.3}},
            },
        )
        graph_ms = 1e-2 * n**1.25
        write(
            folder,
            "lsp_latency",
            {
                "startup": {
                    "first_answer_ms": 400.0,
                    "index_ready_ms": 100 + graph_ms,
                    "phases_ms": {"syncing": 5.0, "graph": 100.0, "ready": 100 + graph_ms},
                    "steps_s": {"open": 0.5, "sync": 1e-4 * n**1.3},
                },
                "methods": {"workspace/symbol": {"p95_ms": 20.0 + n / 1000}},
                "server_memory": {
                    "at_ready": {"peak_mb": 100.0},
                    "before_shutdown": {"peak_mb": 200.0 + n / 10, "rss_mb": 150.0},
                },
            },
        )
        write(folder, "eval", {"overall": {"ndcg@10": 0.8 - n / 1e5}})
    # the real vault: another corpus, shown but left out of every fit
    write(work / "results" / "13k", "index_bench", {"cold": {"cards": 13415, "seconds": 1e9}})
    (work / "results" / "1000" / "walls.json").write_text(json.dumps({"cold": 12.5}))


def test_table_from_saved_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixtures(tmp_path)
    assert scale.main(["--from-results", str(tmp_path), "--json", "--ndcg-reference", "1000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sizes"] == ["13k", "1000", "2000", "4000"]
    assert out["generated"] == ["1000", "2000", "4000"]
    rows = {r["key"]: r for r in out["rows"]}
    cold = rows["cold"]
    assert cold["values"]["13k"] == 1e9 and cold["values"]["4000"] == pytest.approx(4000**1.5 / 1e3)
    assert cold["exponent_fit"] == pytest.approx(1.5, abs=1e-3)
    assert cold["exponent_ends"] == pytest.approx(1.5, abs=1e-3)
    assert cold["over"] and not cold["step"]
    graph = rows["warm_graph"]
    assert graph["step"] and graph["over"]
    assert graph["exponent_fit"] == pytest.approx(1.25, abs=1e-3)
    # the server's own step timings are start-up steps too
    sync = rows["warm_server_sync"]
    assert sync["step"] and sync["exponent_fit"] == pytest.approx(1.3, abs=1e-3)
    assert rows["warm_server_open"]["exponent_fit"] == pytest.approx(0.0, abs=1e-9)
    assert out["steps_over_limit"] == ["warm_graph", "warm_server_sync"]
    assert out["over_limit"] == ["cold", "model_only", "warm_graph", "warm_server_sync"]
    assert rows["first_answer"]["exponent_fit"] == pytest.approx(0.0, abs=1e-9)
    assert not rows["first_answer"]["over"]
    assert rows["symbol_p95"]["values"]["2000"] == 22.0
    # the server's peak RSS is the high-water mark read before shutdown, not the one at ready
    assert rows["server_peak_rss"]["values"]["4000"] == 600.0
    assert not any(x.startswith("peak RSS of the language server") for x in out["not_measured"])
    # never measured: n/a everywhere, and listed
    assert all(v is None for v in rows["completion_p95"]["values"].values())
    assert rows["completion_p95"]["exponent_fit"] is None
    assert any(x.startswith("completion p95") for x in out["not_measured"])
    # nDCG@10 against the reference size
    assert out["ndcg_reference"] == pytest.approx(0.79)
    assert rows["ndcg_delta"]["values"]["4000"] == pytest.approx(-0.03)
    assert out["walls_seconds"]["1000"] == {"cold": 12.5}


def test_text_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixtures(tmp_path)
    args = ["--from-results", str(tmp_path), "--sizes", "1000,4000"]
    assert scale.main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("machine: ")
    cold = next(line for line in text.splitlines() if line.startswith("cold index "))
    assert cold.split()[-3:] == ["1.50", "1.50", "!"]
    assert "completion p95" in text and "n/a" in text
    assert scale.main([*args, "--markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert "| figure | unit | 1000 | 4000 | b (fit) | b (1000->4000) |  |" in md
    graph = next(line for line in md if line.startswith("| warm step: graph \\*"))
    assert graph.endswith("| ! step |")


def test_server_memory_reads_the_process_status() -> None:
    import os

    from benchmarks import lsp_latency

    got = lsp_latency.server_memory(os.getpid())
    if got is None:
        pytest.skip("no /proc/PID/status here (not Linux)")
    assert got["peak_mb"] >= got["rss_mb"] > 0
    assert got["anon_mb"] + got["file_mb"] <= got["rss_mb"] + 1  # RssShmem is the rest
    assert lsp_latency.server_memory(None) is None
    assert lsp_latency.server_memory(2**22 + 12345) is None  # no such process


def test_a_cold_result_without_the_model_alone_gets_it_from_its_own_run(tmp_path: Path) -> None:
    """``--skip cold`` with ``baseline`` wanted: ``index_bench.py --baseline-only`` (the real
    model on the vault's chunks) is run and merged into the saved cold result with its ratio."""
    vault = tmp_path / "v30"
    vault.mkdir()
    for i in range(30):
        (vault / f"Card {i}.md").write_text(f"# Card {i}\n\nA short thought number {i}.\n")
    (tmp_path / "v30.judged.json").write_text("[]")
    write(tmp_path / "results" / "30", "index_bench", {"cold": {"cards": 30, "seconds": 40.0}})
    steps = "graph,cold,search,eval,lsp,interrupted"
    assert scale.main(["--sizes", "30", "--work", str(tmp_path), "--skip", steps]) == 0
    saved = json.loads((tmp_path / "results" / "30" / "index_bench.json").read_text())
    base = saved["model_only"]
    assert base["chunks"] == 30 and base["separate"] is True and base["seconds"] > 0
    assert saved["cold_over_model_only"] == pytest.approx(40.0 / base["seconds"], rel=1e-2)
    assert saved["cold"] == {"cards": 30, "seconds": 40.0}  # the cold run itself untouched


def test_the_language_server_s_first_index_is_killed_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--interrupt-with server`` (the default): the language server indexes a fresh folder,
    as an editor opened on a new vault would, and is SIGKILLed once the lexical phase is done
    and a tenth of the cards have vectors: what it saved is a partial dense phase, after the
    compaction of its lexical points (the threshold lowered to 500 points for the test)."""
    from zettel_lsp.index.compact import COMPACT_AFTER_ENV

    monkeypatch.setenv(COMPACT_AFTER_ENV, "500")
    vault = tmp_path / "vault"
    vault.mkdir()
    words = "orbit garden kiln levain rook harbour comet pedal swarm glaze".split()
    for i in range(2000):  # long enough that the dense phase saves its state many times
        body = " ".join(words[(i * k) % len(words)] for k in range(150))
        (vault / f"Card {i}.md").write_text(f"# Card {i}\n\n{body} number {i}.\n")
    index = tmp_path / "index"
    info = scale.interrupt_server(
        vault, index, tmp_path / "cache", 0.1, tmp_path / "logs", 0.02, timeout=240
    )
    assert info["by"] == "server" and info["killed"], info
    assert info["cards"] == 2000 and 200 <= info["cards_embedded"] < 2000
    # the server compacted its lexical points before embedding: only vectors are left
    assert 0 < info["uncompacted_points"] <= info["cards_embedded"]
    state = scale.read_state(index)
    assert state is not None and state[0] == 2000 and 200 <= state[1] < 2000
