"""Results as plain data: the JSON the CLI prints and the editor commands return."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.title_rule import same_name
from zettel_lsp.search.fusion import CardResult

EXCERPT_CHARS = 200


def _without_heading_marks(text: str) -> str:
    """Each heading line as its text (the project's one heading rule: notes/masking.py)."""
    return "\n".join(h[1] if (h := atx_heading(line)) else line for line in text.split("\n"))


def excerpt(text: str, words: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """At most ``width`` characters of ``text``, centred on the first query word it contains."""
    flat = " ".join(_without_heading_marks(text).split())
    if len(flat) <= width:
        return flat
    low = flat.lower()
    hits = [i for w in words if len(w) > 2 and (i := low.find(w)) >= 0]
    at = min(hits) if hits else 0
    start = max(0, min(at - width // 3, len(flat) - width))
    piece = flat[start : start + width]
    if start > 0:
        piece = "…" + piece[1:]
    if start + width < len(flat):
        piece = piece[:-1] + "…"
    return piece


def _without_title_heading(text: str, title: str) -> str:
    """Drop a first line that is a heading repeating the title (the excerpt shows the title), up
    to case ("# Lattice From Basis" in ``Lattice from Basis.md``)."""
    first, _, rest = text.partition("\n")
    heading = atx_heading(first)
    if heading is not None and same_name(heading[1], title):
        return rest
    return text


def result_dict(r: CardResult, words: Sequence[str]) -> dict[str, Any]:
    c = r.chunk
    out: dict[str, Any] = {
        "path": r.path,
        "title": r.title,
        "score": round(r.score, 6),
        "line_start": int(c.get("line_start", 0)),
        "line_end": int(c.get("line_end", 0)),
        "heading": c.get("heading", ""),
        "excerpt": excerpt(_without_title_heading(str(c.get("text", "")), r.title), words),
        "legs": dict(r.legs),
    }
    if r.notes:
        out["graph"] = dict(r.notes)
    return out
