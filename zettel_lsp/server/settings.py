"""Server settings: from ``initializationOptions`` and ``workspace/didChangeConfiguration``.

Keys are camelCase, as editors write them; both a bare object and one nested under ``"zettel"``
are accepted. A value of the wrong type or out of range is reported (the server shows the list
in ``window/showMessage``) and that key falls back to its default; unknown keys are reported too,
so a typo does not silently do nothing. The keys, defaults, checks and messages are the ``CORE``
table of :mod:`zettel_lsp.settings_schema` (the Ollama keys its ``LLM`` table).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from zettel_lsp.index.embedders import OLLAMA_PREFIX
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.llm.settings import LLM_KEYS, LLMSettings
from zettel_lsp.llm.settings import parse as parse_llm
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.ollama_client import OllamaSettings
from zettel_lsp.settings_schema import ALL, CORE, settings_object

_DEFAULTS = CORE.defaults()


@dataclass(frozen=True, slots=True)
class ServerSettings:
    # defaults, checks and docs: the CORE table in zettel_lsp/settings_schema.py
    # index (a change restarts the vaults' indexing)
    model: str = _DEFAULTS["model"]
    threads: int | None = _DEFAULTS["threads"]
    ignore: tuple[str, ...] = _DEFAULTS["ignore"]
    max_file_bytes: int = _DEFAULTS["max_file_bytes"]
    cache_dir: str | None = _DEFAULTS["cache_dir"]  # where models and (by default) indexes live
    index_dir: str | None = _DEFAULTS["index_dir"]  # one vault only: exactly this index folder
    qdrant_url: str | None = _DEFAULTS["qdrant_url"]
    qdrant_api_key: str | None = _DEFAULTS["qdrant_api_key"]
    watch: bool = _DEFAULTS["watch"]
    debounce_ms: int = _DEFAULTS["debounce_ms"]
    title_source: TitleSource = _DEFAULTS["title_source"]  # which name is a card's title
    follow_external_symlinks: bool = _DEFAULTS["follow_external_symlinks"]
    multilingual: str = _DEFAULTS["multilingual"]  # auto, on, off (issue #17)
    # answers (take effect at once)
    legs: tuple[str, ...] = _DEFAULTS["legs"]
    graph: bool = _DEFAULTS["graph"]
    graph_strength: float = _DEFAULTS["graph_strength"]  # graph rerank (0 = off, 1 = evaluated)
    symbol_limit: int = _DEFAULTS["symbol_limit"]
    hover_limit: int = _DEFAULTS["hover_limit"]
    related_limit: int = _DEFAULTS["related_limit"]
    suggest_self_tune: bool = _DEFAULTS["suggest_self_tune"]  # issue #15: search/calibrate.py
    related_heading: str = _DEFAULTS["related_heading"]
    # diagnostics (issue #16): a severity or "off" per kind; where "Create card" puts cards
    diagnostics_unresolved: str = _DEFAULTS["diagnostics_unresolved"]
    diagnostics_ambiguous: str = _DEFAULTS["diagnostics_ambiguous"]
    diagnostics_missing_anchor: str = _DEFAULTS["diagnostics_missing_anchor"]
    diagnostics_duplicate_title: str = _DEFAULTS["diagnostics_duplicate_title"]
    new_note_folder: str | None = _DEFAULTS["new_note_folder"]
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
            multilingual=self.multilingual,
            # only an 'ollama:' model talks to Ollama: other vaults do not re-open when the
            # Ollama settings change
            ollama=(
                OllamaSettings(self.llm.host, self.llm.connect_timeout, self.llm.timeout)
                if self.model.startswith(OLLAMA_PREFIX)
                else OllamaSettings()
            ),
        )

    def index_key(self) -> tuple[object, ...]:
        """What the running vaults depend on (the table's ``index`` settings and the Ollama
        settings an ``ollama:`` model uses): a change here means re-opening them."""
        return (self.index_settings(), *(getattr(self, s.field) for s in CORE if s.index))

    @property
    def cache_path(self) -> Path | None:
        return Path(self.cache_dir).expanduser() if self.cache_dir else None

    @property
    def index_path(self) -> Path | None:
        return Path(self.index_dir).expanduser() if self.index_dir else None


CORE.check_fields({f.name for f in fields(ServerSettings)} - {"llm"})


def parse_settings(
    raw: object, base: ServerSettings | None = None
) -> tuple[ServerSettings, list[str]]:
    """Settings from an editor's JSON, plus one message per rejected key."""
    settings = base or ServerSettings()
    obj = settings_object(raw)
    if isinstance(obj, str):
        return settings, [obj]
    llm, problems = parse_llm(obj, settings.llm)
    changes: dict[str, Any] = {"llm": llm}
    for key, value in obj.items():
        if key in LLM_KEYS:
            continue
        setting = CORE.get(key)
        if setting is None:
            known = ", ".join(sorted(s.key for s in ALL))
            problems.append(f"unknown setting {key!r} (known: {known})")
            continue
        changes[setting.field], problem = setting.parse(value)
        if problem:
            problems.append(problem)
    return replace(settings, **changes), problems
