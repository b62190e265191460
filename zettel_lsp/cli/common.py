"""What the commands share: exit codes, options, opening a vault, settings from options."""

from __future__ import annotations

import argparse
import difflib
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.embedders import DEFAULT_MODEL, EmbedderError
from zettel_lsp.index.store_api import IndexLockedError
from zettel_lsp.index.sync import MULTILINGUAL_MODES, IndexSettings
from zettel_lsp.llm.settings import DEFAULT_CHAT_MODEL, LLMSettings
from zettel_lsp.notes.language import is_english
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.scan import ScanReport, load_vault
from zettel_lsp.notes.title_rule import TITLE_SOURCES, TitleSource
from zettel_lsp.ollama_client import OllamaSettings
from zettel_lsp.progress import TerminalProgress
from zettel_lsp.search.engine import (
    ALL_LEGS,
    DEFAULT_FUSION,
    DEFAULT_KNOWN_ITEM,
    DEFAULT_WEIGHTS,
    FUSIONS,
    SearchOptions,
)
from zettel_lsp.vault import Vault

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


def _add_self_tune_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-self-tune",
        action="store_true",
        help="fuse the related-card suggestions with the default weights, not the ones chosen "
        "on the vault's own links (docs/evaluation.md, 'Self-tuned suggestions')",
    )


def _add_search_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--legs",
        default=",".join(ALL_LEGS),
        help=f"comma-separated retrieval legs (default {','.join(ALL_LEGS)})",
    )
    p.add_argument(
        "--no-graph",
        action="store_true",
        help="switch the graph off: its rerank and anchor-text leg",
    )
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


def _check_vault(path: Path) -> None:
    """Raise :class:`CliError` (a usage error) unless ``path`` is a folder."""
    if not path.exists():
        raise CliError(f"vault folder {path} does not exist")
    if not path.is_dir():
        raise CliError(f"{path} is not a folder; give the folder that holds your notes")


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
        vault.indexer.embed_multilingual()  # the cards in its scope (none in an English vault)
    except EmbedderError as exc:  # e.g. an 'ollama:' model while Ollama is down
        progress.finish()
        print(f"zettel-lsp: {exc}; searching without the dense leg", file=sys.stderr)
        vault.dense_off_reason = str(exc)
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


def _multilingual_for(vault: Vault, queries: Sequence[str]) -> None:
    """Before searching: if a query is not English, every card gets its multilingual vector
    (once; the index keeps them) and the model loads, as the server does in the background.
    The progress shows on the vault's own progress line. An English query loads the model
    when non-English cards have its vectors: it reads those cards."""
    if any(not is_english(q) for q in queries if q.strip()):
        try:
            vault.ensure_multilingual()
        finally:
            if isinstance(vault.indexer.progress, TerminalProgress):
                vault.indexer.progress.finish()
    elif vault.multilingual_status()[1]:
        vault.load_multilingual_model()
