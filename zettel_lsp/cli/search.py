"""``zettel-lsp search`` and ``ask``."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from zettel_lsp.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_NO_ANSWER,
    EXIT_OK,
    CliError,
    Subcommands,
    _add_llm_options,
    _add_search_options,
    _command,
    _llm_settings,
    _multilingual_for,
    _open_vault,
    _read_only,
    _search_options,
)
from zettel_lsp.index.embedders import EmbedderError
from zettel_lsp.index.store_api import IndexLockedError
from zettel_lsp.llm.settings import LLMSettings
from zettel_lsp.search.engine import SearchOptions, title_index
from zettel_lsp.search.fallback import scan_search
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.results import legs_text, result_dict
from zettel_lsp.vault import Vault


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
        vault.dense_off_reason = str(exc)
        return vault.engine.search(query, opts)


def _print_results(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows:
        print(f"No cards match {args.query!r}.")
    for i, r in enumerate(rows, start=1):
        legs = legs_text(r["legs"])
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
