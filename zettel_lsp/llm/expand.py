"""Query expansion: the model rewrites a query, or splits one that asks about several things.

"integrated circuits and iPhones" -> ["integrated circuits", "iPhones"]. The model is asked for
``{"queries": [...]}`` with Ollama's JSON mode; the answer is read leniently (see
:func:`parse_queries`). At most ``MAX_SUBQUERIES`` sub-queries; the original query always runs
too (see :mod:`zettel_lsp.llm.search`).
"""

from __future__ import annotations

from typing import Any

from zettel_lsp.llm.client import Cancel, Ollama
from zettel_lsp.llm.errors import LLMError
from zettel_lsp.llm.jsonout import loads_lenient
from zettel_lsp.llm.prompts import EXPAND_SYSTEM, EXPAND_USER
from zettel_lsp.search.query import MAX_QUERY_CHARS, normalise_text

MAX_SUBQUERIES = 4
_LIST_KEYS = ("queries", "sub_queries", "subqueries", "rewrites", "rewritten", "query")


def expand_query(llm: Ollama, text: str, cancel: Cancel | None = None) -> list[str]:
    """Sub-queries for ``text`` (never ``text`` itself; may be empty). Raises LLMError."""
    answer = llm.chat(
        [
            {"role": "system", "content": EXPAND_SYSTEM},
            {"role": "user", "content": EXPAND_USER.format(query=text)},
        ],
        cancel,
        format="json",
        options={"temperature": 0.0},
    )
    return parse_queries(answer, text)


def parse_queries(answer: str, original: str) -> list[str]:
    """Queries from the model's answer: ``{"queries": [...]}``, a bare list, another key
    holding a list of strings, or a single string. Deduplicated (case-insensitive), the
    original dropped, each capped at MAX_QUERY_CHARS. Raises LLMError when there is no JSON."""
    data = loads_lenient(answer)
    if data is None:
        raise LLMError("the model did not answer in JSON")
    if isinstance(data, dict):  # the first known key, else the first list
        known = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list | str)), None)
        lists = (v for v in data.values() if isinstance(v, list))
        data = known if known is not None else next(lists, [])
    found: list[Any] = [data] if isinstance(data, str) else data if isinstance(data, list) else []
    seen = {normalise_text(original).casefold()}
    out: list[str] = []
    for item in found:
        if isinstance(item, dict):  # [{"query": "..."}]
            item = item.get("query") or item.get("text")
        if not isinstance(item, str):
            continue
        q = normalise_text(item)[:MAX_QUERY_CHARS]
        if q and q.casefold() not in seen:
            seen.add(q.casefold())
            out.append(q)
        if len(out) >= MAX_SUBQUERIES:
            break
    if not out and not found:
        raise LLMError("the model's JSON held no queries")
    return out
