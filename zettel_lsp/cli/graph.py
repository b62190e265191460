"""``zettel-lsp graph``: a vault's link graph, or one card's neighbourhood."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from zettel_lsp.cli.common import (
    EXIT_OK,
    Subcommands,
    _add_vault_options,
    _check_vault,
    _command,
    _load_cards,
    _or_list,
    near_misses,
)
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.stats import GraphStats, describe_card, graph_stats
from zettel_lsp.notes.scan import ScanReport


def _add_graph(sub: Subcommands[argparse.ArgumentParser]) -> None:
    graph = _command(sub, "graph", cmd_graph, "summarise a vault's link graph")
    graph.add_argument("--top", type=int, default=10, help="how many cards to list per section")
    graph.add_argument(
        "--card",
        metavar="NAME",
        help="also show how [[NAME]] resolves and that card's links, backlinks and mentions",
    )
    _add_vault_options(graph)


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
