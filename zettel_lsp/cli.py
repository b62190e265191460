"""Command line: ``zettel-lsp`` (serve LSP over stdio), ``graph``, ``index``, ``search``,
``ask``, ``suggest``, ``eval``, ``eval-links``, ``eval-beir``.

``ask`` (and ``search --expand/--llm-rerank``) use a local Ollama (see docs/llm.md). Every
command ends with one of the exit codes below (the table in docs/cli.md); a message for the user
goes to stderr as one ``zettel-lsp: ...`` line, never as a traceback."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from zettel_lsp import __version__
from zettel_lsp.eval.beir import (
    BeirError,
    default_work_dir,
    judged_queries,
    load_beir,
    prepare_work_dir,
)
from zettel_lsp.eval.evaluate import EvalReport, evaluate, load_golden
from zettel_lsp.eval.links import SeedIndex, evaluate_links, holdout_copy, load_holdout
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.stats import GraphStats, describe_card, graph_stats
from zettel_lsp.index.embedders import DEFAULT_MODEL, EmbedderError, make_embedder
from zettel_lsp.index.status import Progress, SyncReport
from zettel_lsp.index.store_api import IndexLockedError, StoreError
from zettel_lsp.index.sync import (
    MULTILINGUAL_MODES,
    Indexer,
    IndexSettings,
    chunker_id,
    default_cache_dir,
    index_folder,
)
from zettel_lsp.llm.settings import DEFAULT_CHAT_MODEL, LLMSettings
from zettel_lsp.notes.language import is_english
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.scan import ScanReport, load_vault
from zettel_lsp.notes.title_rule import TITLE_SOURCES, TitleSource
from zettel_lsp.ollama_client import OllamaSettings
from zettel_lsp.progress import TerminalProgress
from zettel_lsp.search.calibrate import calibrate, dump_document
from zettel_lsp.search.engine import (
    ALL_LEGS,
    DEFAULT_FUSION,
    DEFAULT_KNOWN_ITEM,
    DEFAULT_WEIGHTS,
    FUSIONS,
    SearchOptions,
    title_index,
)
from zettel_lsp.search.fallback import scan_search
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.results import result_dict
from zettel_lsp.search.suggest import (
    DEFAULT_SUGGEST_FUSION,
    GRAPH_LEGS,
    SUGGEST_LEGS,
    SuggestFusion,
    mention_fields,
    ranked_mentions,
    related_suggestions,
)
from zettel_lsp.search.suggest.reasons import RelatedSuggestion
from zettel_lsp.vault import Vault
from zettel_lsp.workdir import WorkDirError

log = logging.getLogger("zettel_lsp")

# Exit codes, the same for every command (docs/cli.md has this table for users).
EXIT_OK = 0  # done (also: search answered read-only while another process holds the index)
EXIT_FAILED = 1  # could not be done: the index is in use (index), unusable, a check failed
EXIT_USAGE = 2  # what was asked is wrong: bad options, a missing folder or file, an unknown card
EXIT_NO_ANSWER = 3  # ask: the LLM was unavailable or failed (the retrieved cards are printed)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


class CliError(Exception):
    """What the user is told (one line on stderr) and the exit code it ends with."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


Subcommands = argparse._SubParsersAction  # what add_subparsers returns


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zettel-lsp",
        description="Search a folder of linked Markdown notes. "
        "With no command, serve LSP over stdio.",
    )
    parser.add_argument("--version", action="version", version=f"zettel-lsp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every skipped file")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="serve LSP over stdio (the default)")
    for add in (_add_graph, _add_index, _add_search_and_ask, _add_suggest, _add_evals):
        add(sub)
    return parser


def _command(
    sub: Subcommands[argparse.ArgumentParser],
    name: str,
    run: Callable[[argparse.Namespace], int],
    help: str,
    json_help: str = "print one JSON object",
) -> argparse.ArgumentParser:
    """A command that takes the notes folder and ``--json``; ``run`` carries it out."""
    p = sub.add_parser(name, help=help)
    p.set_defaults(run=run)
    p.add_argument("vault", type=Path, help="the notes folder")
    p.add_argument("--json", action="store_true", help=json_help)
    return p


def _add_graph(sub: Subcommands[argparse.ArgumentParser]) -> None:
    graph = _command(sub, "graph", cmd_graph, "summarise a vault's link graph")
    graph.add_argument("--top", type=int, default=10, help="how many cards to list per section")
    graph.add_argument(
        "--card",
        metavar="NAME",
        help="also show how [[NAME]] resolves and that card's links, backlinks and mentions",
    )
    _add_vault_options(graph)


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
    _add_self_tune_option(
        index,
        "do not choose the related-card suggestions' weights on the vault's own links after "
        "indexing",
    )
    _add_index_options(index)
    _add_vault_options(index)


def _add_search_and_ask(sub: Subcommands[argparse.ArgumentParser]) -> None:
    search = _command(sub, "search", cmd_search, "search a vault (builds or updates its index)")
    search.add_argument("query", nargs="?", default="")
    search.add_argument("--limit", type=int, default=10)
    _add_llm_options(search)
    _add_search_options(search)

    ask = _command(
        sub,
        "ask",
        cmd_ask,
        "answer a question from the notes with a local Ollama model, with sources",
        json_help="print one JSON object at the end",
    )
    ask.add_argument("question")
    ask.add_argument(
        "--limit", type=int, default=10, help="cards to retrieve before choosing the context"
    )
    ask.add_argument(
        "--max-context-chunks",
        type=int,
        default=LLMSettings().max_context_chunks,
        help="at most this many chunks in the prompt (default %(default)s; fewer when "
        "ceil(sqrt(cards)) or the model's context window says so)",
    )
    _add_llm_options(ask)
    _add_search_options(ask)


def _add_suggest(sub: Subcommands[argparse.ArgumentParser]) -> None:
    sg = _command(sub, "suggest", cmd_suggest, "link suggestions for one card")
    sg.add_argument("card", help="the card's path inside the vault, e.g. 'method/Atomic notes.md'")
    sg.add_argument("--limit", type=int, default=10)
    _add_self_tune_option(sg)
    _add_search_options(sg)


def _add_evals(sub: Subcommands[argparse.ArgumentParser]) -> None:
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

    ev = _command(sub, "eval", cmd_eval, "score search on judged queries (nDCG, MRR, Hit, Recall)")
    ev.add_argument("golden", type=Path, help="judged queries (obsidian-help.golden.json format)")
    ev.add_argument("--k", type=int, default=10)
    _add_search_options(ev)

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


def _add_self_tune_option(
    p: argparse.ArgumentParser,
    what: str = "fuse the related-card suggestions with the default weights, not the ones "
    "chosen on the vault's own links",
) -> None:
    p.add_argument(
        "--no-self-tune",
        action="store_true",
        help=f"{what} (docs/evaluation.md, 'Self-tuned suggestions')",
    )


def _add_search_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--legs",
        default=",".join(ALL_LEGS),
        help=f"comma-separated retrieval legs (default {','.join(ALL_LEGS)})",
    )
    p.add_argument("--no-graph", action="store_true", help="switch the graph rerank off")
    p.add_argument(
        "--no-exact-title",
        action="store_true",
        help="do not put a card whose title is the query first (for ablations)",
    )
    p.add_argument(
        "--fusion",
        choices=FUSIONS,
        default=DEFAULT_FUSION,
        help="how the legs are fused: dbsf (each leg's scores scaled by their mean and "
        "spread, the default), convex (each leg's scores divided by its top score) or rrf "
        "(reciprocal rank fusion, k = 60); see docs/ranking.md",
    )
    p.add_argument(
        "--weights",
        metavar="LEG=W,...",
        help="fusion weight per leg, e.g. dense=2,bm25=1 (unnamed legs keep their default: "
        + ",".join(f"{k}={v:g}" for k, v in DEFAULT_WEIGHTS.items())
        + ")",
    )
    p.add_argument(
        "--known-item",
        type=float,
        default=DEFAULT_KNOWN_ITEM,
        metavar="W",
        help="add W to the keyword leg's weight when the query's words are all found in at "
        "most 3 cards (default %(default)s; 0 turns it off; docs/evaluation.md, the known-item "
        "boost)",
    )
    _add_index_options(p)
    _add_vault_options(p)


def _add_llm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--chat-model",
        default=DEFAULT_CHAT_MODEL,
        help=f"Ollama chat model (default {DEFAULT_CHAT_MODEL})",
    )
    p.add_argument(
        "--llm-timeout",
        type=float,
        default=LLMSettings().timeout,
        help="seconds to wait for Ollama (default %(default)s)",
    )
    p.add_argument("--expand", action="store_true", help="let the model rewrite or split the query")
    p.add_argument(
        "--llm-rerank", action="store_true", help="let the model rate the top candidates"
    )


def _add_index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--index-dir",
        type=Path,
        help="where the index lives (default: a folder per vault in the user cache)",
    )
    p.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"fastembed model name (default {DEFAULT_MODEL}, offline, bundled)",
    )
    p.add_argument(
        "--threads", type=int, default=None, help="embedding threads (default: all cores)"
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="models and indexes cache folder")
    p.add_argument(
        "--multilingual",
        choices=MULTILINGUAL_MODES,
        default="auto",
        help="the multilingual model's vectors: auto (the non-English cards of a vault with "
        "many, every card once a query is not English), on (every card), off "
        "(default %(default)s; docs/multilingual.md)",
    )
    p.add_argument(
        "--ollama-host",
        default=None,
        help="Ollama URL for 'ollama:' models, ask, --expand and --llm-rerank (default "
        "http://127.0.0.1:11434, or OLLAMA_HOST when it names this machine)",
    )


def _add_vault_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ignore", action="append", default=[], metavar="GLOB", help="skip paths matching GLOB"
    )
    p.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        help=f"skip notes larger than this (default {DEFAULT_MAX_BYTES:,})",
    )
    p.add_argument(
        "--title-source",
        choices=TITLE_SOURCES,
        default=TitleSource.AUTO.value,
        help="which name is a card's title: auto (frontmatter title, else the file name; an "
        "opening H1 when the file name is an id), filename, h1 or frontmatter "
        "(default %(default)s; docs/notes-and-links.md)",
    )
    p.add_argument(
        "--follow-external-symlinks",
        action="store_true",
        help="follow symlinks (to notes or folders) whose target is outside the vault; by "
        "default they are skipped and reported",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in (None, "serve"):
        from zettel_lsp.server.app import serve_stdio

        serve_stdio()
        return EXIT_OK
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="zettel-lsp: %(message)s",
        stream=sys.stderr,
    )
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except (CliError, WorkDirError, BeirError, IndexLockedError, StoreError, EmbedderError) as exc:
        print(f"zettel-lsp: {exc}", file=sys.stderr)
        if isinstance(exc, CliError):
            return exc.code
        # a refused folder or a garbled collection is a usage error; the rest could not be done
        return EXIT_USAGE if isinstance(exc, WorkDirError | BeirError) else EXIT_FAILED
    except KeyboardInterrupt:
        print("\nzettel-lsp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _check_vault(path: Path) -> None:
    """Raise :class:`CliError` (a usage error) unless ``path`` is a folder."""
    if not path.exists():
        raise CliError(f"vault folder {path} does not exist")
    if not path.is_dir():
        raise CliError(f"{path} is not a folder; give the folder that holds your notes")


def cmd_graph(args: argparse.Namespace) -> int:
    _check_vault(args.vault)
    t0 = time.perf_counter()
    scan = ScanReport()
    cards, problems = _load_cards(args, scan)
    t1 = time.perf_counter()
    graph = LinkGraph.build(cards)
    t2 = time.perf_counter()
    stats = graph_stats(graph, skipped_files=scan.skipped, top=args.top)
    stats.seconds = {
        "load": round(t1 - t0, 3),
        "graph": round(t2 - t1, 3),
        "total": round(time.perf_counter() - t0, 3),
    }
    card = describe_card(graph, args.card, top=args.top) if args.card else None
    if card is not None and card["resolved"] is None:
        card["did_you_mean"] = near_misses(graph, args.card)
    if args.json:
        out = stats.as_dict() | {"vault": str(args.vault.resolve()), "problems": problems}
        if card is not None:
            out["card"] = card
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(format_stats(stats, args.vault, problems))
        if card is not None:
            print(format_card(card))
    return EXIT_OK


def _load_cards(
    args: argparse.Namespace, scan: ScanReport | None = None
) -> tuple[list[Card], list[str]]:
    """The vault's cards and problems, read with the vault options."""
    return load_vault(
        args.vault,
        args.ignore,
        args.max_file_bytes,
        report=scan,
        title_source=args.title_source,
        follow_external_symlinks=args.follow_external_symlinks,
    )


def format_card(c: dict[str, Any]) -> str:
    if c["resolved"] is None:
        line = f"\n[[{c['query']}]] does not resolve to any card (no path, file name, title, alias)"
        if c.get("did_you_mean"):
            line += "; did you mean " + _or_list(c["did_you_mean"]) + "?"
        return line
    r = c["resolved"]
    lines = [f"\n[[{c['query']}]] → {r['title']}  ({r['path']}, matched by {c['stage']})"]
    if c["aliases"]:
        lines.append(f"  aliases: {', '.join(c['aliases'])}")
    if c["tags"]:
        lines.append(f"  tags: {', '.join('#' + t for t in c['tags'])}")
    sections = [
        ("links to", "links_to"),
        (f"backlinks ({c['backlink_count']})", "backlinks"),
        ("mentioned without a link by", "mentioned_without_link_by"),
        ("two hops away", "two_hops"),
    ]
    for label, key in sections:
        if c[key]:
            lines.append(f"  {label}:")
            lines.extend(f"    {x['title']}  ({x['path']})" for x in c[key])
    return "\n".join(lines)


def near_misses(graph: LinkGraph, name: str, n: int = 3) -> list[dict[str, str]]:
    """Cards whose title, alias, file name or path is close to ``name`` (difflib's ratio, case
    ignored), closest first, each card once: the "did you mean" of ``graph --card`` and
    ``suggest``."""
    names: dict[str, tuple[str, str]] = {}  # lower-cased name -> (name, path)
    for c in graph.cards.values():
        for shown in (c.title, *c.aliases, c.stem, c.path):
            names.setdefault(shown.lower(), (shown, c.path))
    found: dict[str, dict[str, str]] = {}  # path -> its closest name
    for key in difflib.get_close_matches(name.lower(), list(names), n=n * 3, cutoff=0.6):
        shown, path = names[key]
        found.setdefault(path, {"name": shown, "path": path, "title": graph.cards[path].title})
    return list(found.values())[:n]


def _or_list(found: Sequence[dict[str, str]]) -> str:
    """'"Karma" (Karma.md) or "Dharma" (Dharma.md)'."""
    return " or ".join(f"{m['name']!r} ({m['path']})" for m in found)


def _llm_settings(args: argparse.Namespace) -> LLMSettings:
    """The LLM options (the defaults for a command without them; ``--ollama-host`` is an index
    option, which every command that reads these has)."""
    defaults = LLMSettings()
    return LLMSettings(
        host=args.ollama_host,
        chat_model=getattr(args, "chat_model", defaults.chat_model),
        timeout=getattr(args, "llm_timeout", defaults.timeout),
        max_context_chunks=getattr(args, "max_context_chunks", defaults.max_context_chunks),
        expand_query=getattr(args, "expand", False),
        llm_rerank=getattr(args, "llm_rerank", False),
    )


def _index_settings(args: argparse.Namespace) -> IndexSettings:
    llm = _llm_settings(args)
    return IndexSettings(
        model=args.model,
        threads=args.threads,
        max_file_bytes=args.max_file_bytes,
        ignore_globs=tuple(args.ignore),
        title_source=TitleSource(args.title_source),
        follow_external_symlinks=args.follow_external_symlinks,
        ollama=OllamaSettings(llm.host, llm.connect_timeout, llm.timeout),
        multilingual=args.multilingual,
    )


def _open_vault(args: argparse.Namespace) -> Vault:
    """The vault, indexed and embedded up to date. Raises :class:`CliError` for a missing
    folder and :class:`IndexLockedError` when another process holds the index (a caller that
    can answer read-only catches it; :func:`main` turns it into exit code 1)."""
    _check_vault(args.vault)
    settings = _index_settings(args)
    progress = TerminalProgress()
    vault = Vault(args.vault, args.index_dir, settings, cache_dir=args.cache_dir, progress=progress)
    try:
        report = vault.open()
        vault.embed_multilingual()  # the cards in its scope (none in an English vault)
    except EmbedderError as exc:  # e.g. an 'ollama:' model while Ollama is down
        progress.finish()
        print(f"zettel-lsp: {exc}; searching without the dense leg", file=sys.stderr)
        vault.disable_dense(str(exc))
        return vault
    except BaseException:
        progress.finish()
        vault.close()
        raise
    progress.finish()
    if report.sync.cards == 0:
        print(no_notes_warning(args.vault, len(report.sync.skipped)), file=sys.stderr)
    return vault


def no_notes_warning(vault: Path, skipped: int) -> str:
    """What an empty (or wrongly chosen) folder gets, instead of a silent "0 cards"."""
    why = f"; {skipped:,} skipped (see above)" if skipped else ""
    return (
        f"zettel-lsp: warning: no notes found in {vault} (a note is a .md or .markdown file; "
        f"dot-folders and --ignore globs are skipped{why}); is this the right folder?"
    )


def _read_only(args: argparse.Namespace, reason: IndexLockedError) -> LinkGraph:
    """Say (one line) that the answer is read-only, and read the cards for it: what the CLI
    answers from while another process holds the index, like the server's read-only phase."""
    print(f"zettel-lsp: read-only answer from titles and plain text: {reason}", file=sys.stderr)
    return LinkGraph.build(_load_cards(args)[0])


def _search_options(args: argparse.Namespace, limit: int) -> SearchOptions:
    return SearchOptions(
        limit=limit,
        legs=tuple(parse_legs(args.legs, ALL_LEGS)),
        graph=not args.no_graph,
        weights=parse_weights(args.weights),
        fusion=args.fusion,
        exact_title_first=not args.no_exact_title,
        known_item=_known_item(args.known_item),
    )


def _known_item(value: float) -> float:
    if not 0 <= value < math.inf:  # also NaN
        raise CliError(f"--known-item expects a number >= 0, got {value!r}")
    return value


def parse_legs(text: str, known: Sequence[str]) -> list[str]:
    """``--legs dense,bm25``: the legs named, each one of ``known``."""
    legs = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in legs if x not in known]
    if unknown or not legs:
        raise CliError(f"unknown leg(s) {unknown}; choose from {', '.join(known)}")
    return legs


def parse_weights(
    text: str | None, defaults: Mapping[str, float] = DEFAULT_WEIGHTS
) -> dict[str, float]:
    """``--weights dense=2,bm25=1``: the ``defaults`` (the search fusion's weights) with the
    named legs changed. Raises :class:`CliError` (a usage error) with the reason for an unknown
    leg, a repeated leg or a bad number."""
    if text is None:
        return dict(defaults)
    changed: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        leg, eq, value = (x.strip() for x in item.partition("="))
        if not eq or leg not in defaults:
            raise CliError(
                f"--weights expects LEG=W,... with LEG one of {', '.join(defaults)}; got {item!r}"
            )
        if leg in changed:
            raise CliError(f"--weights names {leg} twice")
        try:
            w = float(value)
        except ValueError:
            w = math.nan
        if not math.isfinite(w) or w < 0:
            raise CliError(
                f"--weights {leg}={value!r} is not a number >= 0 "
                "(0 gives the leg no say in the fusion)"
            )
        changed[leg] = w
    if not changed:
        raise CliError("--weights is empty; give LEG=W,... e.g. dense=2,bm25=1")
    return dict(defaults) | changed


def cmd_search(args: argparse.Namespace) -> int:
    opts = _search_options(args, args.limit)
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    query = parse_query(args.query)  # once: the search and the excerpts use it
    try:
        vault = _open_vault(args)
    except IndexLockedError as exc:
        graph = _read_only(args, exc)
        results = scan_search(graph.cards.values(), title_index(graph), query, opts.limit)
    else:
        with vault:
            _multilingual_for(vault, [query.text])
            results = _search(args, vault, query, opts)
    return _print_results(args, [result_dict(r, query.terms) for r in results])


def _multilingual_for(vault: Vault, queries: Sequence[str]) -> None:
    """Before searching: if a query is not English, every card gets its multilingual vector
    (once; the index keeps them) and the model loads, as the server does in the background.
    The progress shows on the vault's own progress line."""
    if any(not is_english(q) for q in queries if q.strip()):
        try:
            vault.ensure_multilingual()
        finally:
            if isinstance(vault.indexer.progress, TerminalProgress):
                vault.indexer.progress.finish()


def _search(
    args: argparse.Namespace, vault: Vault, query: Query, opts: SearchOptions
) -> list[CardResult]:
    if args.expand or args.llm_rerank:
        from zettel_lsp.llm import Ollama, search_llm

        with contextlib.closing(Ollama(_llm_settings(args))) as llm:
            results, messages = search_llm(
                vault.engine, llm, query, opts, expand=args.expand, rerank=args.llm_rerank
            )
        for m in messages:
            print(f"zettel-lsp: {m}", file=sys.stderr)
        return results
    try:
        return vault.engine.search(query, opts)
    except EmbedderError as exc:  # an 'ollama:' model while Ollama is down
        print(f"zettel-lsp: {exc}; searching without the dense leg", file=sys.stderr)
        vault.disable_dense(str(exc))
        return vault.engine.search(query, opts)


def _print_results(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows:
        print(f"No cards match {args.query!r}.")
    for i, r in enumerate(rows, start=1):
        legs = " ".join(f"{k}#{v}" for k, v in r["legs"].items())
        print(f"{i:>2}. {r['title']}  ({r['path']}:{r['line_start'] + 1})  [{legs}]")
        print(f"    {r['excerpt']}")
    return EXIT_OK


def cmd_ask(args: argparse.Namespace) -> int:
    if args.max_context_chunks < 1 or args.limit < 1:
        raise CliError("--limit and --max-context-chunks must be at least 1")
    opts = _search_options(args, args.limit)
    from zettel_lsp.llm import Ollama, ask

    vault = _open_vault(args)
    streamed = False

    def show(delta: str) -> None:
        nonlocal streamed
        streamed = True
        sys.stdout.write(delta)
        sys.stdout.flush()

    with vault, contextlib.closing(Ollama(_llm_settings(args))) as llm:
        try:
            result = ask(
                vault.engine, llm, args.question, on_delta=None if args.json else show, options=opts
            )
        except KeyboardInterrupt:
            print("", file=sys.stderr)
            return EXIT_INTERRUPTED
    for m in result.messages:
        print(f"zettel-lsp: {m}", file=sys.stderr)
    if result.fallback:
        print(f"zettel-lsp: {result.fallback}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        return EXIT_NO_ANSWER if result.fallback else EXIT_OK
    if streamed:
        print("\n")
    if result.sources:
        print(f"Sources ({result.model}):" if result.answer else "Retrieved cards (no answer):")
    for i, src in enumerate(result.sources, start=1):
        lines = f"{src['line_start'] + 1}-{src['line_end'] + 1}"
        print(f"{i:>2}. {src['title']}  ({src['path']}:{lines})  score {src['score']:.4f}")
        print(f"    {src['excerpt']}")
    return EXIT_NO_ANSWER if result.fallback else EXIT_OK


def cmd_suggest(args: argparse.Namespace) -> int:
    _check_vault(args.vault)
    rel = card_path_argument(args.card, args.vault)
    vault: Vault | None = None
    try:
        vault = _open_vault(args)
        graph = vault.graph
    except IndexLockedError as exc:
        graph = _read_only(args, exc)
    read_only = vault is None
    with vault if vault is not None else contextlib.nullcontext():
        if rel is None:  # not a file: a title, alias or file name, as [[links]] name cards
            rel = graph.resolve(args.card).target
            if rel is None:
                misses = near_misses(graph, args.card)
                hint = f"; did you mean {_or_list(misses)}?" if misses else ""
                raise CliError(
                    f"{args.card!r} is not a card of {args.vault} (no such file, title or "
                    f"alias){hint}"
                )
        card = graph.cards.get(rel)
        if card is None:
            raise CliError(f"{rel} could not be read (see -v)", EXIT_FAILED)
        targets = ranked_mentions(graph, card)
        related: list[RelatedSuggestion] = []
        if vault is not None:
            _stored_weights(vault, args)
            related = related_suggestions(vault.engine, card, args.limit, unmentioned=True)
    out = {
        "card": rel,
        # as the server's zettel.suggestLinks: each mentioned card's mentions together, most
        # confident card first, common words of this vault left out (docs/notes-and-links.md)
        "unlinked_mentions": [
            mention_fields(t, m)
            | {
                "line": m.start_pos.line,
                "start_character": m.start_pos.character,
                "end_character": m.end_pos.character,
            }
            for t in targets
            for m in t.mentions
        ],
        "related": [
            {"path": r.path, "title": r.title, "score": r.score, "reason": r.reason}
            for r in related
        ],
        "read_only": read_only,
    }
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"Unlinked mentions in {rel}:" if targets else f"No unlinked mentions in {rel}.")
    for t in targets:
        first = t.mentions[0]
        lines = ", ".join(str(n) for n in dict.fromkeys(m.start_pos.line + 1 for m in t.mentions))
        where = f"line{'s' if ',' in lines else ''} {lines}"
        how = "confident" if t.confident else ("linked elsewhere" if t.already_linked else "")
        note = f"; {how}" if how else ""
        print(f"  '{first.text}' → {first.replacement}  ({where}{note})")
    if read_only:
        print("Related cards: not available read-only (they need the index).")
        return EXIT_OK
    print("Related cards it does not link to:")
    for r in related:
        print(f"  {r.title}  ({r.path}) — {r.reason}")
    return EXIT_OK


def card_path_argument(arg: str, vault: Path) -> str | None:
    """The vault-relative path of the note file ``arg`` names: an absolute path, a path
    relative to the current folder, or one relative to the vault. None when ``arg`` names no
    such file (it may be a title). Raises :class:`CliError` for a file outside the vault."""
    given = Path(arg).expanduser()
    candidates = [given] if given.is_absolute() else [Path.cwd() / given, vault / given]
    roots = {Path(os.path.abspath(vault)), vault.resolve()}
    outside: Path | None = None
    for cand in candidates:
        if not cand.is_file():
            continue
        for path in (Path(os.path.abspath(cand)), cand.resolve()):
            for root in roots:
                if path.is_relative_to(root):
                    return path.relative_to(root).as_posix()
        outside = outside or cand
    if outside is not None and given.is_absolute():
        raise CliError(f"{arg} is not inside the vault {vault}")
    return None


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


def _stored_weights(vault: Vault, args: argparse.Namespace) -> None:
    """Fuse the related-card suggestions with the weights ``zettel-lsp index`` chose on the
    vault's own links, or the default ones until it has (said in one line on a terminal);
    ``--no-self-tune``: the default ones. ``suggest`` never chooses them itself: that takes
    tens of seconds on a large vault."""
    vault.self_tune = not args.no_self_tune
    if vault.self_tune and vault.calibration is None and sys.stderr.isatty():
        print(
            "zettel-lsp: related cards weighed with the default weights; `zettel-lsp index` "
            "chooses them on this vault's own links",
            file=sys.stderr,
        )


def _self_tune(vault: Vault, args: argparse.Namespace) -> dict[str, Any]:
    """Choose the related-card suggestions' fusion on the vault's own links where that is due
    (none yet, or the vault changed by 10% since: :meth:`Vault.calibration_due`), as a server
    does in the background; ``--no-self-tune``: not. What ``index --json`` reports of it."""
    vault.self_tune = not args.no_self_tune
    t0 = time.perf_counter()
    if vault.self_tune and not vault.graph.cards:
        vault.build_graph()  # indexing keeps no graph: read back from the rows it wrote
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
            _export_index(indexer, args.export_to, args.qdrant_api_key, progress, out)
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
            t_ml = time.perf_counter()
            embedded_ml = indexer.embed_multilingual(should_stop=stop.is_set)
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
        "embedded_multilingual": embedded_ml,
        "languages": indexer.status.languages(),
        "reused_vectors": report.reused_vectors,
        "deleted": report.deleted,
        "renamed": report.renamed,
        "skipped": report.skipped,
        "model_tokens": indexer.embedder.tokens_processed,
        "seconds": {
            "lexical_ready": round(lexical_s, 3),
            "graph": round(graph_s, 3),
            "dense": round(t_ml - t_dense, 3),
            "multilingual": round(t_end - t_ml, 3),
            "model": round(indexer.embedding.embed_seconds, 3),
            "multilingual_model": round(indexer.embedding.ml_embed_seconds, 3),
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
        result = indexer.compact_now()
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


def _export_index(
    indexer: Indexer, url: str, api_key: str | None, progress: TerminalProgress, out: Any
) -> None:
    """``index --export-to URL``: copy the embedded index's points to the vault's collection on
    a Qdrant server (idempotent: run again to resume), then hand the index folder's state over
    to that server, so that a start with ``qdrant_url`` = URL continues without re-indexing."""
    from zettel_lsp.index.remote_store import (
        RemoteStore,
        VaultIdentity,
        collection_name,
        export_points,
        this_host,
    )

    state = indexer.state
    name = collection_name(indexer.index_dir)
    identity = VaultIdentity(
        str(indexer.vault), state.model, state.dim, state.chunker, host=this_host()
    )
    print(f"zettel-lsp: exporting to collection {name} on {url}", file=sys.stderr)
    target = RemoteStore.connect(
        url, api_key, name, state.dim, state.bm25_avg_len or 100.0, identity=identity
    )
    try:
        report = export_points(
            indexer.store,
            {p: f.chunks for p, f in state.files.items()},
            target,
            ml_cards=sum(1 for f in state.files.values() if f.ml),
            progress=lambda done, total: progress(Progress("points exported", done, total)),
        )
    except StoreError as exc:
        raise StoreError(
            f"{exc}; the export stopped: run the same command again to resume it (points "
            "already copied are written again, nothing is doubled)"
        ) from exc
    finally:
        progress.finish()
        target.close()
    # the folder's bookkeeping now describes the server's collection (the same points and
    # vectors; no multilingual vectors there)
    moved = replace(
        state,
        backend=f"qdrant:{url}",
        ml_model="",
        files={p: replace(f, ml=False) for p, f in state.files.items()},
        pending=list(state.pending),
        skipped=dict(state.skipped),
    )
    indexer.state = moved  # saved when the indexer closes, under the folder's lock
    print(
        f"Exported {report.points:,} points ({report.with_dense:,} with vectors) of "
        f"{report.cards:,} cards to {url}, collection {name}"
        + (f"; removed {report.removed:,} stale cards there" if report.removed else ""),
        file=out,
    )
    if report.ml_left_out:
        print(
            f"  multilingual vectors of {report.ml_left_out:,} cards left out: a server "
            "collection has no multilingual vector yet (that search leg is off in remote mode)",
            file=out,
        )
    print(
        f'  now set the setting qdrantUrl to "{url}" (VS Code: zettel.qdrantUrl; Neovim: '
        "settings.zettel.qdrantUrl), with the same index folder: the next start continues "
        "from the server without re-indexing. Commands run without it rebuild the embedded "
        "index (docs/remote.md)",
        file=out,
    )


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


def format_stats(s: GraphStats, vault: Path, problems: list[str]) -> str:
    lines = [
        f"Vault {vault}",
        f"  cards                     {s.cards:>8,}",
        f"  links                     {s.links:>8,}",
        f"    resolved                {s.resolved_links:>8,}",
        f"    unresolved              {s.unresolved_links:>8,}",
        f"    to attachments          {s.attachment_links:>8,}",
        f"    ambiguous (tie-broken)  {s.ambiguous_links:>8,}",
        f"    Dendron order [[a|b]]   {s.dendron_order_links:>8,}",
        f"  distinct linked pairs     {s.distinct_linked_pairs:>8,}",
        f"  unlinked mentions         {s.unlinked_mentions:>8,}"
        f"  ({s.distinct_mention_pairs:,} card pairs)",
        f"  tags                      {s.tags:>8,}",
        f"  skipped files             {s.skipped_files:>8,}",
        f"  seconds                   {s.seconds.get('total', 0):>8.2f}  "
        f"(read+parse {s.seconds.get('load', 0):.2f}, graph {s.seconds.get('graph', 0):.2f})",
    ]
    if s.most_linked:
        lines.append("Most linked cards (linking cards):")
        lines.extend(f"  {m['backlinks']:>5}  {m['title']}  ({m['path']})" for m in s.most_linked)
    if s.unresolved_sample:
        lines.append("Some unresolved links:")
        lines.extend(f"  {u['source']}: {u['link']}" for u in s.unresolved_sample)
    if problems:
        lines.append(f"Problems ({len(problems)}; -v logs them all):")
        lines.extend(f"  {p}" for p in problems[:10])
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
