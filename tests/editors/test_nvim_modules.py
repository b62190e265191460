"""The Neovim plugin's module layout (editors/nvim/lua/zettel_lsp/), without a server.

``init.lua`` is a thin entry (setup(), the user commands, the public Lua API) over modules split
the way the VS Code extension is (client, results and pickers, search, related, suggestions,
hover, ask window, status). Each module must load on its own in headless Neovim (a fresh
``require`` with no other plugin module loaded first), without side effects (no commands,
autocommands or clients), and none may require the entry point back. The public API of
``require("zettel_lsp")`` keeps every name the help file (``:help zettel_lsp-api``) and the
editor tests use, and ``.config`` stays the options every module reads.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.nvim import NVIM, run_headless

PLUGIN = ROOT / "editors" / "nvim"
MODULES = PLUGIN / "lua" / "zettel_lsp"
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not on PATH")

INIT_MAX_LINES = 300
# Every function of require("zettel_lsp") today: the documented API (doc/zettel_lsp.txt,
# "Lua API") and what the editor tests and the troubleshooting notes call.
PUBLIC_FUNCTIONS = {
    "setup",
    "search",
    "related",
    "suggest_links",
    "ask",
    "reindex",
    "status",
    "get_client",
    "clients",
    "execute",
    "update_settings",
    "attach",
    "is_zettel_client",
    "format_result",
    "open_result",
    "format_status",
    "paragraph_at_cursor",
    "hover_related",
    "hover",
    "install",
}
COMMANDS = {
    "ZettelSearch",
    "ZettelRelated",
    "ZettelSuggestLinks",
    "ZettelAsk",
    "ZettelReindex",
    "ZettelStatus",
    "ZettelInstall",
}

LUA = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local out = { modules = {}, notifications = {} }
vim.notify = function(msg, level)
  table.insert(out.notifications, { msg = tostring(msg), level = level })
end

local function forget_plugin()
  for name in pairs(package.loaded) do
    if name == "zettel_lsp" or vim.startswith(name, "zettel_lsp.") then
      package.loaded[name] = nil
    end
  end
end

local function plugin_loaded()
  local names = {}
  for name in pairs(package.loaded) do
    if name == "zettel_lsp" or vim.startswith(name, "zettel_lsp.") then
      table.insert(names, name)
    end
  end
  table.sort(names)
  return names
end

-- The user commands defined (0.7 marks an empty dictionary with a [true] key: skip it).
local function user_commands()
  local names = {}
  for name in pairs(vim.api.nvim_get_commands({})) do
    if type(name) == "string" then
      table.insert(names, name)
    end
  end
  return names
end

local function main()
  -- Each module alone, from nothing loaded.
  for _, name in ipairs(P.modules) do
    forget_plugin()
    local ok, value = pcall(require, name)
    out.modules[name] = {
      ok = ok,
      error = not ok and tostring(value) or nil,
      type = type(value),
      loaded = plugin_loaded(),
      commands = user_commands(),
      augroup = vim.fn.exists("#zettel_lsp") == 1,
      clients = #vim.lsp.get_active_clients(),
    }
  end

  -- The entry point's API, before and after setup().
  forget_plugin()
  local zettel = require("zettel_lsp")
  local config = require("zettel_lsp.config")
  out.api = {}
  for key, value in pairs(zettel) do
    out.api[key] = type(value)
  end
  out.name = zettel.name
  out.default_picker = zettel.config.picker
  out.config_is_shared = zettel.config == config.current
  zettel.setup({ cmd = "my-zettel-lsp", autostart = false, picker = "select" })
  out.cmd_after_setup = zettel.config.cmd
  out.shared_after_setup = zettel.config == config.current and config.current.picker == "select"
  zettel.config = vim.tbl_extend("force", zettel.config, { related_list = "quickfix" })
  out.assigned_is_read = config.current.related_list == "quickfix"
  out.commands = user_commands()
  out.command_table = vim.tbl_keys(zettel.commands)

  -- A few answers that need no server.
  out.formatted = zettel.format_result({
    title = "Reciprocal rank fusion", path = "retrieval/Reciprocal rank fusion.md",
    relation = "linked", excerpt = "RRF   adds\n1/(k + rank)",
  })
  out.formatted_top = zettel.format_result({ path = "Index.md", vault = "/x/my vault" })
  out.status_lines = zettel.format_status({
    version = "9.9",
    vaults = { { root = "/v", phase = "ready", cards = 3, skipped = { a = "b" } } },
  })
  out.status_multilingual = zettel.format_status({
    version = "9.9",
    vaults = { {
      root = "/m", phase = "ready", legs_ready = { "bm25", "dense_ml" },
      languages = { ru = 8, de = 5 }, multilingual_scope = "all cards",
      cards_embedded_multilingual = 13, cards_waiting_for_multilingual = 0,
      suggestion_weights = "chosen on this vault's links",
    } },
  })
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false,
    { "---", "title: x", "---", "first", "second", "", "third" })
  out.paragraph = { zettel.paragraph_at_cursor(buf, 5) }
  out.in_frontmatter = zettel.paragraph_at_cursor(buf, 2)
  out.blank = zettel.paragraph_at_cursor(buf, 6)

  -- Text in floats: wrapped at spaces, links shown as titles and vault-relative paths.
  local util = require("zettel_lsp.util")
  local hover = require("zettel_lsp.hover")
  out.wrapped = util.wrap("alpha beta gamma delta epsilon", 11)
  out.wrapped_long = util.wrap("a verylongwordthatdoesnotfit b", 10)
  out.wrapped_max = util.wrap("one two three four five six seven", 10, "  ", "  ", 2)
  local lines, marks = util.wrap_segments({ { "Title words", "T" }, { "· linked", "D" } }, 12)
  out.segments = { lines = lines, marks = marks }
  local plain = require("zettel_lsp.plain")
  out.plain = { plain.lines(table.concat({
    "### [TF-IDF](file:///v/retrieval/TF-IDF.md)",
    "`retrieval/TF-IDF.md` · 2 backlinks",
    "",
    "> ## Weights",
    "> Raw [[BM25|bm25]] and `k1` **bold** *em*:",
    "> ```",
    "> x = 1",
    "> ```",
    "",
    "**Related**",
    "",
    "- [Reciprocal rank fusion](file:///v/a/b/retrieval/Reciprocal%20rank%20fusion.md#L3)"
      .. " · *linked* — RRF \\[1\\]",
    "- [Top](file:///v/Top.md#L1) · *not linked* — top",
    "**[pic.png](file:///v/img/pic.png)** (attachment)",
    "- [a \\[b\\]](file:///elsewhere/x.md#L1) and [web](https://example.org)",
  }, "\n"), "/v", 80) }
  out.plain_wrapped = plain.lines("> " .. string.rep("word ", 30) .. "\n\n- "
    .. string.rep("x", 38) .. " - dash " .. string.rep("y", 36), "/v", 40)
  out.related_lines = { hover.related_lines({
    { title = "A rather long title", path = "folder/deeper/deepest/A note.md", line_start = 2,
      relation = "linked", excerpt = string.rep("text ", 40) },
    { path = "B.md", excerpt = "", folder = "my vault" },
  }, 60) }
  -- Suggestions: each mentioned card once with its count, "Link N confident" below the fixes.
  local suggest = require("zettel_lsp.suggest")
  local function r(line, a, b)
    return { start = { line = line, character = a }, ["end"] = { line = line, character = b } }
  end
  local choices = suggest.choices({
    unlinked_mentions = {},
    mention_targets = {
      { text = "BM25", replacement = "[[BM25]]", count = 2, ranges = { r(3, 0, 4), r(7, 5, 9) } },
      { text = "tools", replacement = "[[Tools|tools]]", count = 1, ranges = { r(4, 2, 7) } },
    },
    link_confident = { title = "Link 1 confident mention", count = 1,
      edits = { { range = r(3, 0, 4), newText = "[[BM25]]" } } },
    related = { { title = "TF-IDF", path = "TF-IDF.md" } },
  })
  out.suggest_choices = {}
  for _, c in ipairs(choices) do
    table.insert(out.suggest_choices, { c.label, c.edits and #c.edits or -1 })
  end
  local old = suggest.choices({ unlinked_mentions = {
    { text = "a", replacement = "[[A]]", range = r(0, 0, 1) },
    { text = "b", replacement = "[[B]]", range = r(1, 0, 1) },
  } })
  out.suggest_old = { #old, old[3].label }
  -- The code lens commands setup() registered: backlinks into the quickfix list.
  out.lens_commands = {
    references = vim.lsp.commands["zettel.showReferences"] ~= nil,
    suggest = vim.lsp.commands["zettel.suggestLinks"] ~= nil,
  }
  local lenses = require("zettel_lsp.lenses")
  local card = vim.fn.tempname() .. ".md"
  vim.fn.writefile({ "# B", "see [[A]] here", "and [[A]]" }, card)
  local function loc(line, a, b)
    return { uri = vim.uri_from_fname(card),
      range = { start = { line = line, character = a }, ["end"] = { line = line, character = b } } }
  end
  out.lens_items = lenses.show_references({
    title = "2 backlinks",
    command = "zettel.showReferences",
    arguments = { vim.uri_from_fname(card), { line = 0, character = 0 },
      { loc(1, 4, 9), loc(2, 4, 9) } },
  }, {})
  out.lens_qf = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(out.lens_qf, { item.lnum, item.col, item.text })
  end
  out.lens_qf_title = vim.fn.getqflist({ title = 0 }).title
  vim.cmd("cclose")
  out.keymaps = {
    default = config.keymaps({ keymaps = true }),
    off = vim.tbl_count(config.keymaps({ keymaps = false })),
    some = config.keymaps({ keymaps = { references = false, hover = "<leader>k" } }),
  }
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  out.error = tostring(err)
end
vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
vim.cmd("qa!")
"""


def module_names() -> list[str]:
    names = []
    for path in sorted(MODULES.glob("*.lua")):
        names.append("zettel_lsp" if path.stem == "init" else f"zettel_lsp.{path.stem}")
    return names


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("nvim_modules")
    params = {"modules": module_names(), "output": str(work / "out.json")}
    result, diagnostic = run_headless(LUA, params, work, rtp=PLUGIN)
    assert result is not None, diagnostic
    assert "error" not in result, f"{result['error']}\n{diagnostic}"
    return result


def test_init_is_a_thin_entry_over_the_split_modules() -> None:
    lines = len((MODULES / "init.lua").read_text(encoding="utf-8").splitlines())
    assert lines <= INIT_MAX_LINES, f"init.lua has {lines} lines"
    names = set(module_names())
    # the split of editors/vscode/src: client, pickers, search, related, suggestions, hover,
    # the ask window, status; compat.lua stays
    for part in ("client", "pickers", "search", "related", "suggest", "hover", "ask", "status"):
        assert f"zettel_lsp.{part}" in names, sorted(names)
    assert "zettel_lsp.compat" in names


def test_each_module_loads_on_its_own(report: dict[str, Any]) -> None:
    modules = report["modules"]
    assert set(modules) == set(module_names())
    for name, loaded in modules.items():
        assert loaded["ok"], (name, loaded["error"])
        assert loaded["type"] == "table", (name, loaded)
        # loading defines nothing and starts nothing: setup() does that
        assert not [c for c in loaded["commands"] if c.startswith("Zettel")], (name, loaded)
        assert not loaded["augroup"] and loaded["clients"] == 0, (name, loaded)
        if name != "zettel_lsp":
            # no module needs the entry point: it is only the top of the tree
            assert "zettel_lsp" not in loaded["loaded"], (name, loaded["loaded"])
    assert modules["zettel_lsp.util"]["loaded"] == ["zettel_lsp.util"]
    assert modules["zettel_lsp.compat"]["loaded"] == ["zettel_lsp.compat"]
    assert not report["notifications"], report["notifications"]


def test_the_public_api_is_unchanged(report: dict[str, Any]) -> None:
    functions = {key for key, kind in report["api"].items() if kind == "function"}
    assert functions == PUBLIC_FUNCTIONS
    assert report["api"]["commands"] == "table" and report["name"] == "zettel_lsp"
    assert set(report["command_table"]) == COMMANDS
    assert set(report["commands"]) >= COMMANDS
    # .config: the options every module reads; setup() and assignment replace them
    assert report["default_picker"] == "auto" and report["config_is_shared"]
    assert report["cmd_after_setup"] == ["my-zettel-lsp"] and report["shared_after_setup"]
    assert report["assigned_is_read"]


def test_answers_that_need_no_server(report: dict[str, Any]) -> None:
    assert report["formatted"] == (
        "Reciprocal rank fusion [linked] — retrieval: RRF adds 1/(k + rank)"
    )
    assert report["formatted_top"] == "Index — my vault"
    assert report["status_lines"] == [
        "zettel-lsp 9.9: 1 vault(s)",
        "/v: phase ready",
        "  cards 3, chunks -, embedded cards -, chunks waiting for vectors -, cards in graph -",
        "  model -, backend -",
        "  index dir -",
        "  skipped files 1, problems 0",
    ]
    assert report["status_multilingual"][4:8] == [
        "  search legs ready: bm25, dense_ml",
        "  languages: de 5, ru 8",
        "  multilingual: all cards, 13 cards embedded, 0 waiting",
        "  suggestion weights: chosen on this vault's links",
    ]
    assert report["paragraph"] == [4, 5, "first\nsecond"]
    # nil answers: absent from the report
    assert "in_frontmatter" not in report and "blank" not in report


def test_suggestions_list_each_card_once_and_link_confident_below_the_fixes(
    report: dict[str, Any],
) -> None:
    assert report["suggest_choices"] == [
        ["Link 'BM25' → [[BM25]] (2 mentions, from line 4)", 2],
        ["Link 'tools' → [[Tools|tools]] (line 5)", 1],
        ["Link 1 confident mention", 1],
        ["Add related links: TF-IDF", -1],
    ]
    # a server without mention_targets: one choice per mention, then "Link all"
    assert report["suggest_old"] == [3, "Link all unlinked mentions in this note (2)"]


def test_code_lens_commands_run_in_the_editor(report: dict[str, Any]) -> None:
    """setup() registers the server's lens commands with Neovim; "N backlinks" fills the
    quickfix list with the lens's locations (1-based lines and columns)."""
    assert report["lens_commands"] == {"references": True, "suggest": True}
    assert report["lens_items"] == 2
    assert report["lens_qf"] == [[2, 5, "see [[A]] here"], [3, 5, "and [[A]]"]]
    assert report["lens_qf_title"] == "2 backlinks"


def test_modules_read_no_global_state_of_each_other() -> None:
    """Only init.lua assigns the shared options (config.current), through .config."""
    for path in MODULES.glob("*.lua"):
        text = path.read_text(encoding="utf-8")
        if path.name not in ("init.lua", "config.lua"):
            assert "config.current =" not in text, path.name
        if path.name != "init.lua":  # not even lazily, inside a function
            code = "\n".join(
                line for line in text.splitlines() if not line.lstrip().startswith("--")
            )
            assert 'require("zettel_lsp")' not in code, path.name


def test_text_in_floats_is_wrapped_at_word_boundaries(report: dict[str, Any]) -> None:
    assert report["wrapped"] == ["alpha beta", "gamma delta", "epsilon"]
    # only a word longer than a whole line is cut
    assert report["wrapped_long"] == ["a", "verylongwo", "rdthatdoes", "notfit b"]
    assert report["wrapped_max"] == ["  one two", "  three …"]
    # highlights follow the words: (line, start byte, end byte, group)
    assert report["segments"]["lines"] == ["Title words", "· linked"]
    assert report["segments"]["marks"] == [
        [0, 0, 5, "T"],
        [0, 6, 11, "T"],
        [1, 0, 2, "D"],  # "·" is two bytes
        [1, 3, 9, "D"],
    ]


def test_hover_markdown_shows_as_plain_text(report: dict[str, Any]) -> None:
    """No Markdown marks in a float (Neovim 0.7 shows them as written): headings, bold and code
    as their text, quotes indented, code fences dropped, links as titles and folders."""
    lines, marks = report["plain"]
    assert lines == [
        "TF-IDF",
        "retrieval/TF-IDF.md · 2 backlinks",
        "",
        "  Weights",
        "  Raw bm25 and k1 bold em:",
        "    x = 1",
        "",
        "Related",
        "",
        "• Reciprocal rank fusion (…/b/retrieval) · linked — RRF [1]",
        "• Top (v) · not linked — top",
        "pic.png (attachment)",
        "• a [b] (/elsewhere) and web (https://example.org)",
    ], lines
    assert [0, 0, len("TF-IDF"), "ZettelLspHeader"] in marks
    assert [7, 0, len("Related"), "ZettelLspHeader"] in marks
    for line in lines:
        assert not re.match(r"\s*(#|>|```)", line), line
        assert "`" not in line and "**" not in line and "](" not in line, line
    wrapped = report["plain_wrapped"]
    assert all(len(line) <= 40 for line in wrapped), wrapped
    assert all(line.startswith("  word") for line in wrapped[:4]), wrapped
    item = wrapped[wrapped.index("") + 1 :]
    assert item == ["• " + "x" * 38, "  - dash", "  " + "y" * 36], item


def test_related_float_lines(report: dict[str, Any]) -> None:
    """One line per note, at most the float's width: the folder shortened from the left."""
    lines, marks = report["related_lines"]
    assert lines == [
        "Related notes",
        "A rather long title [linked] — …/deeper/deepest: text text…",
        "B — my vault",
    ], lines
    assert [0, 0, len("Related notes"), "ZettelLspHeader"] in marks
    assert [1, 0, len("A rather long title"), "ZettelLspTitle"] in marks
    assert all(len(line) <= 60 for line in lines)


def test_default_keymaps_and_the_option(report: dict[str, Any]) -> None:
    keymaps = report["keymaps"]
    assert keymaps["default"] == {"hover": "K", "definition": "gd", "references": "gr"}
    assert keymaps["off"] == 0
    assert keymaps["some"] == {"hover": "<leader>k", "definition": "gd"}
