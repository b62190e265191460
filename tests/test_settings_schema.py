"""The one settings table: the parsers use it, and every client's list is generated from it."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from zettel_lsp import settings_gen
from zettel_lsp.llm.settings import LLM_KEYS, LLMSettings
from zettel_lsp.llm.settings import parse as parse_llm
from zettel_lsp.server.settings import ServerSettings, parse_settings
from zettel_lsp.settings_gen import COMMAND, expected, json_default, main, update_package_json
from zettel_lsp.settings_schema import ALL, CORE, LLM, Setting

ROOT = Path(__file__).resolve().parent.parent

# A valid value other than the default, for every key: a key added to the table must be added
# here too, which makes its author say whether a change re-opens the vaults (Setting.index).
OTHER_VALUES: dict[str, object] = {
    "model": "BAAI/bge-small-en-v1.5",
    "threads": 2,
    "ignore": ["templates/**"],
    "maxFileBytes": 1000,
    "cacheDir": "/tmp/cache",
    "indexDir": "/tmp/index",
    "qdrantUrl": "http://localhost:6333",
    "qdrantApiKey": "secret",
    "watch": False,
    "debounceMs": 100,
    "titleSource": "h1",
    "followExternalSymlinks": True,
    "multilingual": "off",
    "legs": ["bm25"],
    "graph": False,
    "graphStrength": 0.5,
    "symbolLimit": 7,
    "hoverLimit": 3,
    "relatedLimit": 2,
    "suggestSelfTune": False,
    "relatedHeading": "## See also",
    "diagnosticsUnresolved": "error",
    "diagnosticsAmbiguous": "off",
    "diagnosticsMissingAnchor": "hint",
    "diagnosticsDuplicateTitle": "warning",
    "newNoteFolder": "inbox",
    "ollamaHost": "http://gpu-box:11434",
    "chatModel": "phi3",
    "embedModel": "mxbai-embed-large",
    "llmTimeout": 30,
    "llmConnectTimeout": 1,
    "temperature": 0.7,
    "maxContextChunks": 4,
    "contextWindow": 4096,
    "expandQuery": True,
    "llmRerank": True,
}


@pytest.mark.parametrize("path", list(settings_gen.UPDATES), ids=str)
def test_generated_files_are_current(path: Path) -> None:
    old, new = expected(ROOT)[path]
    assert old == new, f"{path} is stale: run `{COMMAND}`"


def test_check_and_write_find_and_fix_a_stale_file(tmp_path: Path) -> None:
    for rel in settings_gen.UPDATES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    assert main(["--check", "--root", str(tmp_path)]) == 0
    md = tmp_path / settings_gen.SETTINGS_MD
    md.write_text(md.read_text().replace("| `hoverLimit` |", "| `hoverLimits` |"))
    package = tmp_path / settings_gen.PACKAGE_JSON
    data = json.loads(package.read_text())
    del data["contributes"]["configuration"]["properties"]["zettel.llmRerank"]
    package.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--write", "--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    for rel in settings_gen.UPDATES:
        assert (tmp_path / rel).read_text() == (ROOT / rel).read_text()


def test_package_json_keeps_the_extensions_own_settings_in_place() -> None:
    def prop(text: str) -> dict[str, Any]:
        return {"type": "string", "default": "", "markdownDescription": text}

    package = {
        "name": "x",
        "contributes": {
            "configuration": {
                "title": "Zettel",
                "properties": {
                    "zettel.server.command": prop("how to start"),
                    "zettel.model": prop("stale text"),
                    "zettel.removedKey": prop("a key the server no longer reads"),
                    "zettel.relatedView.limit": prop("client side"),
                    "zettel.trace.server": prop("trace"),
                },
            }
        },
    }
    out = json.loads(update_package_json(json.dumps(package)))
    names = list(out["contributes"]["configuration"]["properties"])
    assert names == [
        "zettel.server.command",
        *(f"zettel.{s.key}" for s in ALL),
        "zettel.relatedView.limit",
        "zettel.trace.server",
    ]
    assert out["contributes"]["configuration"]["properties"]["zettel.trace.server"] == prop("trace")
    assert out["name"] == "x"


def test_the_table_is_the_dataclasses() -> None:
    assert [s.field for s in CORE] == [f.name for f in fields(ServerSettings) if f.name != "llm"]
    assert [s.field for s in LLM] == [f.name for f in fields(LLMSettings)]
    core, llm = ServerSettings(), LLMSettings()
    assert all(getattr(core, s.field) == s.default for s in CORE)
    assert all(getattr(llm, s.field) == s.default for s in LLM)
    assert {s.key: s.field for s in LLM} == LLM_KEYS
    assert set(OTHER_VALUES) == {s.key for s in ALL}


@pytest.mark.parametrize("setting", ALL, ids=lambda s: s.key)
def test_every_key_parses_and_says_whether_it_reindexes(setting: Setting) -> None:
    base = ServerSettings()
    s, problems = parse_settings({"zettel": {setting.key: OTHER_VALUES[setting.key]}}, base)
    assert problems == []
    target = s.llm if setting.key in LLM else s
    assert getattr(target, setting.field) != setting.default
    assert (s.index_key() != base.index_key()) == setting.index
    if setting.key in LLM:
        assert parse_llm({setting.key: OTHER_VALUES[setting.key]})[0] == s.llm


@pytest.mark.parametrize("setting", ALL, ids=lambda s: s.key)
def test_vs_code_default_is_the_servers_default(setting: Setting) -> None:
    sent = json_default(setting)
    if setting.client in ("optional-string", "path") and sent == "":
        sent = None  # the extension sends an empty optional string as null
    assert setting.parse(sent) == (setting.default, None)


@pytest.mark.parametrize("setting", ALL, ids=lambda s: s.key)
def test_json_schema_bounds_are_the_checks_bounds(setting: Setting) -> None:
    schema = dict(setting.check.json)
    accepted, refused = [], []
    if "minimum" in schema:
        accepted.append(schema["minimum"])
        refused.append(schema["minimum"] - 1)
    if "exclusiveMinimum" in schema:
        accepted.append(schema["exclusiveMinimum"] + 0.5)
        refused.append(schema["exclusiveMinimum"])
    if "maximum" in schema:
        accepted.append(schema["maximum"])
        refused.append(schema["maximum"] + 1)
    if "enum" in schema:
        accepted.extend(schema["enum"])
        refused.append("no-such-choice")
    if "enum" in schema.get("items", {}):
        accepted.extend([[x] for x in schema["items"]["enum"]])
        refused.extend([[], ["no-such-choice"]])
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "boolean" in types:
        accepted.extend([True, False])
    refused.append({"an": "object"})
    for value in accepted:
        assert setting.parse(value)[1] is None, value
    for value in refused:
        assert setting.parse(value)[1] is not None, value


def test_messages_and_fallbacks() -> None:
    base = ServerSettings(symbol_limit=3, llm=LLMSettings(chat_model="phi3"))
    bad = {
        "threads": 0,
        "maxFileBytes": True,
        "graphStrength": 6,
        "watch": "yes",
        "ignore": "*.tmp",
        "legs": [],
        "titleSource": "heading",
        "relatedHeading": "Related",
        "model": "",
        "chatModel": " ",
        "ollamaHost": "a b",
        "llmTimeout": 0,
        "temperature": 3,
        "maxContextChunks": 101,
        "contextWindow": 100,
        "llmRerank": 1,
        "nonsense": 1,
    }
    s, problems = parse_settings({"zettel": bad}, base)
    known = ", ".join(sorted(setting.key for setting in ALL))
    assert problems == [
        "setting 'ollamaHost': expected a URL such as 'http://127.0.0.1:11434', got 'a b'; "
        "using the default",
        "setting 'chatModel': expected a model name such as 'llama3.2', got ' '; using the default",
        "setting 'llmTimeout': expected seconds (a number above 0, at most 3600), got 0; "
        "using the default",
        "setting 'temperature': expected a number from 0 to 2, got 3; using the default",
        "setting 'maxContextChunks': expected an integer from 1 to 100, got 101; using the default",
        "setting 'contextWindow': expected a token count from 512 to 1048576, got 100; "
        "using the default",
        "setting 'llmRerank': expected true or false, got 1; using the default",
        "setting 'threads': expected a positive integer or null, got 0; using the default",
        "setting 'maxFileBytes': expected a positive integer, got True; using the default",
        "setting 'graphStrength': expected a number from 0 to 5, got 6; using the default",
        "setting 'watch': expected true or false, got 'yes'; using the default",
        "setting 'ignore': expected a list of glob strings, got '*.tmp'; using the default",
        "setting 'legs': expected a non-empty list of dense, bm25, keyword, title, got []; "
        "using the default",
        "setting 'titleSource': expected one of auto, filename, h1, frontmatter, got 'heading'; "
        "using the default",
        "setting 'relatedHeading': expected a Markdown heading such as '## Related', got "
        "'Related'; using the default",
        "setting 'model': expected a string, got ''; using the default",
        f"unknown setting 'nonsense' (known: {known})",
    ]
    assert s == ServerSettings(symbol_limit=3)  # each bad key is back at its default
    # null means the default; an empty optional string too
    s, problems = parse_settings({"model": None, "cacheDir": " ", "ollamaHost": ""}, base)
    assert problems == []
    assert (s.model, s.cache_dir, s.llm.host) == (ServerSettings().model, None, None)


def test_docs_name_every_key() -> None:
    server_md = (ROOT / "docs/server.md").read_text()
    llm_md = (ROOT / "docs/llm.md").read_text()
    settings_md = (ROOT / "docs/settings.md").read_text()
    for s in ALL:
        assert f"`{s.key}`" in settings_md, s.key
        assert f"`{s.key}`" in server_md, f"docs/server.md does not name {s.key}"
    for s in LLM:
        assert f"| `{s.key}` | `{s.field}` |" in llm_md, f"docs/llm.md's table lacks {s.key}"
