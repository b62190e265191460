"""Write the settings lists the clients and docs need from :mod:`zettel_lsp.settings_schema`.

    python -m zettel_lsp.settings_gen --write   # rewrite what is stale
    python -m zettel_lsp.settings_gen --check   # exit 1 and name what is stale

Generated, in the repository (``tests/test_settings_schema.py`` fails when one is stale):

- ``editors/vscode/package.json``: the server keys' entries of
  ``contributes.configuration.properties`` (the extension's own ``zettel.server.*``,
  ``zettel.trace.*`` and ``zettel.relatedView.*`` entries are kept as they are);
- ``editors/vscode/src/lib/settingsSchema.ts``: the keys, how the extension normalises each and
  the defaults, for ``settings.ts``;
- ``docs/settings.md``: the part between the ``BEGIN``/``END generated`` comments;
- ``editors/nvim/doc/zettel_lsp.txt``: the key list under the ``settings`` option.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from zettel_lsp.settings_schema import ALL, CLIENT_KINDS, CORE, LLM, Schema, Setting

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_JSON = Path("editors/vscode/package.json")
SCHEMA_TS = Path("editors/vscode/src/lib/settingsSchema.ts")
SETTINGS_MD = Path("docs/settings.md")
NVIM_HELP = Path("editors/nvim/doc/zettel_lsp.txt")

COMMAND = "python -m zettel_lsp.settings_gen --write"
CLIENT_ONLY_PREFIXES = (
    "zettel.server.",
    "zettel.trace.",
    "zettel.relatedView.",
    "zettel.searchView.",
)
"""VS Code settings of the extension itself, which the server never sees."""

MD_BEGIN = f"<!-- BEGIN generated from zettel_lsp/settings_schema.py by `{COMMAND}` -->"
MD_END = "<!-- END generated -->"
NVIM_BEGIN = "    Server settings with the camelCase keys"
NVIM_END = "    Both tables are merged"


class MarkerError(ValueError):
    """A file the generator cannot update: the lines that mark its part are missing."""


# ------------------------------------------------------------------ VS Code


def json_default(setting: Setting) -> Any:
    """The default as VS Code's settings show it: an unset optional string is ``""``."""
    value = setting.default
    types = setting.check.json.get("type")
    if value is None:
        return "" if types == "string" else None
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _ts_default(setting: Setting) -> Any:
    """The server's default as JSON (null: unset, e.g. all cores or the user cache)."""
    return None if setting.default is None else json_default(setting)


_BEFORE_DEFAULT = ("type", "items", "enum", "enumDescriptions")


def vscode_property(setting: Setting) -> dict[str, Any]:
    """One ``contributes.configuration.properties`` entry."""
    schema = {**setting.check.json, **setting.ui_json}
    out: dict[str, Any] = {k: schema[k] for k in _BEFORE_DEFAULT if k in schema}
    out["default"] = json_default(setting)
    out.update({k: v for k, v in schema.items() if k not in _BEFORE_DEFAULT})
    if setting.machine:
        out["scope"] = "machine-overridable"
    out["markdownDescription"] = setting.ui
    return out


def update_package_json(text: str) -> str:
    """``package.json`` with the server keys' entries as the schema says, in its order, where
    the first of them stands today; the extension's own entries keep their places."""
    package = json.loads(text)
    properties: dict[str, Any] = package["contributes"]["configuration"]["properties"]
    generated = {f"zettel.{s.key}": vscode_property(s) for s in ALL}
    out: dict[str, Any] = {}
    for name, value in properties.items():
        if name.startswith(CLIENT_ONLY_PREFIXES):
            out[name] = value
        elif not out.keys() & generated.keys():
            out.update(generated)  # the first server key (or a stale one) marks the place
    out.update(generated)  # no server key yet: at the end
    package["contributes"]["configuration"]["properties"] = out
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def render_ts() -> str:
    def names(keys: Iterable[str]) -> str:
        return "[\n" + "".join(f"  {json.dumps(k)},\n" for k in keys) + "] as const"

    kinds = "".join(f'\n  | "{k}"' for k in CLIENT_KINDS)
    rows = "".join(
        f"  {s.key}: {{ client: {json.dumps(s.client)}, default: {json.dumps(_ts_default(s))} }},\n"
        for s in ALL
    )
    return f"""\
// Generated from zettel_lsp/settings_schema.py by `{COMMAND}`: do not edit.

/** How the extension normalises a value before sending it (see `serverSettings`). */
export type ClientKind ={kinds};

/** The server's own keys, in the order of docs/settings.md. */
export const CORE_KEYS = {names(CORE.by_key)};

/**
 * The optional Ollama layer's keys (docs/llm.md). The server reads them from the same settings
 * object. Nothing talks to Ollama unless a feature that needs it is used (Ask, or `expandQuery` /
 * `llmRerank` turned on).
 */
export const LLM_KEYS = {names(LLM.by_key)};

/** Keys whose change re-opens the vaults on the server (it re-indexes). */
export const INDEX_KEY_LIST = {names([s.key for s in ALL if s.index])};

type Key = (typeof CORE_KEYS)[number] | (typeof LLM_KEYS)[number];

/** Per key: how the extension normalises it, and the server's default (null: unset). */
export const SCHEMA: Readonly<Record<Key, {{ client: ClientKind; default: unknown }}>> = {{
{rows}}};
"""


# ------------------------------------------------------------------ docs


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default_doc(setting: Setting) -> str:
    if setting.default_doc is not None:
        return setting.default_doc
    value = json_default(setting)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return f"`{value}`"
    return json.dumps(value)


def _table(schema: Schema) -> list[str]:
    lines = ["| Key | Default | CLI | What it does |", "|---|---|---|---|"]
    for s in schema:
        doc = ("*index*; " if s.index else "") + s.doc
        lines.append(f"| `{s.key}` | {_cell(_default_doc(s))} | {_cell(s.cli)} | {_cell(doc)} |")
    return lines


def _replace_lines(text: str, begin_mark: str, end_mark: str, new: list[str]) -> str:
    """``text`` with ``new`` in place of the lines from the first that starts with
    ``begin_mark`` up to (not including) the next that starts with ``end_mark``."""
    lines = text.split("\n")
    begin = next((i for i, line in enumerate(lines) if line.startswith(begin_mark)), None)
    if begin is None:
        raise MarkerError("the line where the generated part starts is missing")
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].startswith(end_mark)), None)
    if end is None:
        raise MarkerError("the line after the generated part is missing")
    return "\n".join([*lines[:begin], *new, *lines[end:]])


def update_settings_md(text: str) -> str:
    section = [
        MD_BEGIN,
        "",
        *_table(CORE),
        "",
        "The optional Ollama layer ([llm.md](llm.md)): nothing talks to Ollama unless *Ask* is",
        'used or `expandQuery` / `llmRerank` is on; `model: "ollama:<name>"` embeds the index',
        "with Ollama.",
        "",
        *_table(LLM),
        "",
    ]
    return _replace_lines(text, "<!-- BEGIN generated", MD_END, section)


def update_nvim_help(text: str) -> str:
    core = ", ".join(f"`{k}`" for k in CORE.by_key)
    llm = ", ".join(f"`{k}`" for k in LLM.by_key)
    keys = textwrap.wrap(
        f"{NVIM_BEGIN.strip()} of the repository's docs/settings.md: {core}, "
        f"and for Ollama (|zettel_lsp-ollama|) {llm}.",
        width=78,
        initial_indent="    ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return _replace_lines(text, NVIM_BEGIN, NVIM_END, keys)


# ------------------------------------------------------------------ main

UPDATES: dict[Path, Callable[[str], str]] = {
    PACKAGE_JSON: update_package_json,
    SCHEMA_TS: lambda _old: render_ts(),
    SETTINGS_MD: update_settings_md,
    NVIM_HELP: update_nvim_help,
}


def expected(root: Path = ROOT) -> dict[Path, tuple[str, str]]:
    """path -> (what it holds, what it should hold)."""
    out: dict[Path, tuple[str, str]] = {}
    for rel, update in UPDATES.items():
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        try:
            out[rel] = (old, update(old))
        except MarkerError as e:
            raise MarkerError(f"{rel}: {e}") from None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m zettel_lsp.settings_gen", description=__doc__.splitlines()[0]
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the stale files")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    if not (args.root / PACKAGE_JSON).exists():
        print(f"{args.root} is not the zettel-lsp repository", file=sys.stderr)
        return 2
    try:
        files = expected(args.root)
    except MarkerError as e:
        print(f"cannot update: {e}", file=sys.stderr)
        return 2
    stale = []
    for rel, (old, new) in files.items():
        if old == new:
            continue
        stale.append(rel)
        if args.write:
            (args.root / rel).write_text(new, encoding="utf-8")
            print(f"wrote {rel}", file=sys.stderr)
    if args.check and stale:
        names = ", ".join(map(str, stale))
        print(f"stale: {names}; run `{COMMAND}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
