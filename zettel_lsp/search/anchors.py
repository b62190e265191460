"""Anchor text: what the vault says about a card, as a search leg (issue #46).

A card's anchor text is the sentences of *other* cards around their links to it: "[[Merge
sort]] splits the list in halves and merges them back" says, in another card's words, what
``Merge sort.md`` is about. The sentence is the one holding the link, within its line, cut to
:data:`WINDOW` words either side, every link in it written as its visible text. A sentence
with fewer than :data:`OWN_WORDS` words outside its links (a bare list of links, a
``## Cites`` entry, "See also [[X]]") says nothing but the target's name and is left out, so
a list of titles is never counted again as the text of the cards it names. Embeds and links to
the card itself do not count. A card's sentences are kept in the order of the linking cards'
paths, at most :data:`CAP` words in all.

:class:`AnchorIndex` ranks cards by BM25 (k1 1.2, b 0.75) of the query's words against their
anchor texts, words stemmed by the Snowball English stemmer, the search's stopwords
dropped. It is kept in step with the graph: :meth:`AnchorIndex.update` re-reads the sentences
of the cards that changed, and all of them when a card's names changed (a link may then
resolve to another card).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from py_rust_stemmers import SnowballStemmer

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card, Link, file_stem
from zettel_lsp.search.query import STOPWORDS

WINDOW = 20  # words kept on each side of the link, within its sentence
CAP = 400  # words of anchor text per card
OWN_WORDS = 3  # words a sentence needs outside its links to say something of the target
K1, B = 1.2, 0.75
_WORD = re.compile(r"[\w][\w'’-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_STEMMER = SnowballStemmer("english")


def visible(link: Link) -> str:
    """What a link shows in the text: its label, else its target's last part."""
    if link.label:
        return link.label
    return file_stem(link.target) if link.target else link.raw


def sentence_around(card: Card, start: int, end: int) -> str | None:
    """The anchor sentence of the link (or name) at ``[start, end)`` in ``card`` (see the
    module); None when it has fewer than :data:`OWN_WORDS` words outside links."""
    text = card.text
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    ends = [m.end() for m in _SENTENCE_END.finditer(text, lo, hi)]
    lo = max([e for e in ends if e <= start], default=lo)
    hi = min([e for e in ends if e >= end], default=hi)
    parts: list[str] = []
    own, at = 0, lo
    here: int | None = None  # words before the link
    for x in card.links:
        if lo <= x.span.start and x.span.end <= hi:
            if here is None and x.span.start >= start:
                here = len(_WORD.findall("".join(parts) + text[at:start]))
            between = text[at : x.span.start]
            own += len(_WORD.findall(between))
            parts += [between, visible(x)]
            at = x.span.end
    own += len(_WORD.findall(text[at:hi]))
    if own < OWN_WORDS:
        return None
    if here is None:
        here = len(_WORD.findall("".join(parts) + text[at:start]))
    words = _WORD.findall("".join(parts) + text[at:hi])
    return " ".join(words[max(0, here - WINDOW) : here + WINDOW])


def said_by(graph: LinkGraph, path: str) -> dict[str, list[str]]:
    """Target card -> the anchor sentences the card at ``path`` gives it."""
    card = graph.cards.get(path)
    out: dict[str, list[str]] = {}
    if card is None:
        return out
    for rl in graph.links_of(path):
        target = rl.target
        if target is None or target == path or rl.link.is_embed:
            continue
        sentence = sentence_around(card, rl.link.span.start, rl.link.span.end)
        if sentence:
            out.setdefault(target, []).append(sentence)
    return out


def terms(text: str) -> list[str]:
    words = (w.lower() for w in _WORD.findall(text))
    return [_STEMMER.stem_word(w) for w in words if w not in STOPWORDS]


class AnchorIndex:
    """The anchor texts of a graph's cards, and BM25 over them (see the module)."""

    def __init__(self) -> None:
        # linking card -> target -> its anchor sentences there
        self._said: dict[str, dict[str, list[str]]] = {}
        self._by_target: dict[str, set[str]] = {}  # target -> the cards that say something
        self._docs: dict[str, Counter[str]] = {}  # target -> term counts of its anchor text
        self._lengths: dict[str, int] = {}  # target -> terms in its anchor text
        self._postings: dict[str, dict[str, int]] = {}  # term -> target -> count
        self._length = 0  # terms in all anchor texts

    @classmethod
    def of(cls, graph: LinkGraph) -> AnchorIndex:
        index = cls()
        index.update(graph, graph.cards, everything=True)
        return index

    def __len__(self) -> int:
        return len(self._docs)

    def cards(self) -> list[str]:
        """The cards that have anchor text."""
        return sorted(self._docs)

    def text(self, target: str) -> str:
        """The anchor text of ``target`` ("" when no card says anything of it)."""
        said = [
            s for src in sorted(self._by_target.get(target, ())) for s in self._said[src][target]
        ]
        return " ".join(" ".join(said).split()[:CAP])

    def update(self, graph: LinkGraph, paths: Iterable[str], *, everything: bool = False) -> None:
        """Re-read what the cards at ``paths`` (changed, added or removed) say; with
        ``everything``, what every card of ``graph`` says."""
        changed = set(self._said) | set(graph.cards) if everything else set(paths)
        dirty: set[str] = set()
        for src in changed:
            for target in self._said.pop(src, {}):
                self._by_target[target].discard(src)
                dirty.add(target)
            said = said_by(graph, src)
            if said:
                self._said[src] = said
            for target in said:
                self._by_target.setdefault(target, set()).add(src)
                dirty.add(target)
        for target in dirty:
            self._reindex(target)

    def _reindex(self, target: str) -> None:
        old = self._docs.pop(target, Counter())
        for t in old:
            del self._postings[t][target]
            if not self._postings[t]:
                del self._postings[t]
        self._length -= self._lengths.pop(target, 0)
        if not self._by_target.get(target):
            self._by_target.pop(target, None)
            return
        doc = Counter(terms(self.text(target)))
        self._docs[target] = doc
        self._lengths[target] = sum(doc.values())
        self._length += self._lengths[target]
        for t, n in doc.items():
            self._postings.setdefault(t, {})[target] = n

    def search(self, query: str, n: int) -> list[tuple[str, float]]:
        """The ``n`` cards whose anchor text best matches ``query``, best first, with their
        BM25 scores (only cards matching some word)."""
        if not self._docs:
            return []
        count, avg = len(self._docs), max(self._length / len(self._docs), 1.0)
        scores: dict[str, float] = {}
        for t in dict.fromkeys(terms(query)):
            posting = self._postings.get(t, {})
            idf = math.log(1 + (count - len(posting) + 0.5) / (len(posting) + 0.5))
            for target, tf in posting.items():
                norm = K1 * (1 - B + B * self._lengths[target] / avg)
                scores[target] = scores.get(target, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:n]
