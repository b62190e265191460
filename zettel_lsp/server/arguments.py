"""Arguments of ``workspace/executeCommand`` commands: one object ``{name: value}`` or
positional values, checked at the edge (a wrong type is the client's mistake: -32602)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

MAX_LIMIT = 200


def arg(args: tuple[Any, ...], name: str, index: int, default: Any = None) -> Any:
    """Command arguments come as one object ``{name: value}`` or positionally."""
    if args and isinstance(args[0], dict):
        return args[0].get(name, default)
    return args[index] if len(args) > index else default


def position_arg(raw: Any) -> types.Position | None:
    """A command's ``position`` argument ({line, character}, unsigned 32-bit integers); None
    when absent. Anything else is the client's mistake: -32602, not an exception in a thread."""
    if raw is None:
        return None
    if isinstance(raw, dict) and "line" in raw:
        line, character = raw["line"], raw.get("character", 0)
        if all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31
            for v in (line, character)
        ):
            return types.Position(line=line, character=character)
    raise JsonRpcInvalidParams(
        f"position must be {{line, character}} with integers in [0, 2**31), got {raw!r:.200}"
    )


def limit_arg(value: Any, default: int) -> int:
    """A positive ``limit`` (at most :data:`MAX_LIMIT`), else ``default``."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return min(value, MAX_LIMIT)
    return default
