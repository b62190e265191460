"""``zettel-lsp suggest``: a card's unlinked mentions and related cards."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from zettel_lsp.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    Subcommands,
    _add_search_options,
    _add_self_tune_option,
    _check_vault,
    _command,
    _open_vault,
    _or_list,
    _read_only,
    near_misses,
)
from zettel_lsp.index.store_api import IndexLockedError
from zettel_lsp.search.suggest import mention_fields, ranked_mentions, related_suggestions
from zettel_lsp.search.suggest.reasons import RelatedSuggestion
from zettel_lsp.vault import Vault


def _add_suggest(sub: Subcommands[argparse.ArgumentParser]) -> None:
    sg = _command(sub, "suggest", cmd_suggest, "link suggestions for one card")
    sg.add_argument("card", help="the card's path inside the vault, e.g. 'method/Atomic notes.md'")
    sg.add_argument("--limit", type=int, default=10)
    _add_self_tune_option(sg)
    _add_search_options(sg)


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


def _stored_weights(vault: Vault, args: argparse.Namespace) -> None:
    """Fuse the related-card suggestions with the weights ``index --self-tune`` chose on the
    vault's own links, or the default ones until it has (said in one line on a terminal);
    ``--no-self-tune``: the default ones. ``suggest`` never chooses them itself: that takes
    tens of seconds on a large vault."""
    vault.self_tune = not args.no_self_tune
    if vault.self_tune and vault.calibration is None and sys.stderr.isatty():
        print(
            "zettel-lsp: related cards weighed with the default weights; `zettel-lsp index "
            "--self-tune` (or an editor's server) chooses them on this vault's own links",
            file=sys.stderr,
        )
