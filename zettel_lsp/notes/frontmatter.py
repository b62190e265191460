"""YAML frontmatter: find the block, parse it safely, read the fields cards use."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # the C loader is ~10x faster on 13k cards; fall back to pure Python where it is missing
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

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
    if not _OPEN.match(text):
        return Frontmatter()
    opening = _OPEN.match(text)
    assert opening is not None
    close = _CLOSE.search(text, opening.end())
    if close is None:
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
    data = {str(k): v for k, v in loaded.items()}
    return Frontmatter(data, end, end_line)


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
    items: list[Any]
    if value is None:
        return []
    items = list(value) if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        text = scalar_text(item)
        if text is None:
            continue
        if split:
            out.extend(part for part in re.split(r"[,\s]+", text) if part)
        else:
            out.append(text)
    return out
