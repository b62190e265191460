"""Every setting the server reads, defined once: key, field, default, check, docs, scope.

The two tables below are the only list of settings keys. Everything else is derived from them:

- ``zettel_lsp.server.settings`` (:data:`CORE`) and ``zettel_lsp.llm.settings`` (:data:`LLM`)
  parse an editor's settings through them: a bad value is reported in one line and that key
  falls back to its default;
- ``python -m zettel_lsp.settings_gen --write`` writes VS Code's ``contributes.configuration``
  (``editors/vscode/package.json``), the extension's key list
  (``editors/vscode/src/lib/settingsSchema.ts``), ``docs/settings.md`` and the key list in the
  Neovim help; ``tests/test_settings_schema.py`` fails when one of them is stale.

Adding a setting: a row here, a field in ``ServerSettings`` (or ``LLMSettings``) of the same
name, then ``python -m zettel_lsp.settings_gen --write``.

Keys are camelCase, as editors write them. Each :class:`Check` both converts a value (or raises
:class:`Invalid` with the reason) and describes the values it takes as JSON schema, so VS Code's
settings editor and the server accept the same things.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, get_args

from zettel_lsp.index.embedders import DEFAULT_MODEL
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.title_rule import TITLE_SOURCES, TitleSource
from zettel_lsp.search.engine import ALL_LEGS

SECTIONS = ("zettel", "zettel-lsp")

DEFAULT_CHAT_MODEL = "llama3.2"
DEFAULT_EMBED_MODEL = "nomic-embed-text"

# How the VS Code extension turns what the user typed into what it sends
# (editors/vscode/src/lib/settings.ts, ``serverSettings``):
#   value            as it is
#   optional-string  trimmed; empty means the server's default and is sent as null
#   path             as optional-string, with `~` and `${workspaceFolder}` expanded
#   required-string  trimmed; empty means the server's default and is sent as that default
#   count-or-null    a number above 0, truncated; anything else is null (the server's default)
#   string-list      the non-empty strings of a list
#   non-empty-list   as string-list; an empty list is left out (the server's default)
ClientKind = Literal[
    "value",
    "optional-string",
    "path",
    "required-string",
    "count-or-null",
    "string-list",
    "non-empty-list",
]
CLIENT_KINDS: tuple[ClientKind, ...] = get_args(ClientKind)


class Invalid(ValueError):
    """A value a setting does not take; the message is the reason ("expected ..., got ...")."""


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


# ------------------------------------------------------------------ checks


@dataclass(frozen=True, slots=True)
class Check:
    """Converts an editor's value for one setting (``convert(value, default)``), raising
    :class:`Invalid` when the value is not allowed; ``json`` is the same rule as JSON schema."""

    convert: Callable[[object, Any], Any]
    json: Mapping[str, Any]


def _check(
    json: Mapping[str, Any],
    expected: str,
    accept: Callable[[Any], bool],
    convert: Callable[[Any], Any] = lambda value: value,
) -> Check:
    """A check taking the values ``accept`` accepts, as ``convert`` makes them; any other value
    is refused: "expected ``expected``, got ..."."""

    def run(value: object, default: Any) -> Any:
        if accept(value):
            return convert(value)
        raise Invalid(f"expected {expected}, got {value!r}")

    return Check(run, json)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _stripped(value: object) -> str:
    """The trimmed text of a string; "" for anything else."""
    return value.strip() if isinstance(value, str) else ""


POSITIVE_INT = _check(
    {"type": "integer", "minimum": 1}, "a positive integer", lambda v: _is_int(v) and v > 0
)
POSITIVE_INT_OR_NULL = _check(
    {"type": ["integer", "null"], "minimum": 1},
    "a positive integer or null",
    lambda v: v is None or (_is_int(v) and v > 0),
)
BOOLEAN = _check({"type": "boolean"}, "true or false", lambda v: isinstance(v, bool))
GLOB_LIST = _check(
    {"type": "array", "items": {"type": "string"}},
    "a list of glob strings",
    lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    tuple,
)
HEADING = _check(
    {"type": "string", "pattern": "^\\s*#"},
    "a Markdown heading such as '## Related'",
    lambda v: _stripped(v).startswith("#"),
    str.strip,
)
HOST = _check(  # a URL without blanks; null or blank: None (the default host)
    {"type": "string"},
    "a URL such as 'http://127.0.0.1:11434'",
    lambda v: v is None or (isinstance(v, str) and not any(c.isspace() for c in v.strip())),
    lambda v: _stripped(v) or None,
)
MODEL_NAME = _check(
    {"type": "string"}, "a model name such as 'llama3.2'", lambda v: bool(_stripped(v)), str.strip
)


def int_range(low: int, high: int, what: str = "an integer") -> Check:
    return _check(
        {"type": "integer", "minimum": low, "maximum": high},
        f"{what} from {low} to {high}",
        lambda v: _is_int(v) and low <= v <= high,
    )


def number_range(low: float, high: float) -> Check:
    return _check(
        {"type": "number", "minimum": low, "maximum": high},
        f"a number from {low:g} to {high:g}",
        lambda v: _is_number(v) and low <= v <= high,
        float,
    )


def seconds(high: float) -> Check:
    return _check(
        {"type": "number", "exclusiveMinimum": 0, "maximum": high},
        f"seconds (a number above 0, at most {high:g})",
        lambda v: _is_number(v) and 0 < v <= high,
        float,
    )


def choices_list(choices: Sequence[str]) -> Check:
    """A non-empty list of some of ``choices``, or the same as one comma-separated string."""

    def convert(value: object, default: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, str) and v in choices for v in value)
        ):
            return tuple(value)
        raise Invalid(f"expected a non-empty list of {', '.join(choices)}, got {value!r}")

    return Check(
        convert,
        {
            "type": "array",
            "items": {"type": "string", "enum": list(choices)},
            "uniqueItems": True,
        },
    )


def one_of(choices: Sequence[str], make: Callable[[str], Any] = str) -> Check:
    """One of ``choices`` (case and spaces aside), as ``make`` makes it."""
    return _check(
        {"type": "string", "enum": list(choices)},
        f"one of {', '.join(choices)}",
        lambda v: _stripped(v).lower() in choices,
        lambda v: make(v.strip().lower()),
    )


def _optional_string(value: object, default: Any) -> Any:
    """A string, trimmed; null means the default, and so does an empty string when the default
    is None (an empty string is refused when there is a default, e.g. ``model``)."""
    if value is None or (isinstance(value, str) and value.strip() == "" and default is None):
        return default
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise Invalid(f"expected a string, got {value!r}")


OPTIONAL_STRING = Check(_optional_string, {"type": "string"})


SEVERITIES = ("error", "warning", "information", "hint", "off")  # a diagnostic's, or off
MULTILINGUAL = ("auto", "on", "off")


# ------------------------------------------------------------------ the table


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: what an editor sends (``key``), where it goes (``field`` of the settings
    dataclass), its default and check, and its documentation."""

    key: str  # camelCase, as editors send it
    default: Any
    check: Check
    doc: str  # what it does, for docs/settings.md (one line, Markdown)
    ui: str  # VS Code's settings editor text (markdownDescription; `#zettel.key#` links)
    field: str = ""  # the field of ServerSettings / LLMSettings; "": the key in snake_case
    index: bool = False  # a change re-opens the vaults (the server re-indexes)
    machine: bool = False  # a path, URL or secret of this machine (VS Code machine-overridable)
    cli: str = "—"  # the command line's option for it (docs/settings.md)
    default_doc: str | None = None  # the default in words (docs), when the value says too little
    client: ClientKind = "value"  # how the VS Code extension normalises it before sending
    ui_json: Mapping[str, Any] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    # more JSON schema for VS Code only (e.g. a maximum the server does not enforce)

    def __post_init__(self) -> None:
        if not self.field:
            object.__setattr__(self, "field", re.sub("(?=[A-Z])", "_", self.key).lower())

    def parse(self, value: object) -> tuple[Any, str | None]:
        """The converted value and no problem, or the default and a one-line problem."""
        try:
            return self.check.convert(value, self.default), None
        except Invalid as e:
            return self.default, f"setting {self.key!r}: {e}; using the default"


class Schema:
    """An ordered table of settings, looked up by key."""

    def __init__(self, settings: Sequence[Setting]) -> None:
        self.settings: tuple[Setting, ...] = tuple(settings)
        self.by_key: dict[str, Setting] = {s.key: s for s in self.settings}
        if len(self.by_key) != len(self.settings):
            raise ValueError("a settings key is defined twice")
        if len({s.field for s in self.settings}) != len(self.settings):
            raise ValueError("a settings field is defined twice")

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.settings)

    def __contains__(self, key: object) -> bool:
        return key in self.by_key

    def get(self, key: str) -> Setting | None:
        return self.by_key.get(key)

    def fields(self) -> dict[str, str]:
        """camelCase key -> field."""
        return {s.key: s.field for s in self.settings}

    def defaults(self) -> dict[str, Any]:
        """field -> default."""
        return {s.field: s.default for s in self.settings}

    def check_fields(self, names: set[str]) -> None:
        """Raise unless ``names`` (a dataclass's fields) are exactly this table's fields."""
        mine = {s.field for s in self.settings}
        if mine != names:
            raise ValueError(
                f"settings table and dataclass differ: only in the table {sorted(mine - names)}, "
                f"only in the dataclass {sorted(names - mine)}"
            )


_LIMIT = MappingProxyType({"maximum": 200})  # VS Code's cap; the server takes any count

# a change re-opens the vaults (the server re-indexes)
_REOPEN = [
    Setting(
        "model",
        DEFAULT_MODEL,
        OPTIONAL_STRING,
        doc="embedding model; another fastembed model by name, or `ollama:<name>` to embed "
        "with a local Ollama. Changing it re-embeds (lexical search keeps working meanwhile)",
        ui="The embedding model (a fastembed model name, or `ollama:<name>` to embed with a "
        "local Ollama, e.g. `ollama:nomic-embed-text`). A change re-indexes the vault.",
        cli="`--model`",
        default_doc=f"`{DEFAULT_MODEL}` (int8, offline)",
        client="optional-string",
    ),
    Setting(
        "threads",
        None,
        POSITIVE_INT_OR_NULL,
        doc="ONNX threads for embedding",
        ui="ONNX threads for embedding. Empty: all cores. A change re-opens the index.",
        cli="`--threads`",
        default_doc="all cores",
        client="count-or-null",
    ),
    Setting(
        "ignore",
        (),
        GLOB_LIST,
        doc="globs (vault-relative) to skip; dot-folders and `node_modules` are always skipped",
        ui="Globs of files to skip, e.g. `templates/**`. Dot-folders and `node_modules` are "
        "always skipped. A change re-indexes.",
        cli="`--ignore GLOB` (repeat)",
        default_doc="none",
        client="string-list",
    ),
    Setting(
        "maxFileBytes",
        DEFAULT_MAX_BYTES,
        POSITIVE_INT,
        doc="larger notes are skipped with a warning",
        ui="Larger notes are skipped with a warning.",
        cli="`--max-file-bytes`",
        default_doc=f"{DEFAULT_MAX_BYTES:,} ({DEFAULT_MAX_BYTES / 2**20:g} MiB)",
    ),
    Setting(
        "cacheDir",
        None,
        OPTIONAL_STRING,
        doc="where models and (by default) index folders live",
        ui="Where models and index folders live. Empty: the user cache (`~/.cache/zettel-lsp`).",
        machine=True,
        cli="`--cache-dir`",
        default_doc="the user cache (`~/.cache/zettel-lsp`)",
        client="path",
    ),
    Setting(
        "indexDir",
        None,
        OPTIONAL_STRING,
        doc="this vault's index folder (one vault only: use exactly this folder)",
        ui="Use exactly this index folder (one vault only; `${workspaceFolder}` and `~` are "
        "expanded). Empty: one folder per vault under the cache.",
        machine=True,
        cli="`--index-dir`",
        default_doc="`<cacheDir>/indexes/<vault>-<hash>`",
        client="path",
    ),
    Setting(
        "qdrantUrl",
        None,
        OPTIONAL_STRING,
        doc="a Qdrant server (e.g. `http://localhost:6333`) instead of the embedded shard",
        ui="A Qdrant server (e.g. `http://localhost:6333`) instead of the embedded index. "
        "Empty: embedded.",
        machine=True,
        default_doc="none (the embedded shard)",
        client="optional-string",
    ),
    Setting(
        "qdrantApiKey",
        None,
        OPTIONAL_STRING,
        doc="API key for `qdrantUrl`",
        ui="API key for `#zettel.qdrantUrl#` (stored in plain text in settings.json).",
        machine=True,
        default_doc="none",
        client="optional-string",
    ),
    Setting(
        "watch",
        True,
        BOOLEAN,
        doc="follow changes on disk",
        ui="Follow changes on disk (the server watches the folder).",
        cli="`index --watch`",
    ),
    Setting(
        "debounceMs",
        500,
        POSITIVE_INT,
        doc="batch file events (the watcher's debounce, in milliseconds)",
        ui="Debounce of the server's file watcher, in milliseconds.",
    ),
    Setting(
        "titleSource",
        TitleSource.AUTO,
        one_of(TITLE_SOURCES, TitleSource),
        doc="which name is a card's title: `auto` (frontmatter `title`, else the file name; "
        "an opening H1 only when the file name is an identifier such as `202311211530`, "
        "and otherwise perhaps an alias), `filename`, `h1` (opening H1 > frontmatter title "
        "> file name, as before) or `frontmatter`; see "
        "[notes-and-links.md](notes-and-links.md#titles). Changing it re-indexes (vectors "
        "are reused where the text is unchanged)",
        ui="Which name is a card's title: in search results, *Go to Symbol*, the title "
        "search, chunk prefixes, unlinked mentions and link suggestions. A change "
        "re-indexes the vault (vectors are reused where the text is unchanged).",
        cli="`--title-source` (graph, index, search, ...)",
        ui_json=MappingProxyType(
            {
                "enumDescriptions": [
                    "The frontmatter `title`, else the file name (what [[links]] use and "
                    "Obsidian shows). An H1 that opens the note is the title only when the "
                    "file name is an identifier (a timestamp, a zk id, a Folgezettel "
                    "number, a UUID); otherwise it may become an alias.",
                    "Always the file name. A frontmatter `title` becomes an alias; the "
                    "opening H1 is content.",
                    "The H1 that opens the note, else the frontmatter `title`, else the "
                    "file name (titles as before this setting).",
                    "The frontmatter `title`, else the file name; the opening H1 is content.",
                ]
            }
        ),
    ),
    Setting(
        "followExternalSymlinks",
        False,
        BOOLEAN,
        doc="follow symlinks (to notes or folders) whose target is outside the vault; off, "
        "they are skipped and reported once with their target, so nothing outside the "
        "vault is previewed or uploaded ([indexing.md](indexing.md#symlinks)). Symlinks "
        "inside the vault always work. Changing it re-indexes",
        ui="Follow symlinks (to notes or folders) whose target is outside the vault, e.g. "
        "`passwd.md -> /etc/passwd`. Off: they are skipped and reported once (their "
        "contents are never shown in hovers or sent to `#zettel.qdrantUrl#`); symlinks "
        "inside the vault always work. A change re-indexes.",
        cli="`--follow-external-symlinks`",
    ),
    Setting(
        "multilingual",
        "auto",
        one_of(MULTILINGUAL),
        doc="search in other languages and across them with a second, multilingual model "
        "(offline; 16 languages): `auto` embeds the non-English cards of a vault (an "
        "English search reads them with it), and every card once a search is not in "
        "English; "
        "`on` every card from the start; `off` never (non-English queries get the English "
        "model and the lexical legs). It runs after the English embedding, which it never "
        "delays; see [multilingual.md](multilingual.md)",
        ui="Search in other languages and across them with a second, multilingual model: "
        "`auto` starts it for the non-English notes of a vault, and for every note at the "
        "first search that is not in English; `on` always; `off` never.",
        cli="`--multilingual auto|on|off` (index, search, eval, ...)",
    ),
]
# take effect at the next request
_ANSWERS = [
    Setting(
        "legs",
        ALL_LEGS,
        choices_list(ALL_LEGS),
        doc="which retrieval legs run (a list, or one comma-separated string)",
        ui="Search legs to fuse: `dense` (meaning), `bm25`, `keyword`, `title`.",
        cli="`--legs dense,bm25,keyword,title`",
        default_doc="all four",
        client="non-empty-list",
    ),
    Setting(
        "graph",
        True,
        BOOLEAN,
        doc="the graph rerank",
        ui="Rerank results with the link graph (the card *about* a topic above cards that "
        "merely mention it).",
        cli="`--no-graph`",
    ),
    Setting(
        "graphStrength",
        1.0,
        number_range(0, 5),
        doc="how strongly the graph rerank discounts mention-only cards (0 = off; 1 is the "
        "evaluated default)",
        ui="How strongly the graph rerank discounts mention-only cards (0 = off; 1 is the "
        "evaluated default).",
        default_doc="1.0",
    ),
    Setting(
        "symbolLimit",
        20,
        POSITIVE_INT,
        doc="search results (`workspace/symbol`, `zettel.search`)",
        ui="Results in the Search view and in *Go to Symbol in Workspace*.",
        cli="`search --limit`",
        default_doc="20 (CLI 10)",
        ui_json=_LIMIT,
    ),
    Setting(
        "hoverLimit",
        5,
        POSITIVE_INT,
        doc="related notes in a hover",
        ui="Related notes shown in a hover.",
        ui_json=_LIMIT,
    ),
    Setting(
        "relatedLimit",
        5,
        POSITIVE_INT,
        doc='links "Add related links" inserts',
        ui="Links that *Add related links* inserts.",
        cli="`suggest --limit`",
        ui_json=_LIMIT,
    ),
    Setting(
        "suggestSelfTune",
        True,
        BOOLEAN,
        doc="weigh the related-card suggestions by what predicts this vault's own links "
        "(chosen once in the background after indexing, kept in the index folder; see "
        "[evaluation.md](evaluation.md#self-tuned-suggestions)); `false`: the default weights",
        ui="Weigh *Add related links* and the suggestions by what predicts this vault's own "
        "links (chosen once in the background, kept in the index folder); off: the default "
        "weights.",
        cli="`suggest --no-self-tune`",
    ),
    Setting(
        "relatedHeading",
        "## Related",
        HEADING,
        doc="the heading they go under",
        ui="The heading under which *Add related links* inserts them.",
    ),
    Setting(
        "diagnosticsUnresolved",
        "warning",
        one_of(SEVERITIES),
        doc='severity of a link that names no card (with "did you mean"), or `off`; see '
        "[lsp-diagnostics.md](lsp-diagnostics.md)",
        ui="Severity of a diagnostic on a link that names no card (it says which cards come "
        "close), or `off`.",
    ),
    Setting(
        "diagnosticsAmbiguous",
        "information",
        one_of(SEVERITIES),
        doc="severity of a link that several cards match (which ones, and which it picks), "
        "or `off`",
        ui="Severity of a diagnostic on a link that several cards match (it names them and "
        "the one the link goes to), or `off`.",
    ),
    Setting(
        "diagnosticsMissingAnchor",
        "warning",
        one_of(SEVERITIES),
        doc="severity of `[[Card#Heading]]` / `[[Card#^block]]` when the card has no such "
        "heading or block, or `off`",
        ui="Severity of a diagnostic on `[[Card#Heading]]` or `[[Card#^block]]` when the "
        "card has no such heading or block, or `off`.",
    ),
    Setting(
        "diagnosticsDuplicateTitle",
        "information",
        one_of(SEVERITIES),
        doc="severity of a title or alias that another card has too, or `off`",
        ui="Severity of a diagnostic on a card's title or alias that another card has too "
        "(links by that name are ambiguous), or `off`.",
    ),
    Setting(
        "newNoteFolder",
        None,
        OPTIONAL_STRING,
        doc="where *Create card* puts a card for an unresolved `[[link]]` (vault-relative; "
        "`.` is the vault root)",
        ui="Where *Create card «X»* puts the card an unresolved `[[link]]` names: a folder "
        "relative to the vault (`.` is the vault root). Empty: the linking card's folder.",
        default_doc="the linking card's folder",
        client="optional-string",
    ),
]
CORE = Schema([*(dataclasses.replace(s, index=True) for s in _REOPEN), *_ANSWERS])

_OLLAMA = (
    " Part of the optional Ollama layer: needs a local Ollama, and is off by default (only "
    "*Zettel: Ask* and the LLM search steps use it)."
)
_OLLAMA_STEP = (
    " Needs a local [Ollama](https://ollama.com); off by default (nothing talks to Ollama "
    "unless you use Ask or turn this on). Runs when you press Enter in the Search view (not "
    "while you type) and in *Ask*."
)

LLM = Schema(
    [
        Setting(
            "ollamaHost",
            None,
            HOST,
            field="host",
            doc="the Ollama URL; `localhost:11434`, `http://gpu-box:11434`, ... (notes leave "
            "the machine only when this names another one; [llm.md](llm.md#settings))",
            ui="The Ollama server for *Zettel: Ask* and the optional LLM search steps, e.g. "
            "`http://127.0.0.1:11434` or `gpu-box:11434`. Empty: `OLLAMA_HOST` when it names "
            "this machine, else `http://127.0.0.1:11434`. Your notes go to another machine "
            "only when this says so." + _OLLAMA,
            machine=True,
            cli="`--ollama-host`",
            default_doc="`OLLAMA_HOST` when it names this machine, else `http://127.0.0.1:11434`",
            client="optional-string",
        ),
        Setting(
            "chatModel",
            DEFAULT_CHAT_MODEL,
            MODEL_NAME,
            doc="the Ollama model for ask, expansion and rerank",
            ui="The Ollama model that answers *Ask* and runs `#zettel.expandQuery#` / "
            "`#zettel.llmRerank#` (pull it with `ollama pull <name>`)." + _OLLAMA,
            cli="`--chat-model`",
            client="required-string",
        ),
        Setting(
            "embedModel",
            DEFAULT_EMBED_MODEL,
            MODEL_NAME,
            doc="what `Ollama.embed()` uses; the *index* model is the `model` setting "
            "(`ollama:<name>`)",
            ui="The Ollama embedding model for Ollama's own embedding calls. The index's model "
            "is `#zettel.model#` (`ollama:<name>` embeds the index with Ollama)." + _OLLAMA,
            client="required-string",
        ),
        Setting(
            "llmTimeout",
            60.0,
            seconds(3600),
            field="timeout",
            doc="the longest wait for a byte from Ollama (HTTP read timeout), per call",
            ui="Seconds to wait for a byte from Ollama, per call (a slow but streaming answer "
            "may take longer in total)." + _OLLAMA,
            cli="`--llm-timeout`",
            default_doc="60 s",
        ),
        Setting(
            "llmConnectTimeout",
            2.0,
            seconds(3600),
            field="connect_timeout",
            doc="the longest wait for a connection to Ollama",
            ui="Seconds to wait for a connection to Ollama." + _OLLAMA,
            default_doc="2 s",
        ),
        Setting(
            "temperature",
            0.2,
            number_range(0, 2),
            doc="the sampling temperature of answers (expansion and rerank use 0)",
            ui="The sampling temperature of *Ask*'s answers (query expansion and rerank use 0)."
            + _OLLAMA,
        ),
        Setting(
            "maxContextChunks",
            8,
            int_range(1, 100),
            doc="at most this many chunks in an answer's prompt",
            ui="At most this many note chunks in an answer's prompt (fewer on small vaults: "
            "√cards, and only what fits `#zettel.contextWindow#`)." + _OLLAMA,
            cli="`ask --max-context-chunks`",
        ),
        Setting(
            "contextWindow",
            8192,
            int_range(512, 1_048_576, "a token count"),
            doc="cap on the model's context length in tokens, sent as `num_ctx`",
            ui="Cap on the model's context length in tokens (sent to Ollama as `num_ctx`)."
            + _OLLAMA,
        ),
        Setting(
            "expandQuery",
            False,
            BOOLEAN,
            doc="query expansion in search and ask",
            ui="Query expansion: the Ollama model rewrites or splits the query before "
            "searching." + _OLLAMA_STEP,
            cli="`--expand`",
        ),
        Setting(
            "llmRerank",
            False,
            BOOLEAN,
            doc="LLM rerank in search and ask (before the graph rerank)",
            ui="LLM rerank: the Ollama model rates the top results before the graph rerank."
            + _OLLAMA_STEP,
            cli="`--llm-rerank`",
        ),
    ]
)

ALL: tuple[Setting, ...] = (*CORE, *LLM)
"""Every key the server reads, in the order of the docs."""

if set(CORE.by_key) & set(LLM.by_key):
    raise ValueError("a key is both a server key and an LLM key")
