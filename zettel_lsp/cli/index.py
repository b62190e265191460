"""``zettel-lsp index``: index and embed a vault, choose its suggestion weights, then compact,
verify, export or watch."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from zettel_lsp.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CliError,
    Subcommands,
    _add_index_options,
    _add_vault_options,
    _check_vault,
    _command,
    _index_settings,
    no_notes_warning,
)
from zettel_lsp.index.export import export_index
from zettel_lsp.index.status import Progress, SyncReport
from zettel_lsp.index.sync import Indexer, default_cache_dir, index_folder
from zettel_lsp.progress import TerminalProgress
from zettel_lsp.vault import Vault


def _add_index(sub: Subcommands[argparse.ArgumentParser]) -> None:
    index = _command(
        sub,
        "index",
        cmd_index,
        "build or update the search index of a vault",
        json_help="print the summary as one JSON object",
    )
    index.add_argument(
        "--watch", action="store_true", help="keep running and index changes as they are saved"
    )
    index.add_argument(
        "--verify",
        action="store_true",
        help="after indexing, check the index against the vault (cards, chunks, keyword probes, "
        "re-embedded vectors); exit 1 on any mismatch",
    )
    index.add_argument(
        "--sample",
        type=int,
        default=200,
        metavar="N",
        help="with --verify: cards whose keywords and vectors are re-checked (default "
        "%(default)s; -1: every card)",
    )
    index.add_argument(
        "--verify-only",
        action="store_true",
        help="check the index as it is, without indexing first (implies --verify)",
    )
    index.add_argument(
        "--export-to",
        metavar="URL",
        help="after indexing, copy the index to a Qdrant server (e.g. http://localhost:6333) "
        "and hand this index folder over to it: then set qdrantUrl to URL "
        "(docs/remote.md); resumable, run it again after a failure",
    )
    index.add_argument(
        "--qdrant-api-key",
        metavar="KEY",
        default=os.environ.get("QDRANT_API_KEY") or None,
        help="with --export-to: the server's API key (default: $QDRANT_API_KEY)",
    )
    index.add_argument(
        "--self-tune",
        action="store_true",
        help="then choose the related-card suggestions' weights on the vault's own links, when "
        "none are stored or the vault changed by 10%% since (an editor's server does it in the "
        "background on vaults of at most 20,000 cards; it holds a second link graph meanwhile; "
        "docs/evaluation.md, 'Self-tuned suggestions')",
    )
    _add_index_options(index)
    _add_vault_options(index)


def _self_tune(vault: Vault, args: argparse.Namespace) -> dict[str, Any]:
    """Choose the related-card suggestions' fusion on the vault's own links where that is due
    (none yet, or the vault changed by 10% since: :meth:`Vault.calibration_due`), as a server
    does in the background; only with ``--self-tune`` (it holds a second link graph, more
    memory than the rest of ``index``). What ``index --json`` reports of it."""
    t0 = time.perf_counter()
    if not args.self_tune:
        return {"ran": False, "chosen": vault.calibration is not None, "seconds": 0.0}
    if not vault.graph.cards:
        vault.graph, vault.engine, _ = vault.load_graph()  # index keeps no graph: read its rows
    if not vault.calibration_due():
        seconds = time.perf_counter() - t0
        return {"ran": False, "chosen": vault.calibration is not None, "seconds": seconds}
    print(
        "zettel-lsp: choosing the suggestions' weights on this vault's own links (once; it is "
        "kept in the index folder)",
        file=sys.stderr,
    )
    progress = TerminalProgress()
    try:
        made = vault.calibrate(progress=lambda d, t: progress(Progress("self-tune", d, t)))
    finally:
        progress.finish()
    return {"ran": True, "chosen": made is not None, "seconds": time.perf_counter() - t0}


@contextlib.contextmanager
def _stop_on_ctrl_c() -> Iterator[threading.Event]:
    """While active, the first Ctrl-C (SIGINT) only sets the event (the embedding loop finishes
    the model batch in hand, saves, and returns); a second Ctrl-C interrupts at once."""
    requested = threading.Event()

    def handle(signum: int, frame: object) -> None:
        if requested.is_set():
            raise KeyboardInterrupt
        requested.set()

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield requested
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_index(args: argparse.Namespace) -> int:
    _check_vault(args.vault)
    if args.verify_only:
        return _verify_only(args)
    if args.export_to and args.watch:
        raise CliError("--export-to copies the index once; run it without --watch")
    progress = TerminalProgress()
    t0 = time.perf_counter()
    settings = _index_settings(args)
    with Vault(
        args.vault, args.index_dir, settings, cache_dir=args.cache_dir, progress=progress
    ) as vault:
        indexer = vault.indexer
        summary = _index_now(vault, progress, t0)
        if summary is None:
            # leaving the with-block flushes the store and saves the state: what is done stays
            done = indexer.state.dense_done
            print(
                f"zettel-lsp: interrupted; {done:,} cards embedded, run again to finish",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        if summary["cards"] == 0:
            print(no_notes_warning(indexer.vault, len(summary["skipped"])), file=sys.stderr)
        tuned = _self_tune(vault, args)
        summary["seconds"]["self_tune"] = round(tuned.pop("seconds"), 3)
        summary["self_tune"] = tuned
        summary["seconds"]["total"] = round(time.perf_counter() - t0, 3)
        verified = None
        if args.verify:
            from zettel_lsp.index.verify import verify

            verified = verify(indexer, None if args.sample < 0 else args.sample)
            summary["verify"] = verified.to_json()
        if not args.watch and not args.export_to:
            summary["compacted"] = _compact_after_index(indexer)
            summary["seconds"]["total"] = round(time.perf_counter() - t0, 3)
        if args.json:
            print(json.dumps(summary, ensure_ascii=False, indent=2))
        else:
            _print_index(summary, time.perf_counter() - t0)
            if verified is not None:
                print(verified.format())
        sys.stdout.flush()
        if verified is not None and not verified.ok:
            return EXIT_FAILED
        if args.export_to:
            out = sys.stderr if args.json else sys.stdout
            export_index(indexer, args.export_to, args.qdrant_api_key, progress, out)
        if args.watch:
            _watch_forever(indexer, progress)
    return EXIT_OK


def _index_now(vault: Vault, progress: TerminalProgress, t0: float) -> dict[str, Any] | None:
    """Index what changed, write the graph's rows (a server's start reads them), and embed;
    the summary ``index --json`` prints, or None when Ctrl-C stopped it."""
    indexer = vault.indexer
    try:
        report = indexer.sync()
        lexical_s = time.perf_counter() - t0
        lexical_at = time.time()
        t_graph = time.perf_counter()
        cards = len(indexer.state.files)
        progress(Progress("graph", 0, cards))
        progress(Progress("graph", vault.save_graph_rows(), cards))
        graph_s = time.perf_counter() - t_graph
        with _stop_on_ctrl_c() as stop:
            before_dense = _compact_before_embedding(indexer, progress)
            t_dense = time.perf_counter()
            embedded = indexer.embed_pending(should_stop=stop.is_set)
            t_multilingual = time.perf_counter()
            embedded_multilingual = indexer.embed_multilingual(should_stop=stop.is_set)
            t_end = time.perf_counter()
        interrupted = stop.is_set()
    except KeyboardInterrupt:  # in the lexical phase, or a second Ctrl-C
        interrupted = True
    progress.finish()
    if interrupted:
        return None
    summary: dict[str, Any] = {
        "vault": str(indexer.vault),
        "index_dir": str(indexer.index_dir),
        "model": indexer.embedder.model_id,
        "cards": report.cards,
        "chunks": report.chunks,
        "indexed": report.indexed,
        "new": report.new,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "embedded": embedded,
        "embedded_multilingual": embedded_multilingual,
        "languages": indexer.status.languages(),
        "reused_vectors": report.reused_vectors,
        "deleted": report.deleted,
        "renamed": report.renamed,
        "skipped": report.skipped,
        "model_tokens": indexer.embedder.tokens_processed,
        "seconds": {
            "lexical_ready": round(lexical_s, 3),
            "graph": round(graph_s, 3),
            "dense": round(t_multilingual - t_dense, 3),
            "multilingual": round(t_end - t_multilingual, 3),
            "model": round(indexer.embedding.embed_seconds, 3),
            "multilingual_model": round(indexer.embedding.multilingual_embed_seconds, 3),
            "total": round(time.perf_counter() - t0, 3),
        },
        "lexical_ready_at": lexical_at,
    }
    if before_dense is not None:
        summary["compacted_before_embedding"] = before_dense
    return summary


def _print_index(s: dict[str, Any], seconds: float) -> None:
    """The summary of ``index`` without ``--json``."""
    print(
        f"Indexed {s['cards']:,} cards ({s['chunks']:,} chunks) of {s['vault']}\n"
        f"  new {s['new']:,}, changed {s['changed']:,}, renamed {s['renamed']:,}, "
        f"deleted {s['deleted']:,}, unchanged {s['unchanged']:,}, skipped "
        f"{len(s['skipped']):,}\n"
        f"  embedded {s['embedded']:,} chunks ({s['reused_vectors']:,} vectors reused) with "
        f"{s['model']}\n"
        f"  lexical search ready after {s['seconds']['lexical_ready']:.1f} s; done after "
        f"{seconds:.1f} s\n"
        f"  index: {s['index_dir']}"
    )
    if s["self_tune"]["ran"]:
        how = "chosen on its links" if s["self_tune"]["chosen"] else "default (too few links)"
        print(f"  suggestion weights: {how}, in {s['seconds']['self_tune']:.1f} s")
    if s.get("compacted"):
        print(f"  compacted the index in {s['compacted']['seconds']:.1f} s")
    for path, reason in sorted(s["skipped"].items())[:20]:
        print(f"  skipped {path}: {reason}")


def _compact_before_embedding(
    indexer: Indexer, progress: TerminalProgress
) -> dict[str, Any] | None:
    """Compact the shard between the lexical and the dense phase when both are large
    (``CompactionPolicy.due_before_embedding``), so that an index stopped while embedding opens
    from indexed segments instead of rebuilding the BM25 index of every point. None when not
    done."""
    points = indexer.compaction_before_embedding()
    if not points:
        return None
    progress.finish()
    print(
        f"zettel-lsp: compacting the lexical index ({points:,} points) before embedding, so "
        "that an interrupted run reopens fast",
        file=sys.stderr,
    )
    try:
        result = indexer.compact()
    except Exception as exc:  # noqa: BLE001 - only a faster reopen is lost: embed on
        print(f"zettel-lsp: compacting failed ({exc}); embedding goes on", file=sys.stderr)
        return None
    if result is None:
        return None
    return {"points": result.points, "seconds": round(result.seconds, 3)}


def _compact_after_index(indexer: Indexer) -> dict[str, Any] | None:
    """Close the index and compact it when enough was written (index/compact.py): what a
    server would otherwise do in the background after its session. None when not needed."""
    from zettel_lsp.index.compact import CompactionPolicy, compact

    indexer.close()  # saves the state with its count of uncompacted points; closing is idempotent
    points = CompactionPolicy.current().due(indexer.state, indexer.index_dir)
    if not points:
        return None
    print(
        f"zettel-lsp: compacting the index ({points:,} points written since the last "
        "compaction; the next start opens it faster)",
        file=sys.stderr,
    )
    result = compact(indexer.index_dir)
    return {"points": result.points, "seconds": round(result.seconds, 3)}


def _verify_only(args: argparse.Namespace) -> int:
    """``index --verify-only``: the verifier on the index as it is (no sync first)."""
    from zettel_lsp.index.verify import verify_folder

    index_dir = index_folder(args.vault, args.index_dir, args.cache_dir)
    verified = verify_folder(
        args.vault,
        index_dir,
        _index_settings(args),
        cache_dir=args.cache_dir or default_cache_dir(),
        sample=None if args.sample < 0 else args.sample,
    )
    if args.json:
        print(json.dumps({"verify": verified.to_json()}, ensure_ascii=False, indent=2))
    else:
        print(verified.format())
    return EXIT_OK if verified.ok else EXIT_FAILED


def _watch_forever(indexer: Indexer, progress: TerminalProgress) -> None:
    from zettel_lsp.index.watch import VaultWatcher

    def show(r: SyncReport) -> None:
        if r.new or r.changed or r.renamed or r.deleted:
            progress.message(f"updated: {r.summary()}")

    watcher = VaultWatcher(indexer, on_sync=show)
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:  # a background job ignores Ctrl-C: keep it so
        # before "Ctrl-C to stop" is shown: a Ctrl-C any time after it stops cleanly
        signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        watcher.start()
        # what changed during the first sync and embedding (nothing watched yet): a reconcile
        # once the watch is registered, as the server's start-up does
        watcher.ready.wait(5)
        watcher.reconcile()
        progress.message(f"watching {indexer.vault} (Ctrl-C to stop)")
        # short waits: Python runs the SIGINT handler in the main thread only when that thread
        # next runs, also when the signal was delivered to another thread
        while not stop.wait(0.2):
            pass
        progress.finish()
    finally:
        if previous is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)  # a second Ctrl-C interrupts the shutdown
        watcher.stop()
