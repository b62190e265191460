"""Index benchmark: cold index, lexical-ready time, warm start, edit-to-searchable, model
throughput, peak memory.

    python benchmarks/index_bench.py VAULT [--json] [--edits 5] [--no-baseline] [--keep DIR]
                                           [--multilingual auto|on|off]

What it does (each figure is measured, none estimated):
1. cold index: ``zettel-lsp index VAULT --json`` in a fresh process with an empty index folder;
   wall time, chunks, chunks/s, seconds until lexical search works (from process launch),
   model tokens/s during the dense phase, peak RSS of that process;
2. warm start: the same command again (no changes), 3 runs, median;
3. edit-to-searchable: with a watcher running (default 500 ms debounce), append a unique word to
   a card and time until keyword search finds it, and until its vectors are stored; median/p95;
4. the model's own time on the same chunks (sorted by length, batches of 16), to compare the
   cold index against (skip with --no-baseline).
The vault is never modified: edits happen in a temporary copy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.embedders import make_embedder
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.index.watch import VaultWatcher
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.workdir import (
    WorkDirError,
    claim_work_dir,
    make_temp_work_dir,
    remove_work_dir,
    write_marker,
)

TOOL = "zettel-lsp index_bench"  # in the marker of its work folder


def run_index(
    vault: Path, index_dir: Path, cache_dir: Path, multilingual: str = "auto"
) -> tuple[dict[str, Any], float, float]:
    """(summary JSON, wall seconds, seconds from launch to lexical-ready) of one CLI run."""
    cmd = [sys.executable, "-m", "zettel_lsp", "index", str(vault), "--json"]
    cmd += ["--index-dir", str(index_dir), "--cache-dir", str(cache_dir)]
    cmd += ["--multilingual", multilingual]
    t_launch = time.time()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    summary = json.loads(out.stdout)
    return summary, wall, summary["lexical_ready_at"] - t_launch


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def edit_to_searchable(
    vault: Path, index_dir: Path, cache_dir: Path, edits: int, multilingual: str = "auto"
) -> dict[str, Any]:
    ix = Indexer(vault, index_dir, IndexSettings(multilingual=multilingual), cache_dir=cache_dir)
    ix.sync()
    watcher = VaultWatcher(ix)  # default debounce
    watcher.start()
    watcher.ready.wait(5)
    time.sleep(1.0)
    targets = sorted(ix.state.files, key=lambda p: ix.state.files[p].size)[
        len(ix.state.files) // 2 :
    ]
    lexical: list[float] = []
    dense: list[float] = []
    try:
        for i in range(edits):
            rel = targets[i * 97 % len(targets)]
            word = f"zqxbench{i}{os.getpid()}"
            path = vault / rel
            t0 = time.perf_counter()
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\nBenchmark edit {word}.\n")
            found = None
            while time.perf_counter() - t0 < 30:
                hits = ix.store.keyword_search(word, 1)
                if hits and found is None:
                    found = time.perf_counter() - t0
                    lexical.append(found)
                f = ix.state.files.get(rel)
                if found is not None and f is not None and f.dense and not ix.dense_pending:
                    dense.append(time.perf_counter() - t0)
                    break
                time.sleep(0.01)
            time.sleep(0.5)
    finally:
        watcher.stop()
        ix.close()
    return {
        "edits": edits,
        "lexical_seconds": {"median": statistics.median(lexical), "p95": pct(lexical, 0.95)},
        "dense_seconds": {"median": statistics.median(dense), "p95": pct(dense, 0.95)},
        "debounce_ms": watcher.debounce_ms,
    }


def model_baseline(vault: Path, cache_dir: Path) -> dict[str, Any]:
    cards, _ = load_vault(vault)
    emb = make_embedder(cache_dir=cache_dir)
    texts = [c.embed_text for cs in chunk_cards(cards, emb.count_tokens) for c in cs]
    emb.embed(texts[:16])  # load the model outside the timing
    t0 = time.perf_counter()
    emb.embed(texts)
    secs = time.perf_counter() - t0
    tokens = emb.model_tokens(texts)
    return {"chunks": len(texts), "seconds": secs, "tokens": tokens, "tokens_per_s": tokens / secs}


def _rounded(figures: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--edits", type=int, default=5)
    ap.add_argument("--no-baseline", action="store_true", help="skip the model-only timing")
    ap.add_argument(
        "--baseline-only",
        action="store_true",
        help="time the model alone on the vault's chunks and nothing else (a cold run measured "
        "earlier without it: benchmarks/scale.py merges the two)",
    )
    ap.add_argument(
        "--cache-dir", type=Path, help="--baseline-only: the model's folder (default: a new one)"
    )
    ap.add_argument(
        "--multilingual",
        choices=("auto", "on", "off"),
        default="auto",
        help="the multilingual setting of every run (default %(default)s)",
    )
    ap.add_argument(
        "--keep",
        type=Path,
        help="keep the work folder here (index, copy of vault); new, empty or kept before",
    )
    args = ap.parse_args()
    if args.baseline_only:
        with tempfile.TemporaryDirectory(prefix="zettel-bench-model-") as tmp:
            base = model_baseline(args.vault, args.cache_dir or Path(tmp))
        out = {
            "vault": str(args.vault),
            "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
            "model_only": _rounded(base),
        }
        print(json.dumps(out, indent=2))
        return 0

    # The work folder is one zettel-lsp made (workdir marker), never beside the vault's notes:
    # a --keep folder must be new, empty or kept by an earlier run (then it is emptied first).
    try:
        if args.keep:
            work = args.keep.resolve()
            if claim_work_dir(work, vault=args.vault, tool=TOOL):
                remove_work_dir(work, tool=TOOL, vault=args.vault)
            write_marker(work, tool=TOOL)
        else:
            work = make_temp_work_dir(vault=args.vault, tool=TOOL, prefix="zettel-bench-")
    except WorkDirError as exc:
        print(f"index_bench: {exc}", file=sys.stderr)
        return 2
    cache = work / "cache"
    vault = work / "vault"
    shutil.copytree(args.vault, vault, symlinks=True)
    index_dir = work / "index"
    result: dict[str, Any] = {
        "vault": str(args.vault),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
    }
    # warm the model folder assembly so the cold run measures indexing, not a 23 MB copy
    make_embedder(cache_dir=cache)

    summary, wall, lexical_ready = run_index(vault, index_dir, cache, args.multilingual)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    secs = summary["seconds"]
    result["cold"] = {
        "seconds": round(wall, 2),
        "cards": summary["cards"],
        "chunks": summary["chunks"],
        "chunks_per_s": round(summary["chunks"] / wall, 1),
        "lexical_ready_seconds": round(lexical_ready, 2),
        "dense_seconds": secs["dense"],
        "multilingual_seconds": secs["multilingual"],
        "embedded_multilingual": summary["embedded_multilingual"],
        "languages": summary["languages"],
        "model_seconds_in_index": secs["model"],
        "model_tokens": summary["model_tokens"],
        "model_tokens_per_s": round(summary["model_tokens"] / max(secs["model"], 1e-9)),
        "peak_rss_mb": round(peak_kb / 1024),
    }
    result["multilingual"] = args.multilingual
    warm = [run_index(vault, index_dir, cache, args.multilingual)[1] for _ in range(3)]
    result["warm_start_seconds"] = {"median": round(statistics.median(warm), 2), "runs": warm}
    result["edit_to_searchable"] = edit_to_searchable(
        vault, index_dir, cache, args.edits, args.multilingual
    )
    if not args.no_baseline:
        base = model_baseline(args.vault, cache)
        result["model_only"] = _rounded(base)
        result["cold_over_model_only"] = round(wall / base["seconds"], 3)
    if not args.keep:
        remove_work_dir(work, tool=TOOL, vault=args.vault)
    print(json.dumps(result, indent=2) if args.json else _human(result))
    return 0


def _human(r: dict[str, Any]) -> str:
    c = r["cold"]
    e = r["edit_to_searchable"]
    lines = [
        f"{r['vault']} on {r['machine']['cores']} cores",
        f"  cold index        {c['seconds']:.1f} s  ({c['cards']:,} cards, {c['chunks']:,} chunks, "
        f"{c['chunks_per_s']:.0f} chunks/s)",
        f"  lexical ready     {c['lexical_ready_seconds']:.1f} s after launch",
        f"  model             {c['model_tokens_per_s']:,} tokens/s ({c['model_tokens']:,} tokens)",
        f"  multilingual      {c['multilingual_seconds']:.1f} s ({c['embedded_multilingual']:,} "
        f"chunks; setting {r['multilingual']}; languages {c['languages']})",
        f"  peak RSS          {c['peak_rss_mb']:,} MB",
        f"  warm start        {r['warm_start_seconds']['median']:.2f} s (median of 3)",
        f"  edit→lexical      {_mp(e['lexical_seconds'])}",
        f"  edit→vectors      {_mp(e['dense_seconds'])}",
    ]
    if "model_only" in r:
        lines.append(
            f"  model alone       {r['model_only']['seconds']:.1f} s on the same chunks; "
            f"cold index / model = {r['cold_over_model_only']:.2f}"
        )
    return "\n".join(lines)


def _mp(d: dict[str, float]) -> str:
    return f"{d['median']:.2f} s median, {d['p95']:.2f} s p95"


if __name__ == "__main__":
    raise SystemExit(main())
