"""Multilingual probe (issue #17): the default MiniLM embedder against the multilingual
Universal Sentence Encoder, dense retrieval only, on the Obsidian Help vault.

    python benchmarks/multilingual_probe.py [--vault DIR] [--golden FILE] [--ru52 FILE]
        [--cache-dir DIR] [--repeat 3] [--json]

Every note is chunked with the project's chunker (``chunk_cards``, as the indexer does, each
model counting its own tokens), the chunks are embedded, and a query ranks the notes by their
best chunk's cosine. Printed for each model: nDCG@5 and MRR (metrics of ``zettel_lsp.eval``:
relevant paths gain 1, partial 0.5) on the 52 English golden queries, the 6 Russian golden
queries (category ``multilingual``) and the 52 Russian translations of ``ru52``; the chunks
embedded per second; the median and p90 of one query's embedding time (``embed_query``, every
query ``--repeat`` times after one warm-up). No BM25, no graph: the dense leg alone.
Needs ../shared beside the project; without it, says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from zettel_lsp.eval.evaluate import GoldenQuery, load_golden
from zettel_lsp.eval.metrics import mean_metrics, query_metrics
from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.embedders import DEFAULT_MODEL, USE_MODEL, make_embedder
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import read_note
from zettel_lsp.notes.scan import iter_note_paths

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CHUNK_TOKENS = 256  # the indexer's default (IndexSettings.chunk_tokens)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def read_cards(vault: Path) -> list[Card]:
    cards = []
    for rel in iter_note_paths(vault):
        res = read_note(vault / rel)
        if res.ok:
            cards.append(
                parse_card(rel, res.text, decoded_with_replacement=res.replaced_invalid_utf8)
            )
    return cards


def probe_model(
    name: str,
    cards: list[Card],
    query_sets: dict[str, list[GoldenQuery]],
    cache_dir: Path,
    repeat: int,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    embedder = make_embedder(name, cache_dir=cache_dir, max_length=CHUNK_TOKENS)
    embedder.embed_query("load the model")  # loads it (and the query session)
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    chunked = chunk_cards(cards, embedder.count_tokens, CHUNK_TOKENS)
    chunk_s = time.perf_counter() - t0
    owners = [c.card_path for chunks in chunked for c in chunks]
    texts = [c.embed_text for chunks in chunked for c in chunks]
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    embed_s = time.perf_counter() - t0
    paths = sorted(set(owners))
    column = {p: i for i, p in enumerate(paths)}
    owner_col = np.array([column[p] for p in owners])

    def rank(query_vec: np.ndarray) -> list[str]:
        sims = vectors @ query_vec
        best = np.full(len(paths), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner_col, sims)
        return [paths[i] for i in np.argsort(-best, kind="stable")]

    quality: dict[str, dict[str, float]] = {}
    for set_name, queries in query_sets.items():
        rows = [
            query_metrics(rank(embedder.embed_query(q.query)), set(q.relevant), q.partial)
            for q in queries
        ]
        m = mean_metrics(rows)
        quality[set_name] = {"ndcg@5": m["ndcg@5"], "mrr": m["mrr"], "hit@5": m["hit@5"]}

    all_queries = [q.query for qs in query_sets.values() for q in qs]
    times: list[float] = []
    for _ in range(repeat):
        for q in all_queries:
            t = time.perf_counter()
            embedder.embed_query(q)
            times.append(time.perf_counter() - t)
    embedder.close()
    return {
        "model": name,
        "model_id": embedder.model_id,
        "dim": int(vectors.shape[1]),
        "load_s": load_s,
        "notes": len(paths),
        "chunks": len(texts),
        "chunking_s": chunk_s,
        "embed_s": embed_s,
        "chunks_per_s": len(texts) / embed_s,
        "query_ms_median": statistics.median(times) * 1000,
        "query_ms_p90": pct(times, 0.9) * 1000,
        "query_timings": len(times),
        "quality": quality,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, default=SHARED / "data/vaults/obsidian-help-en")
    ap.add_argument("--golden", type=Path, default=SHARED / "eval/obsidian-help.golden.json")
    ap.add_argument("--ru52", type=Path, default=SHARED / "eval/obsidian-help.ru52.json")
    ap.add_argument("--cache-dir", type=Path, help="model cache (default: a temporary folder)")
    ap.add_argument("--models", nargs="+", default=[DEFAULT_MODEL, USE_MODEL])
    ap.add_argument("--repeat", type=int, default=3, help="timings per query")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    missing = [p for p in (args.vault, args.golden, args.ru52) if not p.exists()]
    if missing:
        print(
            "multilingual probe skipped: "
            + ", ".join(str(p) for p in missing)
            + " not found (../shared is beside the project in CI and on the developers' machines)"
        )
        return 0

    golden = load_golden(args.golden)
    query_sets = {
        "en52 (golden, English)": [q for q in golden if q.category != "multilingual"],
        "ru6 (golden, Russian)": [q for q in golden if q.category == "multilingual"],
        "ru52 (translated)": load_golden(args.ru52),
    }
    cards = read_cards(args.vault)
    out: dict[str, Any] = {
        "vault": str(args.vault),
        "notes": len(cards),
        "cores": os.cpu_count(),
        "query_sets": {k: len(v) for k, v in query_sets.items()},
        "models": [],
    }
    with tempfile.TemporaryDirectory(prefix="multilingual-probe-") as tmp:
        cache = args.cache_dir or Path(tmp)
        for name in args.models:
            out["models"].append(probe_model(name, cards, query_sets, cache, args.repeat))
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0

    print(f"vault {out['vault']}: {out['notes']} notes; {out['cores']} cores")
    print("queries: " + ", ".join(f"{k}: {n}" for k, n in out["query_sets"].items()))
    for m in out["models"]:
        print(
            f"\n{m['model']} ({m['model_id']}, {m['dim']}-d): load {m['load_s']:.2f} s; "
            f"{m['chunks']} chunks of {m['notes']} notes (chunked in {m['chunking_s']:.2f} s), "
            f"embedded in {m['embed_s']:.1f} s = {m['chunks_per_s']:.1f} chunks/s; query embedding "
            f"median {m['query_ms_median']:.1f} ms, p90 {m['query_ms_p90']:.1f} ms "
            f"({m['query_timings']} timings)"
        )
    names = [m["model"].rsplit("/", 1)[-1] for m in out["models"]]
    print(f"\n{'query set':<26}" + "".join(f"{n[:26]:>28}" for n in names))
    print(f"{'':<26}" + "".join(f"{'nDCG@5   MRR   Hit@5':>28}" for _ in names))
    for set_name in query_sets:
        row = f"{set_name:<26}"
        for m in out["models"]:
            q = m["quality"][set_name]
            row += f"{q['ndcg@5']:>16.3f}{q['mrr']:>6.3f}{q['hit@5']:>6.2f}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
