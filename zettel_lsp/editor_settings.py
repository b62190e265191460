"""The object an editor sends as settings, unwrapped: shared by the server's and the LLM
layer's settings parsers."""

from __future__ import annotations

from typing import Any

SECTIONS = ("zettel", "zettel-lsp")


def settings_object(raw: object) -> dict[str, Any] | str:
    """The settings as a dict (flat, or the ``"zettel"`` / ``"zettel-lsp"`` section), or a
    one-line problem. None and ``[]`` (how Lua clients encode an empty table) are empty."""
    if raw is None or raw == []:
        return {}
    if not isinstance(raw, dict):
        return f"settings must be an object, got {type(raw).__name__}"
    for section in SECTIONS:
        value = raw.get(section)
        if isinstance(value, dict):
            return value
        if value == []:
            return {}
    return raw
