"""LLM rerank: the model rates the top candidates, combined with the fused order by RRF.

The model sees up to ``MAX_CANDIDATES`` cards (title and an excerpt of the best chunk) and rates
each 0-3 in JSON. Its ratings become a ranking (equal ratings share a rank: the rank is 1 + the
number of candidates rated higher; unrated candidates come after all rated ones), which is fused
with the fused order of the legs:

    score(c) = 1 / (k + rank_fused(c)) + LLM_WEIGHT / (k + rank_llm(c))     (k = options.rrf_k)

for the rated candidates, and ``1 / (k + rank_fused(c))`` for the rest (so they stay below).
The graph rerank runs AFTER this, on these scores: a list or hub card that the model rates
highly because it names the topic's title is still discounted for matching only through its
links (the known failure of LLM rerankers on linked notes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from zettel_lsp.llm.client import Cancel, Ollama
from zettel_lsp.llm.errors import LLMError
from zettel_lsp.llm.jsonout import loads_lenient
from zettel_lsp.llm.prompts import RERANK_NOTE, RERANK_SYSTEM, RERANK_USER
from zettel_lsp.search.fusion import RRF_K, CardResult
from zettel_lsp.search.results import excerpt

MAX_CANDIDATES = 20
EXCERPT_CHARS = 300
MAX_RATING = 3.0
LLM_WEIGHT = 1.0
_ID_KEYS = ("id", "note", "index", "n")
_RATING_KEYS = ("rating", "score", "relevance", "grade")


def _body(text: str, title: str) -> str:
    """The chunk without a first heading that repeats the title (the prompt shows the title)."""
    first, _, rest = text.partition("\n")
    if first.lstrip().startswith("#") and first.lstrip("# \t").strip() == title.strip():
        return rest
    return text


def _number(value: Any) -> float | None:
    """A rating as the model wrote it (3, 2.5, " 3 "), clamped to 0-3; None when it is none."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        x = float(value)  # strips whitespace around a string itself
    except ValueError:
        return None
    return min(max(x, 0.0), MAX_RATING) if math.isfinite(x) else None


def _identifier(value: Any) -> int | None:
    """A note number as the model wrote it: 3, 3.0, "3", "[3]"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        digits = value.strip().strip("[]#").strip()
        return int(digits) if digits.isdigit() else None
    return None


def _pick(d: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in d:
            return d[key]
    return None


def parse_ratings(answer: str, n: int) -> dict[int, float]:
    """Ratings (clamped to 0-3) by 0-based candidate index, from any of
    ``{"ratings": [{"id": 1, "rating": 3}, ...]}``, ``{"ratings": [3, 0, ...]}``,
    ``{"1": 3, "2": 0}`` or ``[3, 0, ...]``. Raises LLMError unless at least half of the ``n``
    candidates got a usable rating."""
    data = loads_lenient(answer)
    if isinstance(data, dict) and not any(k.strip().isdigit() for k in data):
        inner = _pick(data, ("ratings", "scores", "results", "notes"))
        data = inner if inner is not None else data
    ratings: dict[int, float] = {}
    if isinstance(data, list):
        for pos, item in enumerate(data):
            if isinstance(item, dict):
                ident = _identifier(_pick(item, _ID_KEYS))
                index = ident - 1 if ident is not None else pos
                value = _number(_pick(item, _RATING_KEYS))
            else:
                index, value = pos, _number(item)
            if value is not None and 0 <= index < n:
                ratings.setdefault(index, value)
    elif isinstance(data, dict):
        for key, item in data.items():
            if key.strip().isdigit() and (value := _number(item)) is not None:
                index = int(key) - 1
                if 0 <= index < n:
                    ratings.setdefault(index, value)
    if n and len(ratings) * 2 < n:
        raise LLMError(f"the model's ratings were malformed ({len(ratings)} of {n} usable)")
    return ratings


def combine(results: Sequence[CardResult], ratings: dict[int, float], k: int) -> list[CardResult]:
    """New results (copies) ordered by the RRF of fused order and rating order (module doc).
    Each rated card records ``notes["llm_rating"]`` and ``legs["llm"]`` (its rating rank)."""
    out: list[CardResult] = []
    for i, r in enumerate(results):
        c = CardResult(r.path, 1.0 / (k + i + 1), r.chunk, dict(r.legs), dict(r.notes))
        if i in ratings:
            rank = 1 + sum(1 for v in ratings.values() if v > ratings[i])
            c.score += LLM_WEIGHT / (k + rank)
            c.legs["llm"] = rank
            c.notes["llm_rating"] = ratings[i]
        out.append(c)
    order = {r.path: i for i, r in enumerate(results)}
    out.sort(key=lambda c: (-c.score, order[c.path]))
    return out


def llm_rerank(
    llm: Ollama,
    query: str,
    results: Sequence[CardResult],
    words: Sequence[str],
    *,
    k: int = RRF_K,
    cancel: Cancel | None = None,
) -> list[CardResult]:
    """The model rates the top ``MAX_CANDIDATES`` 0-3, combined with the fused order (see
    module doc). Raises LLMError."""
    if not results:
        return []
    top = results[:MAX_CANDIDATES]
    notes = "\n".join(
        RERANK_NOTE.format(
            id=i,
            title=r.title,
            excerpt=excerpt(_body(str(r.chunk.get("text", "")), r.title), words, EXCERPT_CHARS),
        )
        for i, r in enumerate(top, start=1)
    )
    answer = llm.chat(
        [
            {"role": "system", "content": RERANK_SYSTEM},
            {"role": "user", "content": RERANK_USER.format(query=query, notes=notes)},
        ],
        cancel,
        format="json",
        options={"temperature": 0.0},
    )
    return combine(results, parse_ratings(answer, len(top)), k)
