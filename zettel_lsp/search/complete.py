"""Completion logic (no LSP types): what is being typed at the cursor, and the ranked answers.

- :func:`context_at` reads the line up to the cursor: ``[[`` (a card), ``[[Card#`` (its
  headings), ``[[Card#^`` (its block ids), ``](`` (a Markdown link's path) or ``#`` in prose
  (a tag).
- Cards with nothing typed yet are ranked by **meaning** (the paragraph around the cursor,
  without the link being typed, searched like the related notes of a hover: the caller runs
  the search and passes the ranked paths), **graph proximity** (:func:`graph_leg`:
  Adamic-Adar over the cards this card links to and those linking to it, plus those backlinks
  themselves) and **recency** (file modification times), fused by weighted reciprocal rank
  (:data:`DEFAULT_WEIGHTS`). With something typed, every title, alias and file name is matched
  (:func:`fuzzy_tier`: exact, prefix, word prefix, inside, in order), linked or not; among
  equal matches cards this card already links to, and the card itself, come last, the rest in
  the unprompted order. With nothing typed, linked cards and the card itself come last.
- :func:`link_insert` writes the link in the vault's style
  (:attr:`~zettel_lsp.search.completion_names.VaultNames.style`).

Everything here reads the graph: run it inside the vault lock, with no model call (the
meaning ranking is computed before).
"""

from __future__ import annotations

import heapq
import math
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.relation import BACKLINK, LINKED, NOT_LINKED, THIS_CARD, TWO_HOPS
from zettel_lsp.graph.resolver import norm
from zettel_lsp.notes.editing import paragraph_at
from zettel_lsp.notes.masking import LIST_ITEM, fence_line
from zettel_lsp.notes.model import Card, file_stem, strip_md
from zettel_lsp.search.completion_names import MARKDOWN, Name, matching, vault_names
from zettel_lsp.search.engine import ALL_LEGS, SearchOptions
from zettel_lsp.search.fusion import rrf_scores
from zettel_lsp.search.query import parse_query, words_around
from zettel_lsp.search.suggest import link_name

CARD: Final = "card"
HEADING: Final = "heading"
BLOCK: Final = "block"
TAG: Final = "tag"
PATH: Final = "path"  # the path of a Markdown link: [text](|

DEFAULT_LIMIT = 30  # items with nothing typed (the list is marked incomplete)
TYPED_LIMIT = 50  # items with something typed
LINKED_TAIL = 10  # cards already linked (and this card) listed after the others, at most
MEANING_DEPTH = 40  # cards the meaning search lists
# Words around the cursor the meaning search asks about (chosen on link hold-outs,
# benchmarks/completion_quality.py): the words nearest the link say most about it.
QUERY_WORDS = 16
RRF_K = 20
# weighted reciprocal rank fusion of the unprompted legs; the graph weight chosen by
# leave-one-vault-out on link hold-outs by MRR (benchmarks/completion_quality.py --graph-grid).
# Recency cannot be judged on copied vaults (their file times are the copy's): a tie-breaker.
DEFAULT_WEIGHTS: dict[str, float] = {"meaning": 1.0, "graph": 0.05, "recent": 0.05}
HUB_DEGREE = 400  # a neighbour with more links than this is not expanded (weight ~0 anyway)
FIRST_HOP_CAP = 60  # cards between this one and the two-hop ones walked, at most
RECENT_DEPTH = 30
FIRST_LINE_CHARS = 120


# ---------------------------------------------------------------------- what is being typed


@dataclass(frozen=True, slots=True)
class CompletionContext:
    """What the cursor is completing. Columns are code points on the cursor's line:
    ``start``..``end`` is the text an answer replaces (``end`` includes brackets the editor
    closed already), ``open_start`` is where the link opens (``[[``, ``![[``'s ``[[``, or a
    Markdown link's ``[``), ``target`` the card part of ``[[Card#...``."""

    kind: str
    typed: str
    start: int
    end: int
    open_start: int
    target: str = ""
    closed: bool = False  # the closing brackets were already there


_MD_PATH = re.compile(r"\[([^\[\]]*)\]\(<?([^()\s<>]*)$")
_TAG = re.compile(r"(?:^|(?<=[\s(,;:!?\"']))#([^\s#\[\](){}<>,;:!?\"'`*]*)$")
_HEADING_MARK = re.compile(r"^\s{0,3}#+$")


def context_at(line: str, col: int) -> CompletionContext | None:
    """The completion the cursor at column ``col`` of ``line`` asks for, or None."""
    prefix, rest = line[:col], line[col:]
    i = prefix.rfind("[[")
    if i >= 0 and "]]" not in prefix[i + 2 :]:
        inner = prefix[i + 2 :]
        if "|" in inner:
            return None  # typing the alias: free text
        closed = rest.startswith("]]")
        end = col + (2 if closed else 0)
        if "#" in inner:
            target, sub = inner.split("#", 1)
            if sub.startswith("^"):
                return CompletionContext(BLOCK, sub[1:], col - len(sub) + 1, end, i, target, closed)
            return CompletionContext(HEADING, sub, col - len(sub), end, i, target, closed)
        return CompletionContext(CARD, inner, i + 2, end, i, closed=closed)
    m = _MD_PATH.search(prefix)
    if m is not None:
        typed = m.group(2)
        closed = rest.startswith(")")
        if "#" in typed:
            return None
        return CompletionContext(PATH, typed, col - len(typed), col, m.start(), m.group(1), closed)
    m = _TAG.search(prefix)
    if m is not None:
        typed = m.group(1)
        if _HEADING_MARK.match(prefix) or (not typed and not prefix[: m.start()].strip()):
            return None  # a heading marker being typed at the start of a line
        if prefix.count("`") % 2 == 1:
            return None  # inside inline code
        return CompletionContext(TAG, typed, col - len(typed), col, m.start())
    return None


def meaning_query(card: Card, line: int, ctx: CompletionContext) -> str | None:
    """What the meaning search asks about for a link typed at ``line`` of ``card`` (the
    editor's text): see :func:`_query`."""
    para = paragraph_at(card, line)
    if para is None:
        return None
    start, _, text = para
    return _query(text, line - start, ctx)


def bracket_query(card: Card, line: int, col: int) -> str | None:
    """The query :func:`meaning_query` will ask once a second ``[`` follows the single ``[``
    just typed before column ``col`` of ``line`` (the editor's closing ``]``, if any, after
    it): what to search ahead, while the second bracket is on its way. None when a second
    bracket would not open a card link there."""
    para = paragraph_at(card, line)
    if para is None:
        return None
    start, _, text = para
    lines = text.split("\n")
    row = lines[line - start]
    if not row[:col].endswith("[") or row[:col].endswith("[["):
        return None
    lines[line - start] = row[:col] + "[" + row[col:]
    ctx = context_at(lines[line - start], col + 1)
    if ctx is None or ctx.kind != CARD or ctx.typed:
        return None
    return _query("\n".join(lines), line - start, ctx)


def _query(paragraph: str, row: int, ctx: CompletionContext) -> str | None:
    """The paragraph around the cursor without the link being typed (the same on every
    keystroke, so its embedding is cached), at most ``QUERY_WORDS`` words around the cursor;
    None when it has no words."""
    lines = paragraph.split("\n")
    if 0 <= row < len(lines):
        line = lines[row]
        lo = ctx.open_start - (1 if ctx.open_start > 0 and line[ctx.open_start - 1] == "!" else 0)
        # a bracket the editor closed after a single "[" (the second came later) goes too
        lines[row] = line[:lo] + " " + line[ctx.end :].lstrip("]")
    text = "\n".join(lines)
    if not parse_query(text).words:
        return None
    cursor = sum(len(x) + 1 for x in lines[:row]) + ctx.open_start
    return words_around(text, cursor, QUERY_WORDS)


def meaning_options(options: SearchOptions | None = None) -> SearchOptions:
    """The search the meaning leg runs: the related-notes pipeline (all legs but the keyword
    one: the paragraph is no phrase), ``MEANING_DEPTH`` cards."""
    base = options or SearchOptions()
    legs = tuple(leg for leg in base.legs if leg != "keyword") or ALL_LEGS
    return SearchOptions(limit=MEANING_DEPTH, legs=legs, graph=base.graph, rerank=base.rerank)


# ---------------------------------------------------------------------- ranking


def graph_leg(graph: LinkGraph, here: str, linked: set[str]) -> dict[str, float]:
    """Graph proximity: each card reached in two hops scores the Adamic-Adar sum of the cards
    between (1 / log(2 + their degree)); a card linking to ``here`` that ``here`` does not link
    to yet gets one more. Hubs (more than :data:`HUB_DEGREE` links) are not expanded, and at
    most :data:`FIRST_HOP_CAP` cards are (the least linked first: they say the most)."""
    backs = set(graph.backlinks(here))
    first = sorted((graph.degree(n), n) for n in (linked | backs) - {here})
    scores: dict[str, float] = {}
    for deg, n in first[:FIRST_HOP_CAP]:
        if deg > HUB_DEGREE:
            break
        nbrs = graph.neighbours(n)
        w = 1.0 / math.log(2 + len(nbrs))
        for m in nbrs:
            if m != here:
                scores[m] = scores.get(m, 0.0) + w
    for b in backs - linked:
        scores[b] = scores.get(b, 0.0) + 1.0
    return scores


def relations(
    graph: LinkGraph, here: str, linked: set[str], paths: Sequence[str]
) -> dict[str, str]:
    """linked / backlink / 2 hops / not linked / this card for each of ``paths``."""
    backs = set(graph.backlinks(here))
    first = (linked | backs) - {here}
    out: dict[str, str] = {}
    for p in paths:
        if p == here:
            out[p] = THIS_CARD
        elif p in linked:
            out[p] = LINKED
        elif p in backs:
            out[p] = BACKLINK
        elif graph.touches(p, first):
            out[p] = TWO_HOPS
        else:
            out[p] = NOT_LINKED
    return out


def unprompted_scores(
    graph: LinkGraph,
    here: str,
    linked: set[str],
    meaning: Sequence[str],
    recency: Mapping[str, float],
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The fused score of every candidate of the three legs (meaning: the paths the paragraph
    search ranked; graph: :func:`graph_leg`; recent: the most recently edited cards)."""
    w = DEFAULT_WEIGHTS if weights is None else weights
    g = graph_leg(graph, here, linked) if w.get("graph", 0) > 0 else {}
    legs: dict[str, list[str]] = {
        "meaning": [p for p in dict.fromkeys(meaning) if p in graph.cards or not graph.cards],
        "graph": sorted(g, key=lambda p: (-g[p], p))[:MEANING_DEPTH],
    }
    if w.get("recent", 0) > 0 and recency:
        legs["recent"] = [
            p for p, _ in heapq.nlargest(RECENT_DEPTH, recency.items(), lambda x: x[1])
        ]
    weighed = {leg: ranked for leg, ranked in legs.items() if w.get(leg, 0.0) > 0}
    return rrf_scores(weighed, RRF_K, w)  # weighted: weight / (RRF_K + rank)


@dataclass(frozen=True, slots=True)
class CardAnswer:
    path: str
    name: Name  # the name matched (the title when nothing was typed)


@dataclass(frozen=True, slots=True)
class CardAnswers:
    items: list[CardAnswer]
    incomplete: bool


def fuzzy_tier(typed: str, key: str) -> float | None:
    """How well the normalised ``typed`` matches the normalised name ``key``: 5 exact,
    4 prefix, 3 a word's prefix, 2 inside, 1 + compactness as a subsequence; None: no match."""
    if not typed:
        return 0.0
    if key == typed:
        return 5.0
    if key.startswith(typed):
        return 4.0
    at = key.find(typed)
    if at > 0:
        return 3.0 if not key[at - 1].isalnum() else 2.0
    # subsequence
    pos = -1
    first = -1
    for ch in typed:
        pos = key.find(ch, pos + 1)
        if pos < 0:
            return None
        if first < 0:
            first = pos
    span = pos - first + 1
    return 1.0 + len(typed) / span


def _subsequence(typed: str) -> re.Pattern[str]:
    """``typed``'s characters in order on one line: ``(?m)^[^a\\n]*a[^b\\n]*b[^c\\n]*c``. Tried
    once per line, from its first ``a`` (where a line has a match, the chain from its first
    ``a`` finds one: each next letter is taken at its first place), so a search is linear in
    the text (tests/notes/test_regex_linear.py)."""
    body = "".join(
        re.escape(c) + (f"[^{re.escape(typed[i + 1])}\\n]*" if i + 1 < len(typed) else "")
        for i, c in enumerate(typed)
    )
    return re.compile(f"(?m)^[^{re.escape(typed[0])}\\n]*" + body)


def rank_cards(
    graph: LinkGraph,
    here: str,
    linked: set[str],
    typed: str,
    meaning: Sequence[str],
    recency: Mapping[str, float] | None = None,
    *,
    weights: Mapping[str, float] | None = None,
) -> CardAnswers:
    """The cards for ``[[typed``: see the module. ``meaning``: cards the paragraph's search
    ranked (best first; empty while nothing is indexed). The list is cut at
    :data:`DEFAULT_LIMIT` with nothing typed, :data:`TYPED_LIMIT` else; ``incomplete`` says
    there were more."""
    vn = vault_names(graph)
    prior = unprompted_scores(graph, here, linked, meaning, recency or {}, weights)
    t = norm(typed)
    if not t:
        fresh = sorted(
            (p for p in prior if p not in linked and p != here and p in graph.cards),
            key=lambda p: (-prior[p], p),
        )
        if len(fresh) < DEFAULT_LIMIT:  # still indexing, or a lone card: the most linked cards
            have = set(fresh) | linked | {here}
            top = heapq.nsmallest(
                DEFAULT_LIMIT + len(have), vn.indegree.items(), key=lambda kv: (-kv[1], kv[0])
            )
            fresh.extend(p for p, _ in top if p not in have)
        tail = sorted(linked & graph.cards.keys()) + ([here] if here in graph.cards else [])
        chosen = fresh[:DEFAULT_LIMIT] + tail[:LINKED_TAIL]  # linked cards stay reachable, last
        items = [CardAnswer(p, _title_name(graph.cards[p])) for p in chosen]
        return CardAnswers(items, len(graph.cards) > len(items))
    pattern = _subsequence(t)
    best: dict[str, tuple[tuple[float, int], Name]] = {}
    left_out = False  # matches not looked at: the client must ask again as more is typed
    if "/" in t:  # a path typed: match card paths
        paths = [Name(norm(strip_md(p)), strip_md(p), p, "file") for p in graph.cards]
        pool = matching(paths, pattern)
    else:  # the names holding the typed text; subsequences only when those are too few
        pool = vn.matching(re.compile(re.escape(t)))
        if len(pool) < TYPED_LIMIT:
            pool = vn.matching(pattern)
        else:
            left_out = True
    for name in pool:
        tier = fuzzy_tier(t, name.key)
        if tier is None:
            continue
        rank = (tier, -_KIND_ORDER[name.kind])  # the better tier, then title, file, alias
        known = best.get(name.path)
        if known is None or rank > known[0]:
            best[name.path] = (rank, name)
    backlinks = vn.indegree

    def order(p: str) -> tuple[float, int, float, int, str]:
        # how well the name matches comes first, linked or not: the relation orders equals
        (tier, _), name = best[p]
        last = 1 if (p in linked or p == here) else 0
        return (-tier, last, -prior.get(p, 0.0), -backlinks.get(p, 0), name.key)

    ranked = heapq.nsmallest(TYPED_LIMIT, best, key=order)
    items = [CardAnswer(p, best[p][1]) for p in ranked]
    return CardAnswers(items, left_out or len(best) > TYPED_LIMIT)


_KIND_ORDER = {"title": 0, "file": 1, "alias": 2}


def _title_name(card: Card) -> Name:
    return Name(norm(card.title), card.title, card.path, "title")


# ---------------------------------------------------------------------- what is inserted


def link_insert(
    graph: LinkGraph, here: Card, answer: CardAnswer, style: str, *, embed: bool = False
) -> tuple[str, bool]:
    """The text that replaces the link being typed, and whether it replaces the whole link
    from its opening ``[[`` (True: a Markdown link) or only the part after ``[[`` (False: the
    text ends with ``]]``). Wikilinks name the card the shortest way that resolves to it
    (:func:`~zettel_lsp.search.suggest.link_name`: the file name, the path when it is
    ambiguous; Dendron's hierarchy names are file names), with ``|alias`` when an alias was
    typed; Markdown links carry the path relative to this card, spaces as ``%20``."""
    card = graph.cards.get(answer.path)
    title = card.title if card is not None else file_stem(answer.path)
    if style == MARKDOWN and not embed:
        label = title if answer.name.kind != "alias" else answer.name.text
        label = label.replace("[", "\\[").replace("]", "\\]")
        return f"[{label}]({md_path(here.path, answer.path)})", True
    name = link_name(graph, answer.path, here.path)
    if answer.name.kind == "alias" and norm(answer.name.text) != norm(name):
        return f"{name}|{answer.name.text}]]", False
    return f"{name}]]", False


def md_path(source: str, target: str) -> str:
    """``target``'s path relative to the folder of ``source``, URL-encoded (spaces as %20)."""
    folder = source.rsplit("/", 1)[0] if "/" in source else ""
    rel = posixpath.relpath(target, folder) if folder else target
    return quote(rel, safe="/.-_~()")


def first_prose_line(card: Card, n: int = FIRST_LINE_CHARS) -> str:
    """The card's first line of prose (not a heading, list marker and emphasis removed), cut
    to ``n`` characters at a word."""
    for raw in card.body.split("\n"):
        line = raw.strip()
        if not line or fence_line(line) or line.startswith(("#", "---", "|", "<!--", "![")):
            continue
        line = LIST_ITEM.sub("", line.lstrip("> \t"))
        line = re.sub(
            r"\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]",
            lambda m: m.group(2) or m.group(1),
            line,
        )
        line = re.sub(r"[*_`]", "", line).strip()
        if not line:
            continue
        if len(line) > n:
            cut = line.rfind(" ", 0, n)
            line = line[: cut if cut > 0 else n] + " …"
        return line
    return ""


# ---------------------------------------------------------------------- headings, blocks, tags


def target_card(graph: LinkGraph, here: Card, target: str) -> Card | None:
    """The card ``[[target#`` points at: this card (the editor's text) for ``[[#``."""
    if not target.strip():
        return here
    res = graph.resolve(target, here.path).target
    if res is None:
        return None
    if res == here.path:
        return here
    return graph.cards.get(res)


def headings_of(card: Card, typed: str) -> list[tuple[str, int]]:
    """(heading text, level) of ``card`` matching ``typed`` (fuzzy), in document order."""
    lines = card.text.split("\n")
    out: list[tuple[str, int]] = []
    t = norm(typed)
    for h in card.headings:
        text = _heading_text(lines[h.line]) if h.line < len(lines) else h.text
        if text and (not t or fuzzy_tier(t, norm(text)) is not None):
            out.append((text, h.level))
    return out


def _heading_text(line: str) -> str:
    text = line.lstrip().lstrip("#").rstrip()
    closed = text.rstrip("#")  # a closing sequence counts after a space (or alone)
    if closed != text and (not closed or closed[-1].isspace()):
        text = closed
    return text.strip()


def _without_block_id(text: str) -> str:
    """``text`` without a trailing ``^block-id`` (a scan: no pattern to backtrack)."""
    s = text.rstrip()
    at = s.rfind("^")
    ident = s[at + 1 :] if at >= 0 else ""
    if ident and all(c.isalnum() or c in "_-" for c in ident):
        s = s[:at]
    return s.strip()


def blocks_of(card: Card, typed: str) -> list[tuple[str, str]]:
    """(block id, its line's text) of ``card`` whose id starts with (or holds) ``typed``."""
    lines = card.text.split("\n")
    t = norm(typed)
    return [
        (b.name, _without_block_id(lines[b.line] if b.line < len(lines) else ""))
        for b in card.block_ids
        if not t or t in b.name.lower()
    ]


def tags_for(graph: LinkGraph, typed: str) -> tuple[list[tuple[str, int]], bool]:
    """The vault's tags matching ``typed`` (prefix first, then fuzzy), most used first, with
    how many cards carry each; and whether the list was cut."""
    counts = vault_names(graph).tags
    t = norm(typed)
    scored = []
    for tag, n in counts.items():
        tier = fuzzy_tier(t, tag.lower())
        if tier is not None:
            scored.append((-tier, -n, tag))
    scored.sort()
    return [(tag, -n) for _, n, tag in scored[:TYPED_LIMIT]], len(scored) > TYPED_LIMIT
