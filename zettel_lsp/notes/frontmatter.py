"""YAML frontmatter: find the block, parse it safely, read the fields cards use."""

from __future__ import annotations

import datetime as _dt
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # the C loader is ~10x faster on 13k cards; fall back to pure Python where it is missing
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

# Parsed front matter is bounded (pickling and JSON recurse): deeper values are kept as text.
MAX_DEPTH = 16
MAX_NODES = 10_000

_OPEN = re.compile(r"---[ \t]*\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


@dataclass(slots=True)
class Frontmatter:
    data: dict[str, Any] = field(default_factory=dict)
    end: int = 0  # offset just after the closing line (0 when there is no frontmatter)
    end_line: int = 0  # first line after the block
    problem: str | None = None


def split_frontmatter(text: str) -> Frontmatter:
    """Find a leading ``---`` ... ``---`` block and parse it.

    Broken YAML keeps the block masked (it is still not prose) and reports a problem; a block
    without a closing line is not frontmatter at all, as in Obsidian.
    """
    opening = _OPEN.match(text)
    close = None if opening is None else _CLOSE.search(text, opening.end())
    if opening is None or close is None:
        return Frontmatter()
    end = close.end()
    if end < len(text) and text[end] == "\n":
        end += 1
    end_line = text.count("\n", 0, end) + (0 if text.endswith("\n", 0, end) else 1)
    raw = text[opening.end() : close.start()]
    try:
        loaded = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return Frontmatter({}, end, end_line, f"invalid YAML frontmatter{where}; fields ignored")
    except Exception as exc:  # noqa: BLE001 - YAML can raise odd errors (e.g. recursion) on junk
        return Frontmatter({}, end, end_line, f"invalid YAML frontmatter ({type(exc).__name__})")
    if loaded is None:
        return Frontmatter({}, end, end_line)
    if not isinstance(loaded, dict):
        return Frontmatter({}, end, end_line, "frontmatter is not a mapping; fields ignored")
    # keys interned: "tags" and "aliases" were 100k separate strings at 100k cards
    data = {sys.intern(str(k)): v for k, v in loaded.items()}
    if not _within_limits(data):
        return Frontmatter(
            _bounded(data),
            end,
            end_line,
            f"frontmatter nested deeper than {MAX_DEPTH} levels or larger than {MAX_NODES:,} "
            "values; the deeper parts are kept as plain text",
        )
    return Frontmatter(data, end, end_line)


def _within_limits(data: dict[str, Any]) -> bool:
    """True when no value is nested deeper than :data:`MAX_DEPTH` and the whole holds at most
    :data:`MAX_NODES` values (YAML aliases can make a tiny block expand enormously, or loop)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            return False
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list | tuple | set):
            stack.extend((v, depth + 1) for v in value)
    return True


def _bounded(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` where containers below :data:`MAX_DEPTH` become their scalar text
    (space-separated), within a budget of :data:`MAX_NODES` values in all."""
    budget = [MAX_NODES]

    def copy(value: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if not isinstance(value, dict | list | tuple | set):
            return value
        if depth >= MAX_DEPTH:
            return _flat_text(value, budget)
        if isinstance(value, dict):
            return {str(k): copy(v, depth + 1) for k, v in value.items()}
        return [copy(v, depth + 1) for v in value]

    return {k: copy(v, 1) for k, v in data.items()}


def _flat_text(value: Any, budget: list[int]) -> str:
    """The scalars inside ``value`` (depth-first, iteratively; shared or cyclic parts once)."""
    out: list[str] = []
    seen: set[int] = set()
    stack: list[Any] = [value]
    while stack and budget[0] > 0:
        item = stack.pop()
        budget[0] -= 1
        if isinstance(item, dict | list | tuple | set):
            if id(item) in seen:
                continue
            seen.add(id(item))  # the containers stay alive (in ``value``): ids do not recur
            if isinstance(item, dict):
                children = [x for kv in item.items() for x in kv]
            else:
                children = list(item)
            stack.extend(reversed(children))
        elif item is not None:
            out.append(str(item))
    return " ".join(out)


def scalar_text(value: Any) -> str | None:
    """A frontmatter scalar as text (numbers and dates too), or None for lists/maps/empty."""
    if value is None or isinstance(value, dict | list | bool):
        return None
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    text = str(value).strip()
    return text or None


def string_list(value: Any, *, split: bool = False) -> list[str]:
    """A list-or-string field as a list of non-empty strings.

    ``split`` also splits string values on commas and whitespace (Obsidian's tag field rules).
    """
    items = list(value) if isinstance(value, list | tuple) else [value]
    texts = [text for text in map(scalar_text, items) if text is not None]
    if not split:
        return texts
    return [part for text in texts for part in re.split(r"[,\s]+", text) if part]
