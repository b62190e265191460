"""Command line: ``zettel-lsp`` (serve LSP over stdio), ``graph``, ``index``, ``search``,
``ask``, ``suggest``, ``eval``, ``eval-links``, ``eval-beir``.

One module per command (``evals.py``: ``eval``, ``eval-links``, ``eval-beir``); ``common.py``
holds what they share. ``ask`` (and ``search --expand/--llm-rerank``) use a local Ollama (see
docs/llm.md). Every command ends with one of the exit codes of ``common.py`` (the table in
docs/cli.md); a message for the user goes to stderr as one ``zettel-lsp: ...`` line, never as a
traceback."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence

from zettel_lsp import __version__
from zettel_lsp.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CliError
from zettel_lsp.cli.evals import _add_eval, _add_eval_beir, _add_eval_links
from zettel_lsp.cli.graph import _add_graph
from zettel_lsp.cli.index import _add_index
from zettel_lsp.cli.search import _add_search_and_ask
from zettel_lsp.cli.suggest import _add_suggest
from zettel_lsp.eval.beir import BeirError
from zettel_lsp.index.embedders import EmbedderError
from zettel_lsp.index.store_api import IndexLockedError, StoreError
from zettel_lsp.workdir import WorkDirError


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
    commands = (_add_graph, _add_index, _add_search_and_ask, _add_suggest)
    for add in (*commands, _add_eval_links, _add_eval, _add_eval_beir):
        add(sub)
    return parser


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
        code = run(args)
        sys.stdout.flush()  # a reader that is gone shows here, not as a traceback at exit
        return code
    except BrokenPipeError:  # the reader of stdout is gone (`| head`): stop quietly
        _drop_stdout()
        return EXIT_FAILED
    except (CliError, WorkDirError, BeirError, IndexLockedError, StoreError, EmbedderError) as exc:
        print(f"zettel-lsp: {exc}", file=sys.stderr)
        if isinstance(exc, CliError):
            return exc.code
        # a refused folder or a garbled collection is a usage error; the rest could not be done
        return EXIT_USAGE if isinstance(exc, WorkDirError | BeirError) else EXIT_FAILED
    except KeyboardInterrupt:
        print("\nzettel-lsp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _drop_stdout() -> None:
    """Point stdout at the null device: what is still buffered goes nowhere instead of failing
    again when Python flushes it at exit (the recipe of the ``signal`` module's docs)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
