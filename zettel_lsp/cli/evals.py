"""``zettel-lsp eval``, ``eval-links`` and ``eval-beir``: the command line of ``eval/``."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from zettel_lsp.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    Subcommands,
    _add_index_options,
    _add_search_options,
    _add_self_tune_option,
    _add_vault_options,
    _check_vault,
    _command,
    _index_settings,
    _multilingual_for,
    _open_vault,
    _search_options,
    parse_legs,
    parse_weights,
)
from zettel_lsp.eval.beir import default_work_dir, judged_queries, load_beir, prepare_work_dir
from zettel_lsp.eval.evaluate import EvalReport, evaluate, load_golden
from zettel_lsp.eval.links import SeedIndex, evaluate_links, holdout_copy, load_holdout
from zettel_lsp.index.embedders import make_embedder
from zettel_lsp.index.status import Progress
from zettel_lsp.index.sync import chunker_id, default_cache_dir
from zettel_lsp.progress import TerminalProgress
from zettel_lsp.search.calibrate import calibrate, dump_document
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.suggest import (
    DEFAULT_SUGGEST_FUSION,
    GRAPH_LEGS,
    SUGGEST_LEGS,
    SuggestFusion,
)


def _add_eval_links(sub: Subcommands[argparse.ArgumentParser]) -> None:
    el = _command(
        sub,
        "eval-links",
        cmd_eval_links,
        "hold out links, un-link them in a temporary copy, and score link suggestions; "
        "--index-dir (optional) must be new, empty or made by eval-links",
    )
    el.add_argument("holdout", type=Path, help="TSV with src and dst columns")
    el.add_argument("--variant", choices=["mention", "removed"], default="mention")
    el.add_argument(
        "--legs",
        default=None,
        help="comma-separated suggestion legs to fuse (default: every leg with a default "
        f"weight; legs: {','.join(SUGGEST_LEGS)})",
    )
    el.add_argument(
        "--no-graph",
        action="store_true",
        help=f"leave out the graph legs ({','.join(GRAPH_LEGS)})",
    )
    el.add_argument(
        "--weights",
        metavar="LEG=W,...",
        help="suggestion fusion weight per leg (unnamed legs keep their default: "
        + ",".join(f"{k}={v:g}" for k, v in DEFAULT_SUGGEST_FUSION.weights.items())
        + ")",
    )
    el.add_argument(
        "--rrf-k", type=float, default=None, help="the fusion's RRF k (default %(default)s)"
    )
    el.add_argument("--depth", type=int, default=None, help="ranks read per leg (default 30)")
    el.add_argument(
        "--ablate",
        action="store_true",
        help="also score ours without each leg, without the graph legs, and each leg alone",
    )
    el.add_argument(
        "--seed-index",
        type=Path,
        metavar="DIR",
        help="start the copy's index from this index of the same vault (same model); it is "
        "copied, never written, and vectors of unchanged chunks are reused",
    )
    el.add_argument(
        "--dump-legs",
        type=Path,
        metavar="FILE",
        help="write every source's leg and baseline rankings to FILE (JSON) for offline tuning",
    )
    _add_self_tune_option(el)
    _add_index_options(el)
    _add_vault_options(el)


def _add_eval(sub: Subcommands[argparse.ArgumentParser]) -> None:
    ev = _command(sub, "eval", cmd_eval, "score search on judged queries (nDCG, MRR, Hit, Recall)")
    ev.add_argument("golden", type=Path, help="judged queries (obsidian-help.golden.json format)")
    ev.add_argument("--k", type=int, default=10)
    _add_search_options(ev)


def _add_eval_beir(sub: Subcommands[argparse.ArgumentParser]) -> None:
    eb = sub.add_parser(
        "eval-beir",
        help="score search on a judged IR collection in BEIR layout (nDCG@10, MRR, Recall@100)",
    )
    eb.add_argument(
        "collection", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/test.tsv"
    )
    eb.add_argument("--json", action="store_true", help="print one JSON object")
    eb.set_defaults(run=cmd_eval_beir)
    eb.add_argument(
        "--work-dir",
        type=Path,
        help="where the vault copy (vault/) and its index (index/) live (default: a folder "
        "per collection in the user cache); must be new, empty or made by eval-beir",
    )
    eb.add_argument(
        "--limit-queries", type=int, metavar="N", help="score only the first N judged queries"
    )
    _add_search_options(eb)


def eval_links_fusion(args: argparse.Namespace) -> SuggestFusion:
    """The suggestion fusion eval-links scores as ``ours``: the default, with ``--weights``,
    ``--rrf-k`` and ``--depth`` changed, and only ``--legs`` (minus the graph legs with
    ``--no-graph``)."""
    fusion = DEFAULT_SUGGEST_FUSION
    weights = parse_weights(args.weights, fusion.weights)
    fusion = replace(
        fusion,
        weights=weights,
        k=fusion.k if args.rrf_k is None else args.rrf_k,
        depth=fusion.depth if args.depth is None else args.depth,
    )
    if fusion.k < 0 or fusion.depth < 1:
        raise CliError("--rrf-k must be >= 0 and --depth >= 1")
    if args.legs is not None:
        # a leg asked for by name takes part even when its default weight is 0
        legs = parse_legs(args.legs, SUGGEST_LEGS)
        fusion = replace(fusion, weights={leg: weights[leg] or 1.0 for leg in legs})
    if args.no_graph:
        fusion = fusion.without(GRAPH_LEGS)
    if not fusion.legs:
        raise CliError("no suggestion leg left to fuse (see --legs, --no-graph, --weights)")
    return fusion


def seed_index_of(args: argparse.Namespace) -> SeedIndex:
    """``--seed-index``, with the model and chunker the copy's index would get anyway."""
    settings = _index_settings(args)
    embedder = make_embedder(
        settings.model,
        cache_dir=args.cache_dir or default_cache_dir(),
        max_length=settings.chunk_tokens,
        ollama=settings.ollama,
    )
    return SeedIndex(args.seed_index, {"model": embedder.model_id, "chunker": chunker_id(settings)})


def cmd_eval_links(args: argparse.Namespace) -> int:
    _check_vault(args.vault)
    if not args.holdout.is_file():
        raise CliError(f"hold-out file {args.holdout} not found")
    held = load_holdout(args.holdout)
    fusion = eval_links_fusion(args)
    seed = None if args.seed_index is None else seed_index_of(args)
    dump: list[dict[str, Any]] | None = [] if args.dump_legs is not None else None
    t0 = time.perf_counter()
    # the copy goes to a new temporary folder (removed afterwards); --index-dir, when given, must
    # be new, empty or made by eval-links, and apart from the vault (issue #12)
    with holdout_copy(args.vault, held, args.variant, args.index_dir, seed=seed) as hc:
        changed = hc.changed
        args.vault, args.index_dir = hc.vault, hc.index_dir
        vault = _open_vault(args)
        t_index = time.perf_counter() - t0
        progress = TerminalProgress()
        with vault:
            # as a server on the copy would: the weights chosen on the links it still has,
            # from the fusion asked for (its legs only)
            calibration = None
            if not args.no_self_tune:
                calibration = calibrate(
                    vault.engine,
                    title_source=vault.settings.title_source,
                    start=fusion,
                    progress=lambda d, t: progress(Progress("self-tune", d, t)),
                )
                progress.finish()
            chosen = fusion if calibration is None else calibration.fusion
            report = evaluate_links(
                vault,
                held,
                fusion=chosen,
                ablate=args.ablate,
                dump=dump,
                progress=lambda d, t: progress(Progress("suggest", d, t)),
                extra={} if calibration is None else {"ours-fixed": fusion},
            )
        progress.finish()
    out = {
        "variant": args.variant,
        "pairs": report.pairs,
        "sources": report.sources,
        "links_changed": changed,
        "fusion": {"weights": dict(chosen.weights), "k": chosen.k, "depth": chosen.depth},
        "self_tuned": None if calibration is None else calibration.to_json(),
        "rankers": report.rankers,
        "seconds": round(time.perf_counter() - t0, 1),
        "index_seconds": round(t_index, 1),
        "legs_ms": report.legs_ms,
    }
    if dump is not None:
        doc = dump_document(dump, args.variant, str(args.holdout))
        args.dump_legs.write_text(json.dumps(doc), encoding="utf-8")
    if args.json:
        print(json.dumps(out, indent=2))
        return EXIT_OK
    print(
        f"{report.pairs:,} held-out links from {report.sources:,} cards "
        f"({changed:,} links un-linked, variant {args.variant})"
    )
    print(f"{'':<22}{'recall@5':>10}{'recall@10':>11}{'mrr':>8}")
    for name, m in report.rankers.items():
        print(f"{name:<22}{m['recall@5']:>10.3f}{m['recall@10']:>11.3f}{m['mrr']:>8.3f}")
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    _check_vault(args.vault)
    if not args.golden.is_file():
        raise CliError(f"judged queries file {args.golden} not found")
    try:
        golden = load_golden(args.golden)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CliError(
            f"{args.golden} is not a judged-queries file (a JSON list of {{id, query, "
            f"relevant_paths, ...}}, see docs/evaluation.md): {type(exc).__name__}: {exc}"
        ) from exc
    opts = _search_options(args, max(args.k, 10))
    vault = _open_vault(args)
    with vault:
        _multilingual_for(vault, [q.query for q in golden])
        report = evaluate(lambda q: [r.path for r in vault.engine.search(q, opts)], golden, args.k)
    if args.json:
        print(json.dumps(_eval_dict(report, opts), ensure_ascii=False, indent=2))
        return EXIT_OK
    _print_eval(report)
    return EXIT_OK


BEIR_DEPTH = 100  # results per query in eval-beir: Recall@100 (and MRR over them)

BEIR_KEYS = ("ndcg@10", "mrr", f"recall@{BEIR_DEPTH}", "ndcg@5", "hit@1")


def cmd_eval_beir(args: argparse.Namespace) -> int:
    if args.limit_queries is not None and args.limit_queries < 1:
        raise CliError("--limit-queries must be at least 1")
    opts = _search_options(args, BEIR_DEPTH)
    t0 = time.perf_counter()
    collection = load_beir(args.collection)
    work = args.work_dir or default_work_dir(collection.root, args.cache_dir)
    try:
        wd = prepare_work_dir(collection, work, args.index_dir)
    except OSError as exc:
        raise CliError(f"cannot write the vault copy in {work}: {exc}", EXIT_FAILED) from exc
    golden = judged_queries(collection, wd.paths)
    if args.limit_queries is not None:
        golden = golden[: args.limit_queries]
    t_vault = time.perf_counter()
    args.vault, args.index_dir = wd.vault, wd.index
    vault = _open_vault(args)
    t_index = time.perf_counter()
    with vault:
        _multilingual_for(vault, [q.query for q in golden])

        def search(q: str) -> list[str]:
            # one ranking (its first 10 do not depend on the limit: search/engine.py)
            return [r.path for r in vault.engine.search(q, opts)]

        report = evaluate(search, golden, k=10, recall_k=BEIR_DEPTH)
    t_end = time.perf_counter()
    out: dict[str, Any] = {
        "collection": collection.name,
        "path": str(collection.root),
        "docs": len(collection.docs),
        "queries": len(golden),
        "queries_total": len(collection.queries),
        "links": len(collection.links),
        "work_dir": str(wd.root),
        "vault": str(wd.vault),
        "index_dir": str(wd.index),
        "vault_reused": wd.reused,
    }
    out |= _eval_dict(report, opts)
    out["seconds"] = {
        "vault": round(t_vault - t0, 1),
        "index": round(t_index - t_vault, 1),
        "queries": round(t_end - t_index, 1),
        "total": round(t_end - t0, 1),
    }
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(
        f"Collection {collection.name} ({collection.root}): {len(collection.docs):,} docs, "
        f"{len(golden):,} judged queries scored (of {len(collection.queries):,}), "
        f"{len(collection.links):,} links"
    )
    print(
        f"  vault {wd.vault} ({'reused' if wd.reused else 'written'}), index {wd.index}; "
        f"{out['seconds']['total']:.1f} s"
    )
    _print_eval(report, BEIR_KEYS)
    return EXIT_OK


def _eval_dict(report: EvalReport, opts: SearchOptions) -> dict[str, Any]:
    """What ``eval`` and ``eval-beir`` print with ``--json``: settings, means and misses."""
    return {
        "k": report.k,
        "legs": list(opts.legs),
        "graph": opts.graph,
        "weights": dict(opts.weights),
        "fusion": opts.fusion,
        "known_item": opts.known_item,
        "overall": report.overall,
        "by_category": report.by_category,
        "misses": report.misses(),
    }


def _print_eval(report: EvalReport, keys: Sequence[str] | None = None) -> None:
    """The table of ``eval`` and ``eval-beir``: overall and per-category means of ``keys`` (all
    metrics by default), then the queries whose first relevant card is not first."""
    cols = list(keys or report.overall)
    width = max([14, *(len(c) + 2 for c in report.by_category)])
    col = max([10, *(len(k) + 1 for k in cols)])
    print(f"{'':<{width}}" + "".join(f"{k:>{col}}" for k in cols) + f"{'queries':>9}")
    rows = [("overall", report.overall | {"queries": float(len(report.queries))})]
    rows += list(report.by_category.items())
    for name, m in rows:
        print(
            f"{name:<{width}}"
            + "".join(f"{m.get(k, 0.0):>{col}.3f}" for k in cols)
            + f"{int(m['queries']):>9}"
        )
    misses = report.misses()
    print("\nQueries whose first relevant card is not first:" + ("" if misses else " none"))
    for q in misses:
        relevant = q["relevant"]
        shown = f"{relevant[:5]} (+{len(relevant) - 5} more)" if len(relevant) > 5 else relevant
        print(f"  {q['id']} {q['query']!r}: expected {shown}, got {q['top'][:3]}")
