"""The name legs of the related ranking: cards a card names in ways the mention pass does not
find (link labels, another number, names too short for it)."""

from __future__ import annotations

import functools
import re
import unicodedata
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.resolver import card_keys
from zettel_lsp.notes.mentions import (
    MentionMatcher,
    long_enough,
    lower_same_length,
    normalise,
    unlinkable,
)
from zettel_lsp.notes.model import Card
from zettel_lsp.search.suggest.graph_legs import Ranked
from zettel_lsp.search.suggest.mentions import common_word

# ------------------------------------------------------------------ link labels

LABEL_MAX_CHARS = 60  # a longer link text is part of a sentence, not a name for the card
# a label counts once at least this many cards show it on their links to the card: a name
# one card gave it in passing ("in", "here") would match every such word in every card
LABEL_MIN_CARDS = 2


@dataclass(frozen=True, slots=True)
class LinkLabels:
    """The names a vault's writers gave cards in their links' visible text
    (``[[Direct Current|DC]]``, ``[text](Card.md)``) that are none of the card's own names
    (title, file name, aliases, id: :func:`~zettel_lsp.graph.resolver.card_keys`), shown so
    by at least :data:`LABEL_MIN_CARDS` cards: such names find no title mention, and a card
    that writes "neural nets" where other cards link [[Neural Network|neural nets]] likely
    means that card. A label the mention pass would not look for as a title (shorter than 3
    characters: "OS", "DC") is left out; the short-names leg finds such titles and aliases."""

    matcher: MentionMatcher  # normalised label -> the cards links show it for
    uses: Mapping[tuple[str, str], int]  # (label, card): cards that link the card with it
    total: Mapping[str, int]  # label: cards that show it on a link, to any card


_Table = TypeVar("_Table")
_TABLES: weakref.WeakKeyDictionary[LinkGraph, dict[str, tuple[int, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _per_graph(graph: LinkGraph, make: Callable[[LinkGraph], _Table]) -> _Table:
    """``make(graph)``, of the graph's links and names alone: kept per graph and made again
    when a change since could move a link or a name (:attr:`LinkGraph.link_generation`; a save
    that changes prose only keeps it)."""
    kept = _TABLES.setdefault(graph, {})
    name = make.__name__
    got = kept.get(name)
    if got is not None and got[0] == graph.link_generation:
        return cast(_Table, got[1])
    generation = graph.link_generation
    table = make(graph)
    kept[name] = (generation, table)
    return table


def link_labels(graph: LinkGraph) -> LinkLabels:
    """The graph's :class:`LinkLabels` (:func:`_per_graph`): one pass over the links and an
    automaton over the labels (0.46 s at 100k cards)."""
    return _per_graph(graph, _make_labels)


def _make_labels(graph: LinkGraph) -> LinkLabels:
    @functools.cache
    def names(target: str) -> set[str]:
        """The names ``target`` can be linked by, normalised."""
        return {normalise(n) for n in card_keys(graph.cards[target])}

    uses: Counter[tuple[str, str]] = Counter()
    total: Counter[str] = Counter()
    for source in graph.cards:
        pairs: set[tuple[str, str]] = set()
        for rl in graph.links_of(source):
            target, label = rl.target, rl.link.label
            if not label or target is None or rl.link.is_embed or target == source:
                continue
            if target not in graph.cards or len(label) > LABEL_MAX_CHARS:
                continue
            norm = normalise(label)
            if norm and norm not in names(target):
                pairs.add((norm, target))
        uses.update(pairs)
        total.update({n for n, _ in pairs})
    named = {pair: n for pair, n in uses.items() if n >= LABEL_MIN_CARDS}
    return LinkLabels(MentionMatcher(named, graph.mention_min_length), named, total)


def labelled(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> Ranked:
    """The labels leg: the cards ``card`` names (outside ``blocked``, by default what may not
    become a link, :func:`~zettel_lsp.notes.mentions.unlinkable`) by a label other cards'
    links show for them (:func:`link_labels`), with that label; ranked by the share of the
    label's cards that mean this card by it, then by how many do, then by where it is first
    named."""
    table = link_labels(graph)
    if not len(table.matcher):
        return []
    best: dict[str, tuple[float, int, int]] = {}
    said: dict[str, str] = {}
    spans = unlinkable(card) if blocked is None else blocked
    for m in table.matcher.find(card.text, spans):
        total = table.total.get(m.phrase, 0)
        for target in m.keys:
            n = table.uses.get((m.phrase, target), 0)
            if not n or not total or target in exclude or target == card.path:
                continue
            key = (-n / total, -n, m.start)
            if target not in best or key < best[target]:
                best[target] = key
                said[target] = card.text[m.start : m.end]
    return [(t, [said[t]]) for t in sorted(best, key=lambda t: (best[t], t))]


NAME_LEGS = ("inflections", "short_names", "labels")  # legs whose "via" is the text as written


def named_as_common_words(graph: LinkGraph, via: Mapping[str, Mapping[str, list[str]]]) -> set[str]:
    """The cards the name legs (``via``: leg -> card -> the text that names it) found only by a
    common word (:func:`~zettel_lsp.search.suggest.mentions.common_word`: one lower-case word
    the vault seldom links to the card, "points" for "Point"). Like the cards the note names
    without a link, the editor does not list them among the related cards."""
    said: dict[str, list[str]] = {}
    for leg in NAME_LEGS:
        for target, texts in via.get(leg, {}).items():
            said.setdefault(target, []).extend(texts)
    return {t for t, texts in said.items() if common_word(texts, *graph.link_counts(t))}


# ------------------------------------------------------------------ inflected names

_LAST_WORD = re.compile(r"(?<![^\W\d_])([a-z]{3,})$")  # a name's last word, ASCII letters
_KEEP_S = ("ss", "us", "is")  # "Process", "Corpus", "Analysis": no plural -s to take off


def inflected_form(name: str) -> str | None:
    """The other number of a normalised name's last word (English, ASCII letters, 3 or more):
    "digital certificate" -> "digital certificates", "logic gates" -> "logic gate", "query" ->
    "queries", "patches" -> "patch", "analysis" -> "analyses"; None for a name whose last
    word is not such a word, or ends in "us". A rule, not a dictionary: a form that is no word
    ("series" -> "sery") is harmless, it is never written."""
    m = _LAST_WORD.search(name)
    if m is None:
        return None
    head, w = name[: m.start(1)], m.group(1)
    if w.endswith("ies") and len(w) > 4:
        form = w[:-3] + "y"
    elif w.endswith(("ches", "shes", "xes", "sses", "zes")):
        form = w[:-2]
    elif w.endswith("s") and not w.endswith(_KEEP_S):
        form = w[:-1]
    elif w.endswith("is"):  # "analysis" -> "analyses"
        form = w[:-2] + "es"
    elif w.endswith("us"):  # "corpus", "virus": no one plural
        return None
    elif w.endswith("y") and w[-2] not in "aeiou":
        form = w[:-1] + "ies"
    elif w.endswith(("s", "x", "z", "ch", "sh")):
        form = w + "es"
    else:
        form = w + "s"
    return head + form


INFLECTION_CHARS = 20_000  # the inflections leg reads this much of a card (1 MB notes exist)
INFLECTION_WORDS = 6  # names of at most this many words are looked for in another number
_WORD = re.compile(r"\w+")


def inflected(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> Ranked:
    """The inflections leg: cards ``card`` names in another number, a title or alias whose last
    word is written in the other number (:func:`inflected_form`) and that is no name as
    written (a mention finds those), outside ``blocked`` (by default what may not become a
    link, :func:`~zettel_lsp.notes.mentions.unlinkable`); with the text as written, most
    often named first, then by where first named. Each word of the card's first
    :data:`INFLECTION_CHARS` characters that has another number is looked up, with up to
    :data:`INFLECTION_WORDS` - 1 words before it as written, in the graph's name table (no
    automaton over every name's other number: too large)."""
    names = graph.name_phrases()
    if not names:
        return []
    low = lower_same_length(card.text[:INFLECTION_CHARS])
    words = [(m.start(), m.end()) for m in _WORD.finditer(low)]
    if blocked is None:
        blocked = unlinkable(card)
    starts = [a for a, _ in blocked]
    hits: list[tuple[int, str, Sequence[str]]] = []  # where, as written, the cards it names
    for j, (ws, we) in enumerate(words):
        form = inflected_form(low[ws:we])
        if form is None:
            continue
        hit: tuple[int, tuple[str, ...]] | None = None
        for i in range(max(0, j - INFLECTION_WORDS + 1), j + 1):  # the longest first
            start = words[i][0]
            if low[start:we] in names:
                break  # a name as written: a mention, not an inflection
            owners = names.get(low[start:ws] + form)
            if owners is not None:
                hit = (start, owners)
                break
        if hit is None:
            continue
        start, owners = hit
        if not _overlaps(blocked, starts, start, we):
            hits.append((start, card.text[start:we], owners))
    return _most_named(hits, exclude | {card.path})


def _overlaps(
    blocked: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int
) -> bool:
    """Whether ``[start, end)`` overlaps one of ``blocked`` (sorted spans, ``starts`` their
    starts)."""
    k = bisect_right(starts, start) - 1
    return (k >= 0 and blocked[k][1] > start) or (k + 1 < len(blocked) and blocked[k + 1][0] < end)


def _most_named(hits: Iterable[tuple[int, str, Sequence[str]]], exclude: Set[str]) -> Ranked:
    """The cards ``hits`` name (each: where, the text as written, the cards it names), none of
    ``exclude``: most often named first, then by where first named, each with its text."""
    count: Counter[str] = Counter()
    first: dict[str, tuple[int, str]] = {}  # where first named, and as what
    for start, text, owners in hits:
        for target in owners:
            if target not in exclude:
                count[target] += 1
                first.setdefault(target, (start, text))
    ranked = sorted(count, key=lambda t: (-count[t], first[t][0], t))
    return [(t, [first[t][1]]) for t in ranked]


# ------------------------------------------------------------------ short names

SHORT_NAME_CHARS = INFLECTION_CHARS  # the short-names leg reads this much of a card


@dataclass(frozen=True, slots=True)
class ShortNames:
    """The titles and aliases too short for the mention pass ("OS", "DC", "IR", "C", "F*",
    "5G": shorter than :attr:`LinkGraph.mention_min_length`) that hold a capital letter, each
    as written (NFC), with its cards; and one case-sensitive pattern over them all."""

    pattern: re.Pattern[str] | None
    owners: Mapping[str, tuple[str, ...]]
    mixed: frozenset[str]  # the names with a small letter too ("Go"): not at a sentence's start


_SENTENCE_START = re.compile(r"(?:^|[\n.!?:>#*+-]|\d\.)[ \t]*$")


def short_names(graph: LinkGraph) -> ShortNames:
    """The graph's :class:`ShortNames` (:func:`_per_graph`): one pass over the cards' titles
    and aliases."""
    return _per_graph(graph, _make_short_names)


def _make_short_names(graph: LinkGraph) -> ShortNames:
    least = graph.mention_min_length
    owners: dict[str, set[str]] = {}
    for card in graph.cards.values():
        for name in (card.title, *card.aliases):
            name = unicodedata.normalize("NFC", name).strip()
            if not any(c.isupper() for c in name) or any(c.isspace() for c in name):
                continue  # "ls", "cd": everyday words
            if long_enough(normalise(name), least):
                continue  # the mention pass looks for it
            owners.setdefault(name, set()).add(card.path)
    pattern = None
    if owners:
        # longest first, so "F*" wins over "F"; a name is a whole token: no word character
        # or dot before it, none after it, nor "+" or "#" ("C++", "C#"), nor a dotted tail
        names = "|".join(re.escape(n) for n in sorted(owners, key=lambda n: (-len(n), n)))
        pattern = re.compile(rf"(?<![\w.])(?:{names})(?![\w+#]|\.\w)")
    return ShortNames(
        pattern,
        {n: tuple(sorted(p)) for n, p in owners.items()},
        frozenset(n for n in owners if any(c.islower() for c in n)),
    )


def short_named(
    graph: LinkGraph,
    card: Card,
    exclude: Set[str],
    blocked: Sequence[tuple[int, int]] | None = None,
) -> Ranked:
    """The short-names leg: cards ``card`` names by a title or alias too short for the mention
    pass (:func:`short_names`), written exactly as the name is (case and all: "OS" is a name,
    "os" and "Os" are not), as a whole token, outside ``blocked`` (by default what may not
    become a link, :func:`~zettel_lsp.notes.mentions.unlinkable`), in the card's first
    :data:`SHORT_NAME_CHARS` characters. A name with a small letter ("Go") does not count at
    the start of a sentence, line or list item, where any word is capitalised. Most often named
    first, then by where first named; a name two cards share names both."""
    table = short_names(graph)
    if table.pattern is None:
        return []
    text = card.text[:SHORT_NAME_CHARS]
    if blocked is None:
        blocked = unlinkable(card)
    starts = [a for a, _ in blocked]
    hits: list[tuple[int, str, Sequence[str]]] = []
    for m in table.pattern.finditer(text):
        start, end = m.span()
        if _overlaps(blocked, starts, start, end):
            continue
        name = m.group()
        if name in table.mixed and _SENTENCE_START.search(text, max(0, start - 8), start):
            continue
        hits.append((start, name, table.owners[name]))
    return _most_named(hits, exclude | {card.path})
