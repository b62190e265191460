"""Build "hub vs leaf" queries: ask for a card in the words a hub card uses to gloss its link.

    python benchmarks/hub_leaf.py VAULT OUT.json [--max 100] [--per-hub 3] [--seed 0]

A hub line is a list item or table row whose one card link opens it and is followed by at
least five words of gloss: ``- [[Merge sort]]: split the list in halves, sort each half, merge
them``, ``* [Leaf](Leaf.md) — gloss``, ``- [[Delve]] is a debugger that ...``, ``| [[Leaf]] |
gloss |``; a plain line that opens with the link and a dash (``[[Leaf]] - gloss``) counts too
(:func:`gloss_after` has the exact rule and what it leaves out: tasks, changelog sentences).
The query is the gloss made plain (Markdown syntax stripped, other links as their text; embeds,
TeX, URLs, tags, footnotes and block ids dropped); the linked card (the leaf) is the only
relevant answer and the hub a partial one. Links are found and resolved by the project's parser
and graph, so titles, aliases and the title rule are the index's. Left out: lines linking two
or more cards (whose gloss is it?), links to attachments or to the hub itself, embeds, glosses
that repeat the leaf's title, an alias, its file name or the link's label (a title query,
benchmarks/title_queries.py) and glosses picked before. At most ``--per-hub`` queries come
from one hub and ``--max`` in all, one hub at a time in a seeded shuffle. The output is in the
golden-set format (``notes``: the hub line, from 1), so ``zettel-lsp eval VAULT OUT.json
[--no-graph]`` scores it; a one-line summary goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.graph.link_graph import LinkGraph, ResolvedLink
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import TAG, visible_text
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.notes.title_rule import identifier_kind

MIN_WORDS = 5

# before the link, after blockquote marks: a list marker, or a task box (a to-do, not a gloss)
_LIST_MARK = re.compile(r"(?:[-*+]|\d{1,9}[.)])\s+")
_TASK = re.compile(r"\[.\]\s")
# after the link and its closing markup: the dash (or in a list item the colon) that opens a
# gloss, or in a list item "is" / "are" ("- [[Delve]] is a debugger that works with goroutines")
# unless a remark follows ("[[Modifiers]] are not supported", "is now compatible with 0.37",
# "[[fgets()]] is the safe replacement of this", "[[Parkinson's Law]] is in effect")
_DASH = re.compile(r"[*_~=)\]]*\s*(?:—|–|-{1,2})\s")
_COLON = re.compile(r"[*_~=)\]]*\s*:{1,2}\s")
_COPULA = re.compile(
    r"[*_~=)\]]*\s+(?:is|are)\s+"
    r"(?!(?:not|no|now|also|still|always|never|already|currently|the|this|that|in)\b)"
)
_PIPE = re.compile(r"(?<!\\)\|")  # a table cell border ([[a\|b]] in a table is escaped)
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)")
_DROP = [
    re.compile(r"<!--.*?-->|%%.*?%%"),  # comments
    re.compile(r"\$\$.*?\$\$|\$[^$\s](?:[^$]*[^$\s])?\$"),  # TeX math
    re.compile(r"[📅⏳🛫✅➕🔁]\s*\d{4}-\d{2}-\d{2}"),  # task dates
    re.compile(r"\[\^[^\]\n]*\]"),  # footnote references
    re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>|\b(?:https?|ftp)://\S+|\bwww\.\S+"),  # URLs
    re.compile(r"</?[A-Za-z][^<>\n]*>"),  # HTML tags
    re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$"),  # a block id at the end
    TAG,  # inline tags
]
_MARKUP = re.compile(r"\*+|~~|==|`+|(?<!\w)_+|_+(?!\w)|\\(?=\S)|\[\[|\]\]")
_EDGE = " \t|:;,.—–-·•*>"  # separators left at the ends of a gloss
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class HubLine:
    """One gloss: the hub card, its zero-based line, the leaf it links and the query."""

    hub: str
    line: int
    leaf: str
    query: str
    raw: str  # the link as written


def gloss_after(line: str, start: int, end: int) -> str | None:
    """The gloss of the link at ``line[start:end]`` when the line is a hub line, else None.

    Hub lines: a table row whose cells before the link's hold no words (the gloss: the cells
    after it); a list item that the link opens (only markup before it) followed by a dash, a
    colon, "is" or "are"; a plain line opened by the link and a dash. A list item that goes
    on after its link otherwise is a sentence about the link ("[[Move note]] now shows
    completions" in changelogs, "[[Sandbox]] (hopefully by another provider)"), a task
    (``- [x] [[PHLA10]] - What Does It All Mean ✅ 2025-01-07``) is a to-do and a plain line
    ``[[Theorem]]: There are infinitely many primes`` a field of the hub, not a gloss."""
    head, tail = line[:start], line[end:]
    rest = head.lstrip(" \t>")
    if rest.startswith("|"):
        return None if _has_letters(rest) else _PIPE.sub(" ", tail)
    mark = _LIST_MARK.match(rest)
    if mark:
        rest = rest[mark.end() :]
    if rest.startswith("#") or _TASK.match(rest) or _has_letters(rest):
        return None  # a heading, a task, or prose before the link
    seps = (_DASH, _COLON, _COPULA) if mark else (_DASH,)
    sep = next((m for m in (p.match(tail) for p in seps) if m), None)
    return tail[sep.end() :] if sep else None


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def plain(text: str) -> str:
    """A gloss as a query: embeds, comments, footnotes, URLs, HTML, block ids and tags
    dropped, links as their text, emphasis and code marks removed, separators trimmed."""
    text = visible_text(_EMBED.sub(" ", text))
    for pattern in _DROP:
        text = pattern.sub(" ", text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split()).strip(_EDGE).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def name_key(text: str) -> str:
    """Case-, accent-form- and punctuation-insensitive words, space-separated and padded."""
    text = unicodedata.normalize("NFC", text).casefold()
    return " " + " ".join(re.findall(r"\w+", text)) + " "


def leaf_names(card: Card, label: str | None) -> set[str]:
    """The names a gloss must not repeat: title, aliases, file name (unless it is an id, e.g.
    a timestamp) with and without its separators, and the link's label."""
    names = {card.title, *card.aliases}
    if identifier_kind(card.stem) is None:
        names |= {card.stem, re.sub(r"[-_.]+", " ", card.stem)}
    if label:
        names.add(label)
    return {k for k in map(name_key, names) if len(k.strip()) >= 2}


def card_links_by_line(graph: LinkGraph, path: str) -> dict[int, list[ResolvedLink]]:
    """The card's links that resolve to a card, by zero-based line (embeds included, so that a
    line embedding another card counts as linking two)."""
    out: dict[int, list[ResolvedLink]] = {}
    for rl in graph.links_of(path):
        if rl.target is not None and rl.target in graph.cards and not rl.resolution.attachment:
            out.setdefault(rl.link.span.start_pos.line, []).append(rl)
    return out


def hub_lines(graph: LinkGraph, counts: Counter[str]) -> list[HubLine]:
    """Every usable gloss of the vault, in path and line order; ``counts`` gets how many hub
    lines were found and why some were left out."""
    out: list[HubLine] = []
    for path in sorted(graph.cards):
        card = graph.cards[path]
        lines = LineIndex(card.text)
        for line, rls in sorted(card_links_by_line(graph, path).items()):
            rl = rls[0]
            text = lines.line_text(line).rstrip("\r")
            offset = lines.line_start(line)
            gloss = gloss_after(text, rl.link.span.start - offset, rl.link.span.end - offset)
            if gloss is None or len(words(plain(gloss))) < MIN_WORDS:
                continue
            counts["hub lines"] += 1
            leaf = rl.target
            assert leaf is not None
            if len({r.target for r in rls}) > 1:
                counts["several cards"] += 1
            elif leaf == path:
                counts["links itself"] += 1
            elif rl.link.is_embed:
                counts["embed"] += 1
            else:
                query = plain(gloss)
                key = name_key(query)
                shown = rl.link.target if rl.resolution.swapped else rl.link.label
                if any(n in key for n in leaf_names(graph.cards[leaf], shown)):
                    counts["repeats the name"] += 1
                else:
                    out.append(HubLine(path, line, leaf, query, rl.link.raw))
    return out


def pick(found: list[HubLine], most: int, per_hub: int, seed: int) -> list[HubLine]:
    """At most ``per_hub`` glosses of one hub and ``most`` in all, one gloss per hub in turn:
    hubs and their glosses in a shuffle seeded with ``seed``. A gloss already picked (same
    words, another hub or leaf) is not picked twice. Returned in hub and line order."""
    shuffled = list(found)
    random.Random(seed).shuffle(shuffled)
    by_hub: dict[str, list[HubLine]] = {}
    for h in shuffled:
        by_hub.setdefault(h.hub, []).append(h)
    queues = [iter(items) for items in by_hub.values()]
    picked: list[HubLine] = []
    seen: set[str] = set()
    for _ in range(per_hub):
        for queue in queues:
            if len(picked) >= most:
                break
            for h in queue:  # the hub's next gloss not picked yet
                if (key := name_key(h.query)) not in seen:
                    seen.add(key)
                    picked.append(h)
                    break
    return sorted(picked, key=lambda h: (h.hub, h.line))


def golden(picked: list[HubLine]) -> list[dict[str, object]]:
    """The golden-set entries (the format of obsidian-help.golden.json)."""
    return [
        {
            "id": f"h{i + 1:03d}",
            "query": h.query,
            "relevant_paths": [h.leaf],
            "partial_paths": [h.hub],
            "category": "hub_leaf",
            "notes": f"hub line {h.line + 1}: {h.raw}",
        }
        for i, h in enumerate(picked)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--max", type=int, default=100)
    ap.add_argument("--per-hub", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cards, _ = load_vault(args.vault)
    graph = LinkGraph.build(cards)
    counts: Counter[str] = Counter()
    found = hub_lines(graph, counts)
    picked = pick(found, args.max, args.per_hub, args.seed)
    args.out.write_text(json.dumps(golden(picked), indent=1, ensure_ascii=False), encoding="utf-8")
    left_out = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()) if why != "hub lines")
    print(
        f"{args.vault.name}: {counts['hub lines']} hub lines ({left_out or 'none left out'}), "
        f"{len(found)} usable, {len(picked)} kept from {len({h.hub for h in picked})} hubs "
        f"-> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
