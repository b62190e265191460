"""Fusion of the legs into one card ranking (:func:`fuse`). Pure functions. Two fusions:

- reciprocal rank fusion::

    score(card) = Σ_legs  w_leg / (k + rank_leg(card)),   rank from 1, k = 60 by default

- a convex combination of normalised scores (``norm``; Bruch et al., "An Analysis of Fusion
  Functions for Hybrid Retrieval", 2023)::

    score(card) = Σ_legs  w_leg · normalised score_leg(card)     (0 when absent)

  for legs whose hits carry scores (cosine, BM25); a leg without scores (titles) contributes
  ``w_leg / rank_leg(card)``. Unlike RRF it keeps *how much* better the first hit of a leg is.
  Two normalisations (:func:`normalised`): ``top`` divides by the leg's top score (fusion
  ``convex``), ``dbsf`` maps the leg's mean ± 3 standard deviations to 0..1 (fusion ``dbsf``),
  so a leg's first hit counts by how far it stands above the leg's other hits, not only by
  being first.

A leg returns chunks; a card's rank in a leg is the position of its best chunk among the distinct
cards of that leg (so several chunks of one card never push other cards down). Qdrant's built-in
``Fusion.Rrf(k)`` counts positions from 0: ``Rrf(k=61)`` equals this formula with k = 60.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from zettel_lsp.index.store_api import ChunkPayload

RRF_K = 60


@dataclass(slots=True)
class LegHit:
    """One chunk a leg returned, in that leg's order."""

    path: str
    chunk: ChunkPayload
    score: float = 0.0


@dataclass(slots=True)
class CardResult:
    path: str
    score: float
    chunk: ChunkPayload  # the card's best chunk (its range and excerpt)
    legs: dict[str, int] = field(default_factory=dict)  # leg -> rank of the card in it (from 1)
    notes: dict[str, float] = field(default_factory=dict)  # rerank bookkeeping

    @property
    def title(self) -> str:
        return str(self.chunk.get("title", self.path))


def card_ranking(hits: Sequence[LegHit]) -> list[LegHit]:
    """Distinct cards in leg order, each represented by its first (best) chunk."""
    first: dict[str, LegHit] = {}
    for h in hits:
        first.setdefault(h.path, h)
    return list(first.values())


def rrf_scores(
    rankings: Mapping[str, Sequence[str]],
    k: float = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Classic RRF over already-deduplicated rankings of keys."""
    scores: dict[str, float] = {}
    for leg, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(leg, 1.0)
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return scores


def fuse(
    legs: Mapping[str, Sequence[LegHit]],
    *,
    k: float = RRF_K,
    weights: Mapping[str, float] | None = None,
    norm: str | None = None,
    scale: Mapping[str, str] | None = None,
) -> list[CardResult]:
    """Fuse chunk hits of several legs into a card list, best first: by RRF, or with ``norm``
    by :func:`convex_scores` (``scale``: see there).

    Each card keeps the chunk that ranked best in any leg (ties: the leg listed first). Equal
    scores are ordered by best single rank, then path, so results are deterministic.
    """
    per_leg = {leg: card_ranking(hits) for leg, hits in legs.items()}
    if norm is None:
        ranked = {leg: [h.path for h in hs] for leg, hs in per_leg.items()}
        scores = rrf_scores(ranked, k, weights)
    else:
        scores = convex_scores(per_leg, weights, norm, scale)
    best: dict[str, tuple[int, LegHit]] = {}
    ranks: dict[str, dict[str, int]] = {}
    for leg, hits in per_leg.items():
        for rank, h in enumerate(hits, start=1):
            ranks.setdefault(h.path, {})[leg] = rank
            if h.path not in best or rank < best[h.path][0]:
                best[h.path] = (rank, h)
    results = [
        CardResult(path, score, best[path][1].chunk, ranks[path]) for path, score in scores.items()
    ]
    results.sort(key=lambda r: (-r.score, min(r.legs.values()), r.path))
    return results


NORMS = ("top", "dbsf")


def normalised(
    scores: Sequence[float], norm: str = "top", reference: Sequence[float] = ()
) -> list[float]:
    """One leg's scores (best first) on a common scale, taken from the scores themselves or,
    when given, from ``reference`` (another leg's scores, whose scale these are read on):

    - ``top``: divided by the leg's top score (negative scores count as 0);
    - ``dbsf``: distribution-based score fusion (after Qdrant's ``Fusion.DBSF``): the leg's mean
      ± 3 standard deviations mapped to 0..1, *not clipped* above, so a first hit far above the
      rest (a BM25 hit on words that stand together in one card only) keeps its lead, while a
      leg whose hits all score alike (a dense leg on a bag of words) does not outvote it; a hit
      below mean - 3 sd counts 0, as a card the leg did not return does. A list without spread
      (one hit, or equal scores) scores 1, the top of the range, for every hit.
    """
    ref = reference or scores
    if norm == "top":
        top = max(ref, default=0.0)
        return [max(s, 0.0) / top if top > 0 else 0.0 for s in scores]
    if norm != "dbsf":
        raise ValueError(f"unknown normalisation {norm!r}; choose from {', '.join(NORMS)}")
    n = len(ref)
    if not scores:
        return []
    mean = sum(ref) / n
    sd = (sum((s - mean) ** 2 for s in ref) / n) ** 0.5
    if sd <= 1e-9 * max(1.0, abs(mean)):
        return [1.0] * len(scores)
    low, span = mean - 3 * sd, 6 * sd
    return [max(s - low, 0.0) / span for s in scores]


def convex_scores(
    legs: Mapping[str, Sequence[LegHit]],
    weights: Mapping[str, float] | None = None,
    norm: str = "top",
    scale: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Σ_legs w · normalised score over already-deduplicated card rankings (see the module and
    :func:`normalised`); a leg without scores (all 0: titles) counts ``1 / rank``. A leg named
    in ``scale`` is normalised on the scale of the leg it maps to (when that leg has hits):
    the multilingual leg over a few non-English cards, read on the English dense leg's scale,
    so that its best hit counts by how it compares with the vault's, not only with those few."""
    scores: dict[str, float] = {}
    for leg, hits in legs.items():
        w = 1.0 if weights is None else weights.get(leg, 1.0)
        ref = legs.get((scale or {}).get(leg, ""), ())
        if max((h.score for h in hits), default=0.0) > 0:
            norms = normalised([h.score for h in hits], norm, [h.score for h in ref])
        else:
            norms = [1.0 / rank for rank in range(1, len(hits) + 1)]
        for h, x in zip(hits, norms, strict=True):
            scores[h.path] = scores.get(h.path, 0.0) + w * x
    return scores
