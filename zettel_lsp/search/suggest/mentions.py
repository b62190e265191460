"""Unlinked mentions: the spans of a card that name another card without linking it, and how
likely each mentioned card is to become a link (:func:`mention_confidence`, issue #14)."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence, Set
from dataclasses import dataclass
from functools import cache, partial

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.frontmatter import string_list
from zettel_lsp.notes.masking import heading_line_spans
from zettel_lsp.notes.mentions import normalise
from zettel_lsp.notes.model import Card, Position, file_stem, strip_md
from zettel_lsp.notes.positions import LineIndex


@dataclass(frozen=True, slots=True)
class MentionSuggestion:
    start: int  # code-point offsets into the card text
    end: int
    start_pos: Position
    end_pos: Position
    text: str  # as written
    target: str  # card path
    target_title: str
    replacement: str  # "[[Target]]" or "[[Target|text]]"
    in_heading: bool = False  # on a section heading line: offered, never linked in bulk


def link_name(graph: LinkGraph, target: str, source: str) -> str:
    """The shortest name that links ``source`` to ``target``: the file stem when it resolves
    there, else the vault path without ``.md``."""
    stem = file_stem(target)
    if graph.resolve(stem, source).target == target:
        return stem
    return strip_md(target)


def mention_suggestions(graph: LinkGraph, card: Card) -> list[MentionSuggestion]:
    lines = LineIndex(card.text)
    headings = heading_line_spans(card.text)
    starts = [s for s, _ in headings]
    out = []
    name_of = cache(partial(link_name, graph, source=card.path))  # once per card
    for m in graph.find_mentions_in(card):
        name = name_of(m.target)
        replacement = f"[[{name}]]" if m.text == name else f"[[{name}|{m.text}]]"
        i = bisect_right(starts, m.start) - 1
        out.append(
            MentionSuggestion(
                m.start,
                m.end,
                lines.position(m.start),
                lines.position(m.end),
                m.text,
                m.target,
                graph.cards[m.target].title,
                replacement,
                i >= 0 and headings[i][1] >= m.end,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class MentionTarget:
    """One mentioned card, once: its mentions in this card (in order) and how sure a link is."""

    target: str
    target_title: str
    mentions: tuple[MentionSuggestion, ...]
    confidence: float  # 0..1, see :func:`mention_confidence`
    linked_by: int  # cards that link to the target
    named_by: int  # cards that name it in prose without linking it
    already_linked: bool = False  # this card links the target elsewhere

    @property
    def count(self) -> int:
        return len(self.mentions)

    @property
    def confident(self) -> bool:
        """Linked by "Link N confident mentions": likely enough, and not linked here yet."""
        return self.confidence >= CONFIDENT and not self.already_linked


@dataclass(frozen=True, slots=True)
class MentionEvidence:
    """What :func:`mention_confidence` weighs for one mentioned card."""

    linked_by: int
    named_by: int
    words: int  # words in the longest phrase mentioned
    chars: int  # its length
    case: int  # +1: written as the name is (with a capital); -1: a capitalised name in lower case
    heading_alias: bool  # matched only through an alias taken from an opening H1, not a name


# Thresholds on the confidence (issue #14). See mention_confidence and
# docs/decisions/0009-unlinked-mention-rule.md.
CONFIDENT = 0.5  # "Link N confident mentions" links these
SHOWN = 0.02  # below this a mention is not suggested at all (a common word in this vault)


def mention_confidence(e: MentionEvidence) -> float:
    """How likely a mention becomes a link, from evidence any vault has (issue #14):

    - the target's link rate: of the cards that name it, how many link it (``linked_by`` against
      ``named_by``, with one pseudo-count each): "Data", named by 907 cards and linked by 3, is a
      common word in that vault, "Scrum", linked by 5 of 7, is a name;
    - the phrase: several words or a long word are specific, a short single word is not;
    - case: "Agile" written as its title is stronger than "process" for the title "Process";
    - source: an alias that only comes from an opening H1 ("Tools" in "Digital Forensics.md")
      is weak.

    A logistic score of these; the weights are round numbers checked on four vaults."""
    odds = (e.linked_by + 1.0) / (e.named_by + 1.0)
    logit = math.log(odds)
    logit += 0.8 * min(e.words - 1, 2)
    if e.words == 1 and e.chars < 6:
        logit -= 0.5
    logit += 0.7 * e.case
    if e.heading_alias:
        logit -= 1.5
    return 1.0 / (1.0 + math.exp(-logit))


# A one-word name is a common word, not offered, below this link rate (common_word).
COMMON_LINK_RATE = 0.075


def common_word(texts: Sequence[str], linked_by: int, named_by: int) -> bool:
    """Whether a card named here only as ``texts`` is a common word the vault does not link:
    every text is one lower-case word of letters ("rule", "points"; not "Rule", "C++" nor
    "dendron.topic"), and of the cards that name the card, fewer than
    :data:`COMMON_LINK_RATE` link it (``linked_by`` against ``named_by``, the cards that name it
    without a link: its link rate, the vault's own judgement of the word). A capital, more
    words or a vault that links the word often is the evidence such a name needs."""
    if not texts or not all(t.isalpha() and t.islower() for t in texts):
        return False
    return linked_by < COMMON_LINK_RATE * (linked_by + named_by)


def mention_evidence(graph: LinkGraph, target: str, texts: Sequence[str]) -> MentionEvidence:
    """The evidence for linking ``target`` where it is mentioned as ``texts``."""
    card = graph.cards[target]
    fm = card.frontmatter
    fm_aliases = {normalise(a) for k in ("aliases", "alias") for a in string_list(fm.get(k))}
    stem = file_stem(target)
    names = [card.title, stem, *card.aliases]
    strong = {normalise(card.title), normalise(stem)} | fm_aliases
    longest = max(texts, key=len)
    linked_by, named_by = graph.link_counts(target)
    return MentionEvidence(
        linked_by=linked_by,
        named_by=named_by,
        words=len(longest.split()),
        chars=len(longest),
        case=max(_case(text, names) for text in set(texts)),
        heading_alias=not any(normalise(t) in strong for t in texts),
    )


def _case(text: str, names: Sequence[str]) -> int:
    """+1: ``text`` is written exactly as a name that has a capital ("Agile", "RRF"); -1: a name
    with capitals written all in lower case ("process" for "Process"); else 0."""
    written = [n for n in names if normalise(n) == normalise(text)]
    if text in written and any(c.isupper() for c in text):
        return 1
    if text == text.lower() and written and all(any(c.isupper() for c in n) for n in written):
        return -1
    return 0


def rank_mentions(
    graph: LinkGraph,
    mentions: Sequence[MentionSuggestion],
    *,
    linked: Set[str] = frozenset(),
    common: bool = False,
) -> list[MentionTarget]:
    """Each mentioned card once, with all its mentions, most confident first (then in order of
    first appearance); cards the note already links (``linked``) come last, and cards below
    :data:`SHOWN` are left out, and unless ``common``, those named only as a
    :func:`common_word`, which the editor never offers. The related ranking's mention leg keeps
    them (``common``): its fusion weighs the leg on the vault's own links, and the editor lists
    no mentioned card among the related ones."""
    by_target: dict[str, list[MentionSuggestion]] = {}
    for m in mentions:
        by_target.setdefault(m.target, []).append(m)
    out: list[MentionTarget] = []
    for target, ms in by_target.items():
        texts = [m.text for m in ms]
        e = mention_evidence(graph, target, texts)
        confidence = mention_confidence(e)
        if confidence < SHOWN or (not common and common_word(texts, e.linked_by, e.named_by)):
            continue
        out.append(
            MentionTarget(
                target,
                ms[0].target_title,
                tuple(ms),
                confidence,
                e.linked_by,
                e.named_by,
                target in linked,
            )
        )
    out.sort(key=lambda t: (t.already_linked, -t.confidence, t.mentions[0].start))
    return out


def mention_fields(t: MentionTarget, m: MentionSuggestion) -> dict[str, object]:
    """One suggested mention as JSON (without its place, which the server gives as an LSP range
    and the CLI as a line and characters)."""
    return {
        "text": m.text,
        "target": m.target,
        "target_title": m.target_title,
        "replacement": m.replacement,
        "confidence": round(t.confidence, 3),
        "confident": t.confident,
        "count": t.count,
        "in_heading": m.in_heading,
    }


def ranked_mentions(graph: LinkGraph, card: Card) -> list[MentionTarget]:
    """The mention suggestions of ``card`` (its current text), each card once, ranked."""
    return rank_mentions(
        graph, mention_suggestions(graph, card), linked=linked_targets(graph, card)
    )


def by_specificity(graph: LinkGraph, mentions: Sequence[MentionSuggestion]) -> list[str]:
    """Mentioned cards, most confident first (:func:`rank_mentions`); the order the server
    shows and the ``title_specific`` ranker of the link hold-outs (docs/evaluation.md)."""
    return [t.target for t in rank_mentions(graph, mentions)]


def linked_targets(graph: LinkGraph, card: Card, skip_offset: int | None = None) -> set[str]:
    """Cards the (possibly unsaved) card links to now, leaving out the link at ``skip_offset``
    (the one being typed, which an auto-closed ``[[x]]`` makes parse)."""
    out: set[str] = set()
    for link in card.links:
        if skip_offset is not None and link.span.start <= skip_offset <= link.span.end:
            continue
        target = graph.resolve_link(link, card.path).target
        if target is not None:
            out.add(target)
    return out
