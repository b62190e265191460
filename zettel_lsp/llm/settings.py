"""LLM settings: one frozen dataclass, parsed from the editor's camelCase keys.

The keys, defaults and checks are the ``LLM`` table of :mod:`zettel_lsp.settings_schema`.
``parse`` reads only the keys in :data:`LLM_KEYS` (flat, or under ``"zettel"`` /
``"zettel-lsp"`` as the server's settings are) and ignores the others, so the server can hand it
the same object it gives ``parse_settings`` (which must then skip :data:`LLM_KEYS` in its own
unknown-key check). A bad value is reported and that key keeps its default (or the ``base``'s
value when it is missing).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from zettel_lsp.settings_schema import DEFAULT_CHAT_MODEL, DEFAULT_EMBED_MODEL, LLM, settings_object

__all__ = ["DEFAULT_CHAT_MODEL", "DEFAULT_EMBED_MODEL", "LLM_KEYS", "LLMSettings", "parse"]

_DEFAULTS = LLM.defaults()


@dataclass(frozen=True, slots=True)
class LLMSettings:
    # defaults: the LLM table in zettel_lsp/settings_schema.py
    host: str | None = _DEFAULTS["host"]  # None: see resolve_ollama_host (OLLAMA_HOST if local)
    chat_model: str = _DEFAULTS["chat_model"]
    embed_model: str = _DEFAULTS["embed_model"]  # what Ollama.embed uses; the index: "model"
    timeout: float = _DEFAULTS["timeout"]  # seconds without a byte from Ollama, per call
    connect_timeout: float = _DEFAULTS["connect_timeout"]
    temperature: float = _DEFAULTS["temperature"]
    max_context_chunks: int = _DEFAULTS["max_context_chunks"]  # chunks an answer is built from
    context_window: int = _DEFAULTS["context_window"]  # num_ctx sent to Ollama
    expand_query: bool = _DEFAULTS["expand_query"]
    llm_rerank: bool = _DEFAULTS["llm_rerank"]


LLM.check_fields({f.name for f in fields(LLMSettings)})

LLM_KEYS: dict[str, str] = LLM.fields()
"""camelCase key -> field."""


def parse(raw: object, base: LLMSettings | None = None) -> tuple[LLMSettings, list[str]]:
    """Settings from an editor's JSON, plus one message per rejected key."""
    settings = base or LLMSettings()
    obj = settings_object(raw)
    if isinstance(obj, str):
        return settings, [obj]
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for setting in LLM:
        if setting.key not in obj:
            continue
        value, problem = setting.parse(obj[setting.key])
        changes[setting.field] = value
        if problem:
            problems.append(problem)
    return replace(settings, **changes), problems
