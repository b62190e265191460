"""Scale benchmark (issue #18): the existing benchmarks at growing vault sizes, one table.

    python benchmarks/scale.py --sizes 13k,25000,50000,100000 --work DIR
        [--real ../shared/data/vaults/zettelkasten-13k] [--skip cold,interrupted,...]
        [--json | --markdown] [--fresh] [--from-results DIR] [--ndcg-reference 13000]

**What.** For every size, the existing benchmark scripts run as subprocesses with ``--json``;
this script only composes their JSON (it measures nothing itself, except where it stops the
indexer for the interrupted start). ``13k`` is the real vault (``--real``); a number ``N`` is a
generated vault ``DIR/vN``, made with ``benchmarks/make_vault.py N DIR/vN`` when missing (its
judged set ``DIR/vN.judged.json`` beside it). Steps per size (``--skip`` takes these names):

- ``graph``: ``graph_bench.py V --runs R`` (the ``zettel-lsp graph`` process and its phases);
- ``cold``: ``index_bench.py V --keep DIR/index/<size>/bench`` (cold index, the model alone,
  lexical-ready, peak RSS, warm start, edit to searchable); its kept copy of the vault and index
  serve the next three steps. ``baseline`` skips the model-alone timing (``--no-baseline``);
- ``search``: ``search_latency.py`` on that index (in-process, the same queries at every size:
  the English ones unless ``--all-languages``, since a query in another language starts the
  multilingual phase for every card of these English vaults);
  it also writes the parsed-card cache, as a first session would;
- ``eval``: ``zettel-lsp eval VCOPY DIR/vN.judged.json --json`` (nDCG@10 of the planted set;
  generated vaults only). The reference size (``--ndcg-reference``, default 13000 cards,
  generated: the same judged queries on the same cards, issue #18) is made and evaluated too
  when it is not one of ``--sizes``; the table shows each size's difference to it;
- ``lsp``: ``lsp_latency.py`` on that index (warm start: first answer, ready, the phases seen in
  ``zettel.status``, the p95 of every method, and the server's peak RSS over the run);
- ``interrupted``: a vault's first index on a fresh ``DIR/index/<size>/interrupted``, stopped
  with SIGKILL once the lexical phase is done and ``--interrupt-at`` of the cards have their
  vectors in the saved state, then ``lsp_latency.py --startup-only`` on that index: the first
  answer and ready of a server that resumes mid-embedding. ``--interrupt-with server``
  (default): the language server makes the first index (an editor opened on the vault, then
  killed: the case of issue #18); ``cli``: ``python -m zettel_lsp index V`` makes it, which
  compacts between its phases (docs/indexing.md), so its index reopens faster than a server's.

Every sub-benchmark's JSON is saved as ``DIR/results/<size>/<step>.json`` (its stderr beside it,
``walls.json`` with the wall seconds of each step) and reused unless ``--fresh``: a long run
resumes where it stopped, and ``--from-results DIR`` prints the table again without running
anything. Index folders live under ``DIR/index``, never in the project.

**The table.** One row per figure, one column per size, then the growth exponent ``b`` of
``figure ~ N^b``: least squares of log(figure) on log(N) over the generated sizes (the real
vault is left out: another corpus), and the exponent between the smallest and the largest
generated size alone (log(f_max/f_min) / log(N_max/N_min), i.e. 25k -> 100k). ``!`` marks an
exponent above 1.2 (issue #18: no start-up step may grow faster than N^1.2 between 25k and
100k). Figures no benchmark reports are listed at the end, never estimated.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
DEFAULT_REAL = ROOT.parent / "shared" / "data" / "vaults" / "zettelkasten-13k"
DEFAULT_QUERIES = ROOT.parent / "shared" / "eval" / "obsidian-help.golden.json"
REAL = "13k"
STEPS = ("graph", "cold", "search", "eval", "lsp", "interrupted")
SKIPPABLE = (*STEPS, "baseline")
RESULT_FILES = {
    "graph": "graph_bench",
    "cold": "index_bench",
    "search": "search_latency",
    "eval": "eval",
    "lsp": "lsp_latency",
    "interrupted": "lsp_interrupted",
    "baseline": "model_alone",  # only when the cold step ran without it (Runner.add_baseline)
}
LIMIT = 1.2  # the growth limit for start-up steps
DEFAULT_LSP_ARGS = (
    "--runs 1 --hover-samples 100 --action-samples 100 --editing-samples 50 --renames 0"
)
PHASES = ("starting", "syncing", "graph", "embedding", "ready")


# ------------------------------------------------------------------ sizes


@dataclass(frozen=True)
class Size:
    label: str  # "13k" (the real vault) or the number of generated cards
    n: int | None  # generated cards; None for the real vault

    @property
    def real(self) -> bool:
        return self.n is None


def parse_sizes(text: str) -> list[Size]:
    """``"13k,25000,50000"`` -> sizes; ``13k`` (or ``real``) is the real vault."""
    out: list[Size] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.lower() in (REAL, "real"):
            size = Size(REAL, None)
        else:
            try:
                n = int(part.replace("_", ""))
            except ValueError:
                msg = f"size {part!r}: a number of cards, or 13k for the real vault"
                raise ValueError(msg) from None
            if n <= 0:
                raise ValueError(f"size {part!r}: must be positive")
            size = Size(str(n), n)
        if size not in out:
            out.append(size)
    if not out:
        raise ValueError("no sizes")
    return out


def sizes_in(results: Path) -> list[Size]:
    """The sizes that have a results folder (for --from-results without --sizes)."""
    labels = [p.name for p in results.iterdir() if p.is_dir()] if results.is_dir() else []
    sizes = [Size(REAL, None)] if REAL in labels else []
    sizes += sorted((Size(x, int(x)) for x in labels if x.isdigit()), key=lambda s: s.n or 0)
    return sizes


# ------------------------------------------------------------------ growth exponents


def fit_exponent(points: Sequence[tuple[float, float]]) -> float | None:
    """b of log(f) = a + b log(N), least squares over (N, f) with both positive; None if fewer
    than two distinct N."""
    pts = [(math.log(n), math.log(f)) for n, f in points if n > 0 and f is not None and f > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return sxy / sxx


def pair_exponent(points: Sequence[tuple[float, float]]) -> float | None:
    """log(f_max/f_min) / log(N_max/N_min) between the smallest and largest N (25k -> 100k)."""
    pts = sorted((n, f) for n, f in points if n > 0 and f is not None and f > 0)
    if len(pts) < 2 or pts[0][0] == pts[-1][0]:
        return None
    (n0, f0), (n1, f1) = pts[0], pts[-1]
    return math.log(f1 / f0) / math.log(n1 / n0)


# ------------------------------------------------------------------ figures

Results = dict[str, Any]  # step -> its saved JSON (one size)


def get(data: Any, *keys: str) -> float | None:
    for k in keys:
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return float(data) if isinstance(data, int | float) and not isinstance(data, bool) else None


def phase_steps(startup: Any) -> dict[str, float]:
    """Time spent in each ``zettel.status`` phase: from its first sighting to the next phase's
    (lsp_latency's ``phases_ms``, polled every 50 ms); the last phase seen has none."""
    seen = startup.get("phases_ms", {}) if isinstance(startup, dict) else {}
    order = sorted(
        ((p, float(t)) for p, t in seen.items() if isinstance(t, int | float)), key=lambda x: x[1]
    )
    return {p: round(order[i + 1][1] - t, 1) for i, (p, t) in enumerate(order[:-1])}


BENCHMARK = {
    "graph": "graph_bench",
    "cold": "index_bench",
    "search": "search_latency",
    "eval": "zettel-lsp eval",
    "lsp": "lsp_latency",
    "interrupted": "lsp_latency --startup-only",
}


# the language server's own start-up steps, in order (server/startup.py, ``STEPS``)
SERVER_STEPS = ("open", "sync", "graph", "settle", "watch", "resync", "warm-up")


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    field: str  # "step:key.key" (a saved JSON's field) or "step:phase:NAME" (phase_steps)
    step: bool = False  # a start-up step (the N^1.2 limit)

    @property
    def source(self) -> str:
        result, path = self.field.split(":", 1)
        if path.startswith("phase:"):
            return f"{BENCHMARK[result]} startup.phases_ms ({path[6:]} to the next phase)"
        return f"{BENCHMARK[result]} {path}"

    def value(self, r: Results) -> float | None:
        result, path = self.field.split(":", 1)
        if path.startswith("phase:"):
            return phase_steps((r.get(result) or {}).get("startup")).get(path[6:])
        return get(r.get(result), *path.split("."))


def _methods(*names: tuple[str, str, str]) -> tuple[Figure, ...]:
    return tuple(
        Figure(k, f"{label} p95", "ms", f"lsp:methods.{m}.p95_ms") for k, label, m in names
    )


FIGURES: tuple[Figure, ...] = (
    Figure("cards", "cards", "", "cold:cold.cards"),
    Figure("chunks", "chunks", "", "cold:cold.chunks"),
    Figure("cold", "cold index", "s", "cold:cold.seconds"),
    Figure("model_only", "the model alone, same chunks", "s", "cold:model_only.seconds"),
    Figure("cold_over_model", "cold index / model alone", "x", "cold:cold_over_model_only"),
    Figure("lexical_ready", "lexical-ready, cold", "s", "cold:cold.lexical_ready_seconds", True),
    Figure("dense", "cold: dense phase", "s", "cold:cold.dense_seconds"),
    Figure("peak_rss", "peak RSS of zettel-lsp index", "MB", "cold:cold.peak_rss_mb"),
    Figure("warm_start", "zettel-lsp index, warm", "s", "cold:warm_start_seconds.median", True),
    Figure(
        "server_peak_rss",
        "peak RSS of the language server",
        "MB",
        "lsp:server_memory.before_shutdown.peak_mb",
    ),
    Figure("first_answer", "warm: first answer", "ms", "lsp:startup.first_answer_ms", True),
    Figure("ready", "warm: ready", "ms", "lsp:startup.index_ready_ms", True),
    Figure(
        "spawn",
        "warm step: spawn -> initialize",
        "ms",
        "lsp:startup.spawn_to_initialize_result_ms",
        True,
    ),
    *(
        Figure(f"warm_{ph}", f"warm step: {ph}", "ms", f"lsp:phase:{ph}", True)
        for ph in ("starting", "syncing", "graph", "embedding")
    ),
    *(
        Figure(
            f"warm_server_{k}", f"warm, server's step: {k}", "s", f"lsp:startup.steps_s.{k}", True
        )
        for k in SERVER_STEPS
    ),
    Figure(
        "int_first_answer",
        "interrupted: first answer",
        "ms",
        "interrupted:startup.first_answer_ms",
        True,
    ),
    Figure("int_ready", "interrupted: ready", "ms", "interrupted:startup.index_ready_ms"),
    *(
        Figure(f"int_{ph}", f"interrupted step: {ph}", "ms", f"interrupted:phase:{ph}", True)
        for ph in ("starting", "syncing", "graph")
    ),
    *(
        Figure(
            f"int_server_{k}",
            f"interrupted, server's step: {k}",
            "s",
            f"interrupted:startup.steps_s.{k}",
            True,
        )
        for k in SERVER_STEPS[:3]
    ),
    Figure("int_embedding", "interrupted: embedding the rest", "ms", "interrupted:phase:embedding"),
    *_methods(
        ("symbol_p95", "workspace/symbol", "workspace/symbol"),
        ("hover_p95", "hover", "textDocument/hover"),
        ("completion_p95", "completion", "textDocument/completion"),
        ("action_p95", "codeAction", "textDocument/codeAction"),
        ("resolve_p95", "codeAction/resolve", "codeAction/resolve"),
    ),
    Figure("search_p95", "search in-process p95", "ms", "search:all legs + graph.p95_ms"),
    Figure(
        "edit_lexical",
        "edit -> keyword search, median",
        "s",
        "cold:edit_to_searchable.lexical_seconds.median",
    ),
    Figure(
        "edit_lexical_p95",
        "edit -> keyword search, p95",
        "s",
        "cold:edit_to_searchable.lexical_seconds.p95",
    ),
    Figure(
        "edit_dense",
        "edit -> vectors stored, median",
        "s",
        "cold:edit_to_searchable.dense_seconds.median",
    ),
    Figure("graph_wall", "zettel-lsp graph (median)", "s", "graph:wall_seconds.median", True),
    Figure("graph_load", "graph step: read + parse", "s", "graph:phase_seconds_median.load", True),
    Figure("graph_build", "graph step: links", "s", "graph:phase_seconds_median.graph", True),
    Figure("ndcg", "planted set nDCG@10", "", "eval:overall.ndcg@10"),
)

NOT_REPORTED = (
    "the `step: PHASE` rows are the time between phase changes seen by polling `zettel.status` "
    "every 50 ms (lsp_latency.py phases_ms): a step shorter than ~50 ms may not be seen at all; "
    "the `server's step` rows are the server's own timings of its start-up steps "
    "(`zettel.status` startup_seconds, each step from its start to the next one's; steps that "
    "run beside another thread, such as sync beside the model's load, include the wait)",
    "nDCG@10 of the real vault (13k): it has no planted judged set",
)


def compose(
    sizes: Sequence[Size], results: dict[str, Results], ndcg_reference: float | None = None
) -> dict[str, Any]:
    """The table as rows of values per size label, with both exponents over the generated
    sizes, from each size's saved results (step -> JSON)."""
    rows: list[dict[str, Any]] = []
    for fig in FIGURES:
        values = {s.label: _safe(fig.value, results.get(s.label, {})) for s in sizes}
        rows.append(_row(fig.key, fig.label, fig.unit, fig.source, fig.step, values, sizes))
        if fig.key == "ndcg":
            delta = {
                s.label: None
                if ndcg_reference is None or values[s.label] is None
                else round(values[s.label] - ndcg_reference, 4)  # type: ignore[operator]
                for s in sizes
            }
            row = _row(
                "ndcg_delta",
                "nDCG@10 minus the reference size's",
                "",
                "eval overall.ndcg@10, difference",
                False,
                delta,
                sizes,
                fit=False,
            )
            rows.append(row)
    missing = [
        f"{r['label']}: no value at any size (step skipped, failed or not reported)"
        for r in rows
        if all(v is None for v in r["values"].values()) and r["key"] != "ndcg_delta"
    ]
    return {
        "sizes": [s.label for s in sizes],
        "generated": [s.label for s in sizes if not s.real],
        "limit": LIMIT,
        "rows": rows,
        "over_limit": [r["key"] for r in rows if r["over"]],
        "steps_over_limit": [r["key"] for r in rows if r["over"] and r["step"]],
        "ndcg_reference": ndcg_reference,
        "not_measured": [*NOT_REPORTED, *missing],
    }


def _safe(fn: Callable[[Results], float | None], r: Results) -> float | None:
    try:
        return fn(r)
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


def _row(
    key: str,
    label: str,
    unit: str,
    source: str,
    step: bool,
    values: dict[str, float | None],
    sizes: Sequence[Size],
    fit: bool = True,
) -> dict[str, Any]:
    pts = [(float(s.n), v) for s in sizes if s.n is not None and (v := values[s.label]) is not None]
    b = fit_exponent(pts) if fit else None
    b2 = pair_exponent(pts) if fit else None
    over = any(x is not None and x > LIMIT for x in (b, b2))
    return {
        "key": key,
        "label": label,
        "unit": unit,
        "source": source,
        "step": step,
        "values": values,
        "exponent_fit": None if b is None else round(b, 3),
        "exponent_ends": None if b2 is None else round(b2, 3),
        "over": over,
    }


# ------------------------------------------------------------------ output


def fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "n/a"
    if unit == "" and abs(v) < 1 and v != 0:
        return f"{v:.3f}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _exp(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _headers(table: dict[str, Any]) -> list[str]:
    first = table["generated"][0] if table["generated"] else "min"
    last = table["generated"][-1] if table["generated"] else "max"
    cols = [f"{s} (real)" if s == REAL else s for s in table["sizes"]]
    return ["figure", "unit", *cols, "b (fit)", f"b ({first}->{last})", ""]


def _cells(row: dict[str, Any], table: dict[str, Any]) -> list[str]:
    mark = "!" if row["over"] else ""
    if row["over"] and row["step"]:
        mark = "! step"
    label = row["label"] + (" *" if row["step"] else "")
    vals = [fmt(row["values"][s], row["unit"]) for s in table["sizes"]]
    exps = [_exp(row["exponent_fit"]), _exp(row["exponent_ends"])]
    return [label, row["unit"], *vals, *exps, mark]


def machine_line(machine: dict[str, Any]) -> str:
    ram = machine.get("ram_gb")
    return (
        f"machine: {machine.get('cores')} cores, Python {machine.get('python')}, "
        f"{'?' if ram is None else f'{ram:.0f}'} GB RAM, {machine.get('platform')}"
    )


def render_text(table: dict[str, Any], machine: dict[str, Any]) -> str:
    head = _headers(table)
    body = [_cells(r, table) for r in table["rows"]]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        out = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        out += [c.rjust(w) for c, w in zip(cells[2:-1], widths[2:-1], strict=True)]
        return "  ".join([*out, cells[-1]]).rstrip()

    lines = [machine_line(machine), "", line(head), line(["-" * w for w in widths])]
    lines += [line(c) for c in body]
    lines += ["", *_footer(table)]
    return "\n".join(lines)


def render_markdown(table: dict[str, Any], machine: dict[str, Any]) -> str:
    head = _headers(table)
    lines = [machine_line(machine).replace("machine:", "Machine:"), ""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 3) + ["---"]) + "|")
    for r in table["rows"]:
        cells = [c.replace("|", "\\|").replace("*", "\\*") for c in _cells(r, table)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for x in _footer(table):
        x = x.replace("*", "\\*")
        lines.append(f"  - {x.strip()}" if x.startswith("  ") else f"- {x}")
    return "\n".join(lines)


def _footer(table: dict[str, Any]) -> list[str]:
    out = [
        "* a start-up step (issue #18: none may grow faster than N^1.2); b: figure ~ N^b over "
        f"the generated sizes ({', '.join(table['generated']) or 'none'}); ! b > {LIMIT}",
    ]
    ref = table.get("ndcg_reference")
    out.append(f"nDCG@10 reference: {'n/a' if ref is None else f'{ref:.4f}'}")
    if table["steps_over_limit"]:
        out.append("start-up steps over the limit: " + ", ".join(table["steps_over_limit"]))
    out.append("not measured:")
    out += [f"  {x}" for x in table["not_measured"]]
    return out


# ------------------------------------------------------------------ running


def machine_info() -> dict[str, Any]:
    ram = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    ram = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "ram_gb": None if ram is None else round(ram, 1),
        "platform": platform.platform(),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def log(msg: str) -> None:
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work: Path = args.work.resolve()
        self.results = self.work / "results"
        self.cache = self.work / "cache"

    def folder(self, size: Size) -> Path:
        return self.results / size.label

    def vault(self, size: Size) -> Path:
        return self.args.real.resolve() if size.real else self.work / f"v{size.n}"

    def judged(self, size: Size) -> Path | None:
        return None if size.real else self.work / f"v{size.n}.judged.json"

    def bench_dir(self, size: Size) -> Path:
        return self.work / "index" / size.label / "bench"

    def saved(self, size: Size, step: str) -> Path:
        return self.folder(size) / f"{RESULT_FILES[step]}.json"

    def ensure_vault(self, size: Size) -> Path:
        vault = self.vault(size)
        if size.real:
            if not vault.is_dir():
                raise RuntimeError(f"the real vault {vault} is not a folder (--real)")
            return vault
        judged = self.judged(size)
        assert judged is not None
        if vault.is_dir() and any(vault.iterdir()):
            if not judged.is_file():
                raise RuntimeError(f"{vault} exists without {judged.name}: remove it or finish it")
            return vault
        log(f"[{size.label}] make_vault.py {size.n} {vault}")
        t0 = time.perf_counter()
        cmd = [sys.executable, str(BENCH / "make_vault.py"), str(size.n), str(vault)]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=sys.stderr)
        self.record_wall(size, "make_vault", time.perf_counter() - t0)
        return vault

    def record_wall(self, size: Size, step: str, seconds: float) -> None:
        path = self.folder(size) / "walls.json"
        walls = json.loads(path.read_text()) if path.is_file() else {}
        walls[step] = round(seconds, 1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(walls, indent=2) + "\n")

    def run_json(self, size: Size, step: str, cmd: list[str]) -> dict[str, Any] | None:
        """Run ``cmd``, save its stdout JSON as the step's result (stderr beside it)."""
        out = self.saved(size, step)
        out.parent.mkdir(parents=True, exist_ok=True)
        err_path = out.with_suffix(".stderr.log")
        log(f"[{size.label}] {step}: {shlex.join(cmd)}")
        t0 = time.perf_counter()
        with err_path.open("w", encoding="utf-8") as err:
            proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
        wall = time.perf_counter() - t0
        self.record_wall(size, step, wall)
        if proc.returncode != 0:
            log(f"[{size.label}] {step} FAILED (exit {proc.returncode}); see {err_path}")
            return None
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            log(f"[{size.label}] {step}: stdout is not JSON; see {err_path}")
            return None
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        log(f"[{size.label}] {step} done in {wall:.1f} s")
        return data

    def want(self, size: Size, step: str, forced: bool = False) -> bool:
        if step in self.args.skip:
            return False
        return self.args.fresh or forced or not self.saved(size, step).is_file()

    def run_size(self, size: Size) -> None:
        a = self.args
        vault = self.ensure_vault(size)
        py = sys.executable
        if self.want(size, "graph"):
            cmd = [py, str(BENCH / "graph_bench.py"), str(vault), "--runs", str(a.graph_runs)]
            self.run_json(size, "graph", [*cmd, "--json"])
        keep = self.bench_dir(size)
        cold_ran = False
        if self.want(size, "cold"):
            cmd = [py, str(BENCH / "index_bench.py"), str(vault), "--json", "--keep", str(keep)]
            cmd += ["--edits", str(a.edits)]
            if "baseline" in a.skip:
                cmd.append("--no-baseline")
            cold_ran = self.run_json(size, "cold", cmd) is not None
        elif "baseline" not in a.skip:
            self.add_baseline(size, vault)
        copy, index = keep / "vault", keep / "index"
        have_index = (index / "index.db").is_file() and copy.is_dir()
        for step in ("search", "eval", "lsp"):
            if not self.want(size, step, forced=cold_ran):
                continue
            if step == "eval" and size.real:
                continue
            if not have_index:
                log(f"[{size.label}] {step}: no kept index in {keep} (run the cold step)")
                continue
            if step == "search":
                cmd = [py, str(BENCH / "search_latency.py"), str(copy), str(a.queries)]
                cmd += ["--index-dir", str(index), "--repeat", str(a.search_repeat), "--json"]
                cmd += self.language_args()
            elif step == "eval":
                cmd = [py, "-m", "zettel_lsp", "eval", str(copy), str(self.judged(size))]
                cmd += ["--index-dir", str(index), "--json"]
            else:
                cmd = [py, str(BENCH / "lsp_latency.py"), str(copy), "--json"]
                cmd += ["--index-dir", str(index), "--cache-dir", str(keep / "cache")]
                cmd += [
                    "--queries",
                    str(a.queries),
                    *self.language_args(),
                    *shlex.split(a.lsp_args),
                ]
            self.run_json(size, step, cmd)
        if self.want(size, "interrupted"):
            self.run_interrupted(size, vault)

    def add_baseline(self, size: Size, vault: Path) -> None:
        """The model alone for a cold index measured earlier without it (``--skip baseline``
        then, e.g. to keep a long run short): ``index_bench.py --baseline-only`` on the same
        vault, merged into the saved cold result with its ratio (``model_only.separate``)."""
        saved = self.saved(size, "cold")
        if not saved.is_file():
            return
        cold = json.loads(saved.read_text(encoding="utf-8"))
        if "model_only" in cold:
            return
        cmd = [sys.executable, str(BENCH / "index_bench.py"), str(vault), "--baseline-only"]
        cmd += ["--json", "--cache-dir", str(self.cache)]
        data = self.run_json(size, "baseline", cmd)
        if data is None:
            return
        base = data["model_only"]
        base["separate"] = True  # measured in its own run, not right after the cold index
        cold["model_only"] = base
        cold["cold_over_model_only"] = round(cold["cold"]["seconds"] / base["seconds"], 3)
        saved.write_text(json.dumps(cold, indent=2) + "\n", encoding="utf-8")

    def language_args(self) -> list[str]:
        """English queries only, unless ``--all-languages``: the vaults are English, and one
        query in another language starts the multilingual phase for every card (``auto``), hours
        of background work at 100k cards that the latencies would then measure."""
        return [] if self.args.all_languages else ["--english-only"]

    def run_interrupted(self, size: Size, vault: Path) -> None:
        a = self.args
        index = self.work / "index" / size.label / "interrupted"
        if index.exists():
            shutil.rmtree(index)
        index.parent.mkdir(parents=True, exist_ok=True)
        interrupt = interrupt_server if a.interrupt_with == "server" else interrupt_index
        info = interrupt(vault, index, self.cache, a.interrupt_at, self.folder(size))
        info_path = self.folder(size) / "interrupt.json"
        info_path.write_text(json.dumps(info, indent=2) + "\n")
        self.record_wall(size, "interrupted_index", info["seconds"])
        if not info["killed"]:
            log(f"[{size.label}] interrupted: {info['note']}")
            return
        log(
            f"[{size.label}] {info['by']} killed after {info['seconds']:.1f} s with "
            f"{info['cards_embedded']}/{info['cards']} cards embedded (saved state)"
        )
        cmd = [sys.executable, str(BENCH / "lsp_latency.py"), str(vault), "--json"]
        cmd += ["--index-dir", str(index), "--cache-dir", str(self.cache), "--startup-only"]
        cmd += ["--queries", str(a.queries), "--ready-timeout", str(a.interrupted_ready_timeout)]
        cmd += self.language_args()
        data = self.run_json(size, "interrupted", cmd)
        if data is not None:  # the kill moment goes with the result it explains
            data["interrupt"] = info
            self.saved(size, "interrupted").write_text(json.dumps(data, indent=2) + "\n")

    def run_reference(self, ref: Size) -> None:
        """The nDCG reference size when it is not one of --sizes: the vault and eval only (eval
        builds its own index)."""
        if "eval" in self.args.skip or (not self.args.fresh and self.saved(ref, "eval").is_file()):
            return
        vault = self.ensure_vault(ref)
        index = self.work / "index" / ref.label / "eval"
        cmd = [sys.executable, "-m", "zettel_lsp", "eval", str(vault), str(self.judged(ref))]
        self.run_json(ref, "eval", [*cmd, "--index-dir", str(index), "--json"])


def read_state(index: Path) -> tuple[int, int] | None:
    """(cards, cards with vectors) in the index's saved state, None before the first save."""
    from zettel_lsp.index.state import read_state  # the state's own reader (its format)

    state = read_state(index)
    if state is None:
        return None
    return len(state.files), state.dense_done


def kill_point(state: tuple[int, int] | None, fraction: float) -> bool:
    """Whether a first index whose saved state is ``state`` (cards, cards with vectors) is
    where the interrupted start kills it: every card listed, at least ``fraction`` of them
    (at least one) with vectors, not all."""
    if state is None:
        return False
    cards, dense = state
    return bool(cards) and max(1, math.ceil(fraction * cards)) <= dense < cards


def killed(
    by: str, t0: float, state: tuple[int, int] | None, fraction: float, index: Path
) -> dict[str, Any]:
    assert state is not None
    return {
        "by": by,
        "killed": True,
        "signal": "SIGKILL",
        "seconds": round(time.perf_counter() - t0, 1),
        "cards": state[0],
        "cards_embedded": state[1],
        "fraction_wanted": fraction,
        "uncompacted_points": uncompacted_points(index),
    }


def not_killed(
    by: str,
    t0: float,
    exit_code: int | None,
    what: str,
    fraction: float,
    state: tuple[int, int] | None,
) -> dict[str, Any]:
    return {
        "by": by,
        "killed": False,
        "seconds": round(time.perf_counter() - t0, 1),
        "exit_code": exit_code,
        "note": f"{what} before it could be interrupted at {fraction:.0%} of the cards "
        f"embedded; last state {state}",
    }


def uncompacted_points(index: Path) -> int | None:
    """Points written since the last compaction, by the index's saved state (what the next
    open rebuilds in memory); None before the first save."""
    from zettel_lsp.index.state import read_state

    state = read_state(index)
    return None if state is None else state.uncompacted


def interrupt_index(
    vault: Path, index: Path, cache: Path, fraction: float, logs: Path, poll: float = 0.5
) -> dict[str, Any]:
    """Start ``zettel-lsp index`` on the fresh folder ``index`` and SIGKILL it once the saved
    state shows the lexical phase done (every card listed, nothing pending) and at least
    ``fraction`` of the cards (at least one) with vectors, before the last."""
    logs.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "zettel_lsp", "index", str(vault), "--json"]
    cmd += ["--index-dir", str(index), "--cache-dir", str(cache)]
    log(f"interrupted: {shlex.join(cmd)}")
    t0 = time.perf_counter()
    with (logs / "interrupted_index.stderr.log").open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        state = None
        try:
            while proc.poll() is None:
                time.sleep(poll)
                state = read_state(index)
                if kill_point(state, fraction):
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    return killed("cli", t0, state, fraction, index)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    what = f"the indexer ended (exit {proc.returncode})"
    return not_killed("cli", t0, proc.returncode, what, fraction, state)


def interrupt_server(
    vault: Path,
    index: Path,
    cache: Path,
    fraction: float,
    logs: Path,
    poll: float = 0.5,
    timeout: float = 4 * 3600,
) -> dict[str, Any]:
    """What :func:`interrupt_index` does, with the language server making the first index: it
    is started over stdio on ``vault`` with the fresh folder ``index`` (as an editor opening
    the vault for the first time), and SIGKILLed at the same point of its saved state. The
    server's stderr comes out on this script's."""
    return asyncio.run(_interrupt_server(vault, index, cache, fraction, logs, poll, timeout))


async def _interrupt_server(
    vault: Path, index: Path, cache: Path, fraction: float, logs: Path, poll: float, timeout: float
) -> dict[str, Any]:
    from lsprotocol import types
    from pytest_lsp import client_capabilities
    from pytest_lsp.client import make_test_lsp_client

    logs.mkdir(parents=True, exist_ok=True)
    vault = vault.resolve()
    cmd = [sys.executable, "-m", "zettel_lsp"]
    log(f"interrupted: the language server ({shlex.join(cmd)}) indexes {vault} into {index}")
    client = make_test_lsp_client()
    t0 = time.perf_counter()
    state = None
    await client.start_io(*cmd, cwd=ROOT)  # its stderr comes out on this script's
    server = client._server
    assert server is not None
    try:
        capabilities = client_capabilities("visual_studio_code")
        client.capabilities = capabilities
        await client.initialize_async(
            types.InitializeParams(
                process_id=os.getpid(),
                capabilities=capabilities,
                root_uri=vault.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)],
                initialization_options={
                    "indexDir": str(index.resolve()),
                    "cacheDir": str(cache.resolve()),
                },
            )
        )
        client.initialized(types.InitializedParams())
        while server.returncode is None and time.perf_counter() - t0 < timeout:
            await asyncio.sleep(poll)
            state = read_state(index)
            if kill_point(state, fraction):
                server.send_signal(signal.SIGKILL)
                await server.wait()
                return killed("server", t0, state, fraction, index)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
        with contextlib.suppress(Exception):
            await client.stop()  # type: ignore[no-untyped-call]
    what = f"the server ended (exit {server.returncode}) or took over {timeout:.0f} s"
    return not_killed("server", t0, server.returncode, what, fraction, state)


def load_results(work: Path, sizes: Sequence[Size]) -> dict[str, Results]:
    out: dict[str, Results] = {}
    for size in sizes:
        folder = work / "results" / size.label
        out[size.label] = {}
        for step, name in RESULT_FILES.items():
            path = folder / f"{name}.json"
            if path.is_file():
                try:
                    out[size.label][step] = json.loads(path.read_text(encoding="utf-8"))
                except ValueError:
                    log(f"{path} is not JSON: left out")
    return out


def load_walls(work: Path, sizes: Sequence[Size]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for size in sizes:
        path = work / "results" / size.label / "walls.json"
        if path.is_file():
            out[size.label] = json.loads(path.read_text(encoding="utf-8"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", help="13k (the real vault) and numbers of generated cards")
    ap.add_argument("--work", type=Path, help="vaults, index folders and results go here")
    ap.add_argument("--real", type=Path, default=DEFAULT_REAL, help="the real 13k vault")
    ap.add_argument("--skip", default="", help=f"comma-separated steps: {', '.join(SKIPPABLE)}")
    ap.add_argument("--fresh", action="store_true", help="run steps again even when saved")
    ap.add_argument("--from-results", type=Path, help="print the table from DIR; run nothing")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--sources", action="store_true", help="print where each figure comes from")
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES, help="symbol/search queries")
    ap.add_argument(
        "--all-languages",
        action="store_true",
        help="keep the queries not in English (default: English only; see language_args)",
    )
    ap.add_argument("--ndcg-reference", type=int, default=13_000, help="0: no nDCG reference")
    ap.add_argument("--graph-runs", type=int, default=3)
    ap.add_argument("--edits", type=int, default=5, help="index_bench --edits")
    ap.add_argument("--search-repeat", type=int, default=3)
    ap.add_argument("--lsp-args", default=DEFAULT_LSP_ARGS, help="extra lsp_latency.py arguments")
    ap.add_argument(
        "--interrupt-at",
        type=float,
        default=0.5,
        help="kill the indexer once this share of the cards has vectors (default %(default)s)",
    )
    ap.add_argument(
        "--interrupt-with",
        choices=("server", "cli"),
        default="server",
        help="what makes the first index that is killed: the language server (default; an "
        "editor closed during a vault's first index) or `zettel-lsp index`",
    )
    ap.add_argument(
        "--interrupted-ready-timeout",
        type=float,
        default=1800,
        help="seconds the resumed server may take to be ready (then: n/a)",
    )
    args = ap.parse_args(argv)
    if args.sources:
        for fig in FIGURES:
            print(f"{fig.label:<34} {fig.unit:<3} {fig.source}")
        return 0
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if unknown := args.skip - set(SKIPPABLE):
        ap.error(f"--skip: unknown {', '.join(sorted(unknown))} (known: {', '.join(SKIPPABLE)})")
    work = args.from_results or args.work
    if work is None:
        ap.error("--work DIR (or --from-results DIR) is required")
    work = work.resolve()
    try:
        sizes = parse_sizes(args.sizes) if args.sizes else sizes_in(work / "results")
    except ValueError as exc:
        ap.error(str(exc))
    if not sizes:
        ap.error("--sizes is required (no results found)")
    ref = Size(str(args.ndcg_reference), args.ndcg_reference) if args.ndcg_reference > 0 else None

    machine_path = work / "results" / "machine.json"
    if args.from_results is None:
        args.work = work
        runner = Runner(args)
        runner.results.mkdir(parents=True, exist_ok=True)
        machine = machine_info()
        machine_path.write_text(json.dumps(machine, indent=2) + "\n")
        for size in sizes:
            try:
                runner.run_size(size)
            except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
                log(f"[{size.label}] stopped: {exc}")
        if ref is not None and ref not in sizes and any(not s.real for s in sizes):
            try:
                runner.run_reference(ref)
            except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
                log(f"[{ref.label}] nDCG reference stopped: {exc}")
    elif machine_path.is_file():
        machine = json.loads(machine_path.read_text(encoding="utf-8"))
    else:
        machine = machine_info()

    results = load_results(work, sizes)
    ref_value = None
    if ref is not None:
        ref_results = results.get(ref.label) or load_results(work, [ref])[ref.label]
        ref_value = get(ref_results.get("eval"), "overall", "ndcg@10")
    table = compose(sizes, results, ref_value)
    walls = load_walls(work, [*sizes, *([ref] if ref is not None else [])])
    interrupts = {
        s.label: results[s.label]["interrupted"].get("interrupt")
        for s in sizes
        if "interrupted" in results[s.label]
    }
    if args.json:
        out = {"machine": machine, **table, "walls_seconds": walls, "interrupts": interrupts}
        out["ndcg_reference_size"] = None if ref is None else ref.label
        print(json.dumps(out, indent=2))
    elif args.markdown:
        print(render_markdown(table, machine))
    else:
        print(render_text(table, machine))
        for label, w in walls.items():
            print(f"wall seconds, {label}: " + ", ".join(f"{k} {v:.0f}" for k, v in w.items()))
        for label, info in interrupts.items():
            if info:
                print(
                    f"interrupted start, {label}: indexer killed ({info.get('signal')}) after "
                    f"{info.get('seconds')} s, {info.get('cards_embedded')}/{info.get('cards')} "
                    "cards embedded in the saved state"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
