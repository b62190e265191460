"""Server settings: from ``initializationOptions`` and ``workspace/didChangeConfiguration``.

Keys are camelCase, as editors write them; both a bare object and one nested under ``"zettel"``
are accepted. A value of the wrong type or out of range is reported (the server shows the list
in ``window/showMessage``) and that key falls back to its default; unknown keys are reported too,
so a typo does not silently do nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from zettel_lsp.editor_settings import settings_object
from zettel_lsp.index.embedder import DEFAULT_MODEL
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.llm.settings import LLM_KEYS, LLMSettings
from zettel_lsp.llm.settings import parse as parse_llm
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.title_rule import TITLE_SOURCES, TitleSource
from zettel_lsp.search.engine import ALL_LEGS


@dataclass(frozen=True, slots=True)
class ServerSettings:
    # index (a change restarts the vaults' indexing)
    model: str = DEFAULT_MODEL
    threads: int | None = None
    ignore: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_BYTES
    cache_dir: str | None = None  # where models and (by default) index folders live
    index_dir: str | None = None  # one vault only: use exactly this index folder
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    watch: bool = True
    debounce_ms: int = 500
    title_source: TitleSource = TitleSource.AUTO  # which name is a card's title
    follow_external_symlinks: bool = False  # index symlinks whose target is outside the vault
    # answers (take effect at once)
    legs: tuple[str, ...] = ALL_LEGS
    graph: bool = True
    graph_strength: float = 1.0  # the graph rerank's strength (0 = off, 1 = as evaluated)
    symbol_limit: int = 20
    hover_limit: int = 5
    related_limit: int = 5
    related_heading: str = "## Related"
    # optional Ollama features (docs/llm.md); their keys are parsed by zettel_lsp.llm.settings
    llm: LLMSettings = field(default_factory=LLMSettings)

    def index_settings(self) -> IndexSettings:
        return IndexSettings(
            model=self.model,
            threads=self.threads,
            max_file_bytes=self.max_file_bytes,
            ignore_globs=self.ignore,
            qdrant_url=self.qdrant_url,
            qdrant_api_key=self.qdrant_api_key,
            title_source=self.title_source,
            follow_external_symlinks=self.follow_external_symlinks,
        )

    def index_key(self) -> tuple[object, ...]:
        """What the running vaults depend on: a change here means re-opening them."""
        ollama = (self.llm.base_url, self.llm.timeout) if self.model.startswith("ollama:") else None
        return (
            self.index_settings(),
            ollama,
            self.cache_dir,
            self.index_dir,
            self.watch,
            self.debounce_ms,
        )

    @property
    def cache_path(self) -> Path | None:
        return Path(self.cache_dir).expanduser() if self.cache_dir else None

    @property
    def index_path(self) -> Path | None:
        return Path(self.index_dir).expanduser() if self.index_dir else None


# camelCase key -> (field, expected type description)
_KEYS: dict[str, str] = {
    "model": "model",
    "threads": "threads",
    "ignore": "ignore",
    "maxFileBytes": "max_file_bytes",
    "cacheDir": "cache_dir",
    "indexDir": "index_dir",
    "qdrantUrl": "qdrant_url",
    "qdrantApiKey": "qdrant_api_key",
    "watch": "watch",
    "debounceMs": "debounce_ms",
    "titleSource": "title_source",
    "followExternalSymlinks": "follow_external_symlinks",
    "legs": "legs",
    "graph": "graph",
    "graphStrength": "graph_strength",
    "symbolLimit": "symbol_limit",
    "hoverLimit": "hover_limit",
    "relatedLimit": "related_limit",
    "relatedHeading": "related_heading",
}
_FIELDS = {f.name for f in fields(ServerSettings)} - {"llm"}
assert set(_KEYS.values()) == _FIELDS


def parse_settings(
    raw: object, base: ServerSettings | None = None
) -> tuple[ServerSettings, list[str]]:
    """Settings from an editor's JSON, plus one message per rejected key."""
    settings = base or ServerSettings()
    obj = settings_object(raw)
    if isinstance(obj, str):
        return settings, [obj]
    raw = obj
    llm, problems = parse_llm(raw, settings.llm)
    changes: dict[str, Any] = {"llm": llm}
    for key, value in raw.items():
        if key in LLM_KEYS:
            continue
        name = _KEYS.get(key)
        if name is None:
            known = ", ".join(sorted([*_KEYS, *LLM_KEYS]))
            problems.append(f"unknown setting {key!r} (known: {known})")
            continue
        ok, converted, why = _convert(name, value)
        if ok:
            changes[name] = converted
        else:
            problems.append(f"setting {key!r}: {why}; using the default")
            changes[name] = getattr(ServerSettings(), name)
    return replace(settings, **changes), problems


def _convert(name: str, value: Any) -> tuple[bool, Any, str]:
    default = getattr(ServerSettings(), name)
    if name in ("threads",):
        if value is None:
            return True, None, ""
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return True, value, ""
        return False, None, f"expected a positive integer or null, got {value!r}"
    if name in ("max_file_bytes", "debounce_ms", "symbol_limit", "hover_limit", "related_limit"):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return True, value, ""
        return False, None, f"expected a positive integer, got {value!r}"
    if name == "graph_strength":
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 5:
            return True, float(value), ""
        return False, None, f"expected a number from 0 to 5, got {value!r}"
    if name in ("watch", "graph", "follow_external_symlinks"):
        if isinstance(value, bool):
            return True, value, ""
        return False, None, f"expected true or false, got {value!r}"
    if name == "ignore":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return True, tuple(value), ""
        return False, None, f"expected a list of glob strings, got {value!r}"
    if name == "legs":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, str) and v in ALL_LEGS for v in value)
        ):
            return True, tuple(value), ""
        return False, None, f"expected a non-empty list of {', '.join(ALL_LEGS)}, got {value!r}"
    if name == "title_source":
        if isinstance(value, str) and value.strip().lower() in TITLE_SOURCES:
            return True, TitleSource(value.strip().lower()), ""
        return False, None, f"expected one of {', '.join(TITLE_SOURCES)}, got {value!r}"
    if name == "related_heading":
        if isinstance(value, str) and value.strip().startswith("#"):
            return True, value.strip(), ""
        return False, None, f"expected a Markdown heading such as '## Related', got {value!r}"
    # optional strings
    if value is None or (isinstance(value, str) and value.strip() == "" and default is None):
        return True, default, ""
    if isinstance(value, str) and value.strip():
        return True, value.strip(), ""
    return False, None, f"expected a string, got {value!r}"
