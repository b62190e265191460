"""LLM settings: one frozen dataclass, parsed from the editor's camelCase keys.

``parse`` reads only the keys in :data:`LLM_KEYS` (flat, or under ``"zettel"`` /
``"zettel-lsp"`` as the server's settings are) and ignores the others, so the server can hand it
the same object it gives ``parse_settings`` (which must then skip :data:`LLM_KEYS` in its own
unknown-key check). A bad value is reported and that key keeps its default (or the ``base``'s
value when it is missing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from zettel_lsp.editor_settings import settings_object
from zettel_lsp.index.embedder import resolve_ollama_host

DEFAULT_CHAT_MODEL = "llama3.2"
DEFAULT_EMBED_MODEL = "nomic-embed-text"


@dataclass(frozen=True, slots=True)
class LLMSettings:
    host: str | None = None  # None: see resolve_ollama_host (OLLAMA_HOST only if local)
    chat_model: str = DEFAULT_CHAT_MODEL
    embed_model: str = DEFAULT_EMBED_MODEL  # what Ollama.embed uses; the index uses "model"
    timeout: float = 60.0  # seconds without a byte from Ollama (read timeout), per call
    connect_timeout: float = 2.0
    temperature: float = 0.2
    max_context_chunks: int = 8  # cap on the chunks an answer is built from
    context_window: int = 8192  # cap on the model's context (num_ctx sent to Ollama)
    expand_query: bool = False
    llm_rerank: bool = False

    @property
    def base_url(self) -> str:
        """The Ollama URL these settings resolve to."""
        return resolve_ollama_host(self.host)


# camelCase key -> field
LLM_KEYS: dict[str, str] = {
    "ollamaHost": "host",
    "chatModel": "chat_model",
    "embedModel": "embed_model",
    "llmTimeout": "timeout",
    "llmConnectTimeout": "connect_timeout",
    "temperature": "temperature",
    "maxContextChunks": "max_context_chunks",
    "contextWindow": "context_window",
    "expandQuery": "expand_query",
    "llmRerank": "llm_rerank",
}


def parse(raw: object, base: LLMSettings | None = None) -> tuple[LLMSettings, list[str]]:
    """Settings from an editor's JSON, plus one message per rejected key."""
    settings = base or LLMSettings()
    obj = settings_object(raw)
    if isinstance(obj, str):
        return settings, [obj]
    raw = obj
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, name in LLM_KEYS.items():
        if key not in raw:
            continue
        ok, value, why = _convert(name, raw[key])
        if ok:
            changes[name] = value
        else:
            problems.append(f"setting {key!r}: {why}; using the default")
            changes[name] = getattr(LLMSettings(), name)
    return replace(settings, **changes), problems


def _convert(name: str, value: Any) -> tuple[bool, Any, str]:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if name == "host":
        if value is None or (isinstance(value, str) and not value.strip()):
            return True, None, ""
        if isinstance(value, str) and not any(c.isspace() for c in value.strip()):
            return True, value.strip(), ""
        return False, None, f"expected a URL such as 'http://127.0.0.1:11434', got {value!r}"
    if name in ("chat_model", "embed_model"):
        if isinstance(value, str) and value.strip():
            return True, value.strip(), ""
        return False, None, f"expected a model name such as 'llama3.2', got {value!r}"
    if name in ("timeout", "connect_timeout"):
        if is_number and 0 < value <= 3600:
            return True, float(value), ""
        return False, None, f"expected seconds (a number above 0, at most 3600), got {value!r}"
    if name == "temperature":
        if is_number and 0 <= value <= 2:
            return True, float(value), ""
        return False, None, f"expected a number from 0 to 2, got {value!r}"
    if name == "max_context_chunks":
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
            return True, value, ""
        return False, None, f"expected an integer from 1 to 100, got {value!r}"
    if name == "context_window":
        if isinstance(value, int) and not isinstance(value, bool) and 512 <= value <= 1_048_576:
            return True, value, ""
        return False, None, f"expected a token count from 512 to 1048576, got {value!r}"
    # expand_query, llm_rerank
    if isinstance(value, bool):
        return True, value, ""
    return False, None, f"expected true or false, got {value!r}"
