"""The Neovim plugin (editors/nvim) end to end: headless Neovim, the real server, a vault copy.

Each test starts ``nvim --headless -u NONE`` with the plugin on 'runtimepath', calls
``require("zettel_lsp").setup(...)`` with this interpreter's ``python -m zettel_lsp`` and
private cache/index folders, opens a card (the plugin's FileType autocommand starts and attaches
the server), waits for ``zettel.status`` to say ``ready``, then drives one of the user commands
with ``vim.ui.select``/``vim.ui.input`` replaced by stubs that record what they were shown and
pick an item. The Lua side writes a JSON report that the assertions below read; when something
is off the failure message carries the report (steps reached, notifications, server messages),
Neovim's own output and the tail of its lsp.log.

Scenarios that need Neovim's own main loop (keys typed as a user types them, CursorMoved and
CursorHold firing by themselves) run as a coroutine: ``idle(ms)`` hands the editor back to its
main loop for a while (``run_session(..., asynchronous=True)``).

Neovim 0.7 (Debian's, ``scripts/setup-neovim.sh``) is what CI runs;
``ZETTEL_TEST_NVIM=/path/to/nvim`` runs the same tests with another build (the plugin
feature-detects the APIs of 0.8 and later), ``ZETTEL_TEST_NVIM_PLUGIN=/path/to/editors/nvim``
against another copy of the plugin (e.g. an older commit's, to see a test fail before a fix).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT, ROOT
from tests.nvim import NVIM, run_headless

PLUGIN = Path(os.environ.get("ZETTEL_TEST_NVIM_PLUGIN") or ROOT / "editors" / "nvim")
pytestmark = pytest.mark.skipif(
    NVIM is None,
    reason="nvim not on PATH (bash scripts/setup-neovim.sh installs Debian's neovim)",
)

READY_TIMEOUT_MS = 180_000
STEP_TIMEOUT_MS = 30_000
QUERY = "fusing ranked lists from BM25 and embeddings"
RRF_CARD = "retrieval/Reciprocal rank fusion.md"
MENTION_CARD = "retrieval/Vector database.md"
MENTION_LINK = "[[Reciprocal rank fusion|reciprocal rank fusion]]"
PROSE_CARD = "retrieval/BM25.md"
PROSE_TEXT = "k1 controls how quickly saturation sets in."

# Common part of every scenario. Inputs come from the JSON file named by $ZETTEL_NVIM_PARAMS;
# everything runs under xpcall, so a Lua error lands in the report's "error" field.
LUA_HARNESS = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local v = vim.version()
local out = {
  nvim = v.major .. "." .. v.minor .. "." .. v.patch,
  steps = {}, notifications = {}, server_messages = {}, select_calls = {}, input_calls = {},
}
local zettel = nil

local function step(name)
  table.insert(out.steps, name)
end

local function write_out()
  vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
end

vim.notify = function(msg, level)
  table.insert(out.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

-- Wait for `cond`, or fail with `what` (and the notifications so far).
local function wait_for(what, cond, timeout)
  if not vim.wait(timeout or P.step_timeout_ms, cond, 50) then
    error("timed out waiting for " .. what .. "; notifications: " .. vim.inspect(out.notifications))
  end
end

local function open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(P.vault .. "/" .. rel))
  return vim.api.nvim_get_current_buf()
end

-- One zettel.* command through the plugin's client, waited for.
local function command(client, bufnr, name, args)
  local done, answer, failure = false, nil, nil
  local params = { command = name, arguments = args and { args } or nil }
  require("zettel_lsp.compat").request(client, "workspace/executeCommand", params,
    function(err, result)
      done, answer, failure = true, result, err
    end, bufnr)
  wait_for(name, function() return done end)
  if failure then
    error(name .. " failed: " .. vim.inspect(failure))
  end
  return answer
end

local function wait_ready(bufnr)
  wait_for("the plugin to attach a client", function()
    local c = zettel.get_client(bufnr)
    return c ~= nil and c.initialized == true
  end, 60000)
  local client = zettel.get_client(bufnr)
  out.client_name = client.name
  out.offset_encoding = client.offset_encoding
  local deadline = vim.loop.hrtime() / 1e6 + P.ready_timeout_ms
  while true do
    local status = command(client, bufnr, "zettel.status")
    out.status = status
    local ready = #(status.vaults or {}) > 0
    for _, vault in ipairs(status.vaults or {}) do
      ready = ready and vault.phase == "ready"
    end
    if ready then
      break
    end
    if vim.loop.hrtime() / 1e6 > deadline then
      error("server not ready in " .. P.ready_timeout_ms .. " ms: " .. vim.inspect(status))
    end
    vim.wait(200)
  end
  step("ready")
  return client
end

-- vim.ui.select stub: record the items as the plugin formats them, pick the first whose text
-- matches `pattern` (a Lua pattern; nil: the first item).
local function stub_select(pattern)
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
    end
    local call = { prompt = opts.prompt, kind = opts.kind, items = shown, raw = items }
    table.insert(out.select_calls, call)
    local pick = nil
    for i, text in ipairs(shown) do
      if pattern == nil or text:find(pattern) then
        pick = i
        break
      end
    end
    call.picked = pick
    on_choice(pick and items[pick] or nil, pick)
  end
end

local function float_windows()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      table.insert(wins, win)
    end
  end
  return wins
end

local function stop_clients()
  local clients = zettel and zettel.clients() or {}
  for _, c in ipairs(clients) do
    vim.lsp.stop_client(c.id)
  end
  out.stopped = vim.wait(15000, function()
    return #zettel.clients() == 0
  end, 50)
end

local scenarios = {}
local extra_handlers = {} -- method -> lsp-handler, added to the client's handlers by scenarios

-- Asynchronous scenarios (run_session(..., asynchronous=True)) run in a coroutine: idle(ms)
-- gives Neovim's main loop `ms` milliseconds (typed keys run, CursorMoved and CursorHold fire by
-- themselves; vim.wait() runs neither). Each wake-up restarts the 'updatetime' wait of
-- CursorHold, so idle_until() polls less often than that.
local resume_scenario = nil -- set by the asynchronous main

local function idle(ms)
  local me = coroutine.running()
  assert(me, "idle() outside an asynchronous scenario")
  vim.defer_fn(function()
    resume_scenario(me)
  end, ms)
  coroutine.yield()
end

local function idle_until(what, cond, timeout, every)
  local deadline = vim.loop.hrtime() / 1e6 + (timeout or P.step_timeout_ms)
  while not cond() do
    if vim.loop.hrtime() / 1e6 > deadline then
      error("timed out waiting for " .. what .. "; notifications: "
        .. vim.inspect(out.notifications))
    end
    idle(every or 300)
  end
end

-- Keys as the user types them (mappings apply); they run once the scenario idles.
local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "t", false)
end

-- The text, size and options of a floating window.
local function float_info(win)
  local buf = vim.api.nvim_win_get_buf(win)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local widths = {}
  for i, line in ipairs(lines) do
    widths[i] = vim.fn.strdisplaywidth(line)
  end
  return {
    lines = lines,
    widths = widths,
    width = vim.api.nvim_win_get_width(win),
    height = vim.api.nvim_win_get_height(win),
    wrap = vim.api.nvim_win_get_option(win, "wrap"),
  }
end

-- Buffer-local Normal-mode mappings of `bufnr`: lhs -> desc (or rhs).
local function buffer_maps(bufnr)
  local maps = {}
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(bufnr, "n")) do
    maps[m.lhs] = m.desc or m.rhs or ""
  end
  return maps
end
"""

LUA_MAIN = r"""
local function main()
  vim.cmd("filetype on")
  zettel = require("zettel_lsp")
  local handlers = {
    ["window/showMessage"] = function(_, result)
      table.insert(out.server_messages, result)
    end,
  }
  for method, handler in pairs(extra_handlers) do
    handlers[method] = handler
  end
  -- P.setup: more options for setup() (settings, ask_window, ...)
  zettel.setup(vim.tbl_extend("force", {
    cmd = P.cmd,
    init_options = { cacheDir = P.cache_dir, indexDir = P.index_dir },
    hover_suggestions = P.hover_suggestions or false,
    handlers = handlers,
  }, P.setup or {}))
  step("setup")
  scenarios[P.scenario]()
  step("done")
  stop_clients()
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  out.error = tostring(err)
  pcall(stop_clients)
end
local wrote, werr = pcall(write_out)
if not wrote then
  io.stderr:write("writing the report failed: " .. tostring(werr) .. "\n")
end
vim.cmd("qa!")
"""

SEARCH_SCENARIO = r"""
scenarios.search = function()
  local bufnr = open(P.start_card)
  local client = wait_ready(bufnr)

  stub_select(nil)
  vim.cmd("ZettelSearch " .. P.query)
  wait_for("the search result to open", function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), P.expect_suffix)
  end)
  step("search opened a card")
  local call = out.select_calls[1]
  out.first_row = call.raw[1]
  call.raw = nil
  out.buffer = vim.api.nvim_buf_get_name(0)
  out.cursor = vim.api.nvim_win_get_cursor(0)
  wait_for("the opened card to get the client", function()
    return zettel.get_client(0) ~= nil
  end)
  out.same_client = zettel.get_client(0).id == client.id

  -- Without a query the plugin asks for one with vim.ui.input.
  vim.ui.input = function(opts, on_confirm)
    table.insert(out.input_calls, opts.prompt)
    on_confirm(P.query)
  end
  vim.cmd("ZettelSearch")
  wait_for("a second picker", function() return #out.select_calls == 2 end)
  out.select_calls[2].raw = nil

  -- A server error reaches the user as a notification, not as a Lua error.
  zettel.execute(client, 0, "zettel.noSuchCommand", { query = "x" }, function(result)
    out.bogus_result = result
  end)
  wait_for("the error notification", function()
    return #out.notifications > 0
  end)

  vim.cmd("ZettelStatus")
  wait_for(":ZettelStatus output", function()
    for _, n in ipairs(out.notifications) do
      if n.msg:find("phase") then
        out.status_text = n.msg
        return true
      end
    end
    return false
  end)
end
"""

SUGGEST_SCENARIO = r"""
scenarios.suggest = function()
  local bufnr = open(P.card)
  wait_ready(bufnr)

  stub_select(P.pick)
  vim.cmd("ZettelSuggestLinks")
  wait_for("the link to appear in the buffer", function()
    for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
      if line:find(P.expect, 1, true) then
        out.linked_line = line
        return true
      end
    end
    return false
  end)
  step("mention linked")
  out.select_calls[1].raw = nil
  out.modified = vim.bo[bufnr].modified
  out.buffer = vim.api.nvim_buf_get_name(0)

  -- The "Add related links" entry goes through codeAction (+ codeAction/resolve).
  stub_select("^Add related links")
  vim.cmd("ZettelSuggestLinks")
  wait_for("a Related section in the buffer", function()
    for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
      if line == P.related_heading then
        return true
      end
    end
    return false
  end)
  step("related links added")
  out.select_calls[2].raw = nil
  out.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end
"""

RELATED_SCENARIO = r"""
scenarios.related = function()
  -- A Markdown file outside every vault: no client, a clear message.
  vim.cmd("edit " .. vim.fn.fnameescape(P.outside))
  vim.cmd("ZettelRelated")
  out.outside_notifications = vim.deepcopy(out.notifications)

  local bufnr = open(P.card)
  wait_ready(bufnr)
  local source_win = vim.api.nvim_get_current_win()
  local line = vim.fn.search(vim.fn.escape(P.prose, "\\.*[]~^$"), "w")
  if line == 0 then
    error("prose text not found in " .. P.card)
  end
  out.prose_line = line

  vim.cmd("ZettelRelated")
  wait_for("the location list", function()
    return #vim.fn.getloclist(source_win) > 0
  end)
  step("location list filled")
  out.loclist_title = vim.fn.getloclist(source_win, { title = 1 }).title
  out.loclist = {}
  for _, item in ipairs(vim.fn.getloclist(source_win)) do
    table.insert(out.loclist, {
      file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, text = item.text,
    })
  end
  out.list_window_buftype = vim.bo.buftype
  -- Choosing an entry (as <CR> in the list would) opens that note at that line.
  vim.cmd("wincmd p")
  vim.cmd("ll 1")
  out.opened = vim.api.nvim_buf_get_name(0)
  out.opened_cursor = vim.api.nvim_win_get_cursor(0)
  vim.cmd("lclose")

  -- Hover suggestions: CursorHold in a paragraph shows related notes in a float.
  vim.o.lines = 50 -- room for every line of it
  vim.cmd("buffer " .. bufnr)
  -- (vim.wait() runs no CursorMoved: send them as the main loop would) the move :buffer made,
  -- a jump, then an ordinary one to the paragraph (the float waits for one after a jump)
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
  vim.api.nvim_exec_autocmds("CursorHold", { buffer = bufnr })
  wait_for("the related-notes float", function() return #float_windows() > 0 end)
  step("float shown")
  local float = float_windows()[1]
  out.float_lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
  out.float = float_info(float)
  -- Moving the cursor closes it.
  vim.api.nvim_win_set_cursor(0, { line, 3 })
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
  wait_for("the float to close", function() return #float_windows() == 0 end)
  step("float closed")
  -- The same paragraph again: nothing new to show.
  vim.api.nvim_exec_autocmds("CursorHold", { buffer = bufnr })
  vim.wait(1500, function() return #float_windows() > 0 end, 50)
  out.float_on_same_paragraph = #float_windows()
  -- Another paragraph: a new float.
  vim.api.nvim_win_set_cursor(0, { P.other_line, 0 })
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
  vim.api.nvim_exec_autocmds("CursorHold", { buffer = bufnr })
  wait_for("a float for another paragraph", function() return #float_windows() > 0 end)
  out.float_on_other_paragraph = #float_windows()

  -- New settings reach the server (workspace/didChangeConfiguration): hoverLimit caps the list.
  zettel.update_settings({ hoverLimit = 2 })
  vim.fn.setloclist(source_win, {}, "r", { items = {} })
  vim.api.nvim_set_current_win(source_win)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.cmd("ZettelRelated")
  wait_for("the shorter location list", function()
    return #vim.fn.getloclist(source_win) > 0
  end)
  out.loclist_after_settings = #vim.fn.getloclist(source_win)
end
"""


LUA_MAIN_ASYNC = r"""
local finished = false
local function finish(err)
  if finished then
    return
  end
  finished = true
  if err then
    out.error = tostring(err)
  end
  pcall(stop_clients)
  local wrote, werr = pcall(write_out)
  if not wrote then
    io.stderr:write("writing the report failed: " .. tostring(werr) .. "\n")
  end
  vim.cmd("qa!")
end

resume_scenario = function(co)
  local ok, err = coroutine.resume(co)
  if not ok then
    finish(debug.traceback(co, err))
  elseif coroutine.status(co) == "dead" then
    finish()
  end
end

local function main()
  vim.cmd("filetype on")
  zettel = require("zettel_lsp")
  local handlers = {
    ["window/showMessage"] = function(_, result)
      table.insert(out.server_messages, result)
    end,
  }
  zettel.setup(vim.tbl_extend("force", {
    cmd = P.cmd,
    init_options = { cacheDir = P.cache_dir, indexDir = P.index_dir },
    hover_suggestions = P.hover_suggestions or false,
    handlers = handlers,
  }, P.setup or {}))
  step("setup")
  scenarios[P.scenario]()
  step("done")
end

resume_scenario(coroutine.create(main))
"""


KEYS_SCENARIO = r"""
-- K, gd and gr typed as keys in a note, with nothing but setup({cmd = ...}) (asynchronous).
scenarios.keys = function()
  vim.o.lines = 50 -- room for every line of K's float
  local bufnr = open(P.card)
  wait_ready(bufnr)
  out.maps = buffer_maps(bufnr)
  vim.api.nvim_win_set_cursor(0, { P.link_line, P.link_col })

  type_keys("K")
  idle_until("K's float", function() return #float_windows() > 0 end)
  idle(300) -- the float is complete
  step("K float")
  out.k_float = float_info(float_windows()[1])
  -- what the server sent, as the plugin shows it before wrapping
  local c = zettel.get_client(bufnr)
  local resp = vim.lsp.buf_request_sync(bufnr, "textDocument/hover",
    vim.lsp.util.make_position_params(), 10000)
  local raw = resp and resp[c.id] and resp[c.id].result
  out.k_raw = raw and raw.contents.value or nil
  out.k_display = out.k_raw and require("zettel_lsp.plain").lines(out.k_raw,
    c.config.root_dir, 100000) or nil

  type_keys("gd")
  idle_until("gd to open the linked note", function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), P.target)
  end)
  step("gd")
  out.gd_cursor = vim.api.nvim_win_get_cursor(0)
  idle_until("the float to close", function() return #float_windows() == 0 end)

  wait_for("the client on the linked note", function() return zettel.get_client(0) ~= nil end)
  type_keys("gr")
  idle_until("gr to fill the quickfix list", function() return #vim.fn.getqflist() > 0 end)
  step("gr")
  out.references = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(out.references, vim.api.nvim_buf_get_name(item.bufnr))
  end
end
"""

JUMP_SCENARIO = r"""
-- Hover suggestions and jumps (asynchronous): CursorMoved and CursorHold come from Neovim.
scenarios.jump = function()
  vim.o.lines = 50
  vim.o.updatetime = P.updatetime
  local holds = 0
  vim.api.nvim_create_autocmd("CursorHold", { callback = function() holds = holds + 1 end })
  local bufnr = open(P.card)
  wait_ready(bufnr)
  vim.api.nvim_win_set_cursor(0, { P.link_line, P.link_col })
  local slow = P.updatetime + 200 -- polls slower than 'updatetime' let CursorHold come
  -- resting in the paragraph: its related notes
  idle_until("the related-notes float", function() return #float_windows() > 0 end, nil, slow)
  step("float before the jump")
  out.holds_before_jump = holds

  -- typed (a CursorHold only comes after a key), without the plugin's gd mapping; the quick
  -- polls hold CursorHold back until the jump is done, as a server that answers within
  -- 'updatetime' does
  type_keys("<Cmd>lua vim.lsp.buf.definition()<CR>")
  idle_until("the jump", function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), P.target)
  end, nil, 50)
  step("jumped")
  out.jump_cursor = vim.api.nvim_win_get_cursor(0)
  local at_jump = holds
  -- resting where the jump went: several CursorHold, no float
  idle(P.settle_ms)
  out.holds_after_jump = holds - at_jump
  out.floats_after_jump = #float_windows()

  -- an ordinary move into a paragraph: the float is back
  type_keys(P.down .. "j")
  idle_until("the float after a move", function() return #float_windows() > 0 end, nil, slow)
  step("float after a move")
  idle(300)
  out.cursor_after_move = vim.api.nvim_win_get_cursor(0)
  local float = float_windows()[1]
  out.float = float and float_info(float) or nil

  -- K while the suggestions show: K's float replaces them and stays through the next hold
  vim.api.nvim_win_set_cursor(0, { P.other_link_line, P.other_link_col })
  type_keys("K")
  idle(P.settle_ms)
  local floats = float_windows()
  out.floats_after_k = #floats
  out.float_after_k = floats[1] and float_info(floats[1]) or nil
end
"""

KEYMAP_OPTIONS_SCENARIO = r"""
-- keymaps = { definition = "<leader>d", references = false }; a K of the user's own (synchronous).
scenarios.keymap_options = function()
  vim.g.mapleader = ","
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "markdown",
    callback = function(args)
      vim.keymap.set("n", "K", "<Cmd>echo 'mine'<CR>", { buffer = args.buf, desc = "my K" })
    end,
  })
  local bufnr = open(P.card)
  wait_for("the mappings", function() return vim.fn.maparg(",d", "n") ~= "" end, 60000)
  out.maps = buffer_maps(bufnr)

  -- a Markdown file outside every vault: no client, no mappings of the plugin
  vim.cmd("edit " .. vim.fn.fnameescape(P.outside))
  vim.wait(500)
  out.outside_maps = buffer_maps(vim.api.nvim_get_current_buf())

  -- keymaps = false: nothing is mapped in a note opened afterwards
  zettel.config.keymaps = false
  local other = open(P.other_card)
  wait_for("the client on the other note", function()
    local c = zettel.get_client(other)
    return c ~= nil and c.initialized == true
  end, 60000)
  vim.wait(500)
  out.maps_without_keymaps = buffer_maps(other)
end
"""


def find_line(text: str, needle: str) -> int:
    """The 1-based line number of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not found")


def run_session(
    work: Path, params: dict[str, Any], scenarios: str = "", *, asynchronous: bool = False
) -> tuple[dict[str, Any], str]:
    """Run one scenario in headless Neovim; (its report, a diagnostic text for failures).

    ``scenarios``: more Lua scenario definitions (``scenarios.name = function() ... end``).
    ``asynchronous``: the scenario runs as a coroutine that may ``idle(ms)``."""
    script = (
        LUA_HARNESS
        + SEARCH_SCENARIO
        + SUGGEST_SCENARIO
        + RELATED_SCENARIO
        + KEYS_SCENARIO
        + JUMP_SCENARIO
        + KEYMAP_OPTIONS_SCENARIO
        + scenarios
    )
    params = {
        "cmd": [sys.executable, "-m", "zettel_lsp"],
        "cache_dir": str(work / "cache"),
        "index_dir": str(work / "index"),
        "output": str(work / "out.json"),
        "ready_timeout_ms": READY_TIMEOUT_MS,
        "step_timeout_ms": STEP_TIMEOUT_MS,
        **params,
    }
    main = LUA_MAIN_ASYNC if asynchronous else LUA_MAIN
    report, diagnostic = run_headless(
        script + main, params, work, rtp=PLUGIN, quit=not asynchronous
    )
    assert report is not None, f"the Lua script wrote no report\n{diagnostic}"
    diagnostic = f"report: {json.dumps(report, indent=1, ensure_ascii=False)[-6000:]}\n{diagnostic}"
    assert "error" not in report, f"Lua error: {report['error']}\n{diagnostic}"
    assert report["steps"][-1] == "done", diagnostic
    assert report.get("stopped"), f"the server did not stop\n{diagnostic}"
    return report, diagnostic


def make_vault(work: Path) -> Path:
    """A copy of examples/vault with an .obsidian folder (the plugin's root marker)."""
    vault = work / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / ".obsidian").mkdir()
    return vault


def server_errors(report: dict[str, Any]) -> list[Any]:
    """window/showMessage errors and warnings (bad settings would show up here)."""
    return [m for m in report["server_messages"] if m.get("type") in (1, 2)]


def plugin_errors(report: dict[str, Any]) -> list[Any]:
    return [n for n in report["notifications"] if n["level"] >= 3]  # WARN and ERROR


def test_search_opens_the_chosen_card_at_its_line(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "search",
            "vault": str(vault),
            "start_card": "retrieval/BM25.md",
            "query": QUERY,
            "expect_suffix": RRF_CARD,
        },
    )
    assert report["client_name"] == "zettel_lsp", diagnostic
    assert not server_errors(report), diagnostic
    [bogus] = plugin_errors(report)
    assert bogus["level"] == 4, bogus  # vim.log.levels.ERROR
    assert bogus["msg"].startswith("zettel-lsp: zettel.noSuchCommand failed: "), bogus
    assert "bogus_result" not in report

    first_call = report["select_calls"][0]
    assert first_call["prompt"] == f"Zettel search: {QUERY}", diagnostic
    items = first_call["items"]
    # "title [relation to the note searched from] — folder: excerpt", the expected card first;
    # BM25.md (where the search started) links to it
    assert "Reciprocal rank fusion" in items[0], diagnostic
    assert items[0].startswith("Reciprocal rank fusion [linked] — retrieval: "), diagnostic
    assert first_call["picked"] == 1
    assert len(items) > 1 and all(" — " in item and ": " in item for item in items), items

    row = report["first_row"]
    assert row["title"] == "Reciprocal rank fusion"
    assert Path(report["buffer"]).resolve() == (vault / RRF_CARD).resolve(), diagnostic
    assert report["cursor"][0] == row["line_start"] + 1, diagnostic
    card_lines = (vault / RRF_CARD).read_text(encoding="utf-8").splitlines()
    assert card_lines[row["line_start"]] == "## " + row["heading"], (row, diagnostic)
    assert report["same_client"], "the opened card should reuse the vault's client"

    # :ZettelSearch without a query asks with vim.ui.input and shows the same list (asked from
    # the opened card this time, so the relations differ)
    assert report["input_calls"] == ["Zettel search: "], diagnostic

    def without_relation(item: str) -> str:
        """Title and folder (the excerpt gets the room a relation leaves)."""
        item = re.sub(r" \[(linked|backlink|2 hops|not linked)\] — ", " — ", item)
        return item.split(": ", 1)[0]

    again = report["select_calls"][1]["items"]
    assert [without_relation(i) for i in again] == [without_relation(i) for i in items]

    status = report["status_text"]
    assert f"{vault.resolve()}: phase ready" in status, status
    assert "cards " in status and "chunks " in status and "index dir " in status, status
    assert str(tmp_path / "index") in status, status


def test_suggest_links_applies_the_chosen_fix_to_the_buffer(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    before = (vault / MENTION_CARD).read_text(encoding="utf-8")
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "suggest",
            "vault": str(vault),
            "card": MENTION_CARD,
            "pick": "^Link 'reciprocal rank fusion'",
            "expect": MENTION_LINK,
            "related_heading": "## Related",
        },
    )
    assert not server_errors(report), diagnostic
    assert not plugin_errors(report), diagnostic
    labels = report["select_calls"][0]["items"]
    picked = labels[report["select_calls"][0]["picked"] - 1]
    assert picked.startswith(f"Link 'reciprocal rank fusion' → {MENTION_LINK} (line "), labels
    assert any(label.startswith("Add related links: ") for label in labels), labels

    # the edit is in the buffer: the sentence now links, nothing else on the line changed
    expected_line = next(
        line.replace("reciprocal rank fusion", MENTION_LINK)
        for line in before.splitlines()
        if "reciprocal rank fusion" in line
    )
    assert report["linked_line"] == expected_line, diagnostic
    assert report["modified"] is True
    assert Path(report["buffer"]).resolve() == (vault / MENTION_CARD).resolve()

    # "Add related links" appended a Related section with wikilinks, after the fix above
    lines = report["lines"]
    heading = lines.index("## Related")
    items = [line for line in lines[heading + 1 :] if line.strip()]
    assert items and all(line.startswith("- [[") for line in items), lines
    assert expected_line in lines

    # ... and only in the buffer: the server never writes, nor does the plugin
    assert (vault / MENTION_CARD).read_text(encoding="utf-8") == before


def test_related_lists_notes_and_hover_mode_shows_them(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    outside = tmp_path / "outside" / "loose note.md"
    outside.parent.mkdir()
    outside.write_text("# Loose\n\nNot in a vault.\n", encoding="utf-8")
    prose = (vault / PROSE_CARD).read_text(encoding="utf-8")
    heading_line = find_line(prose, "# BM25")  # a different, non-blank paragraph
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "related",
            "vault": str(vault),
            "card": PROSE_CARD,
            "prose": PROSE_TEXT,
            "other_line": heading_line,
            "outside": str(outside),
            "hover_suggestions": True,
        },
    )
    # No client outside a vault: a clear error, not a Lua traceback; nothing else complained.
    outside_msgs = report["outside_notifications"]
    assert report["notifications"] == outside_msgs, diagnostic
    assert len(outside_msgs) == 1, outside_msgs
    assert outside_msgs[0]["level"] == 4  # vim.log.levels.ERROR
    assert "no zettel-lsp server is attached to this buffer" in outside_msgs[0]["msg"]
    assert ".obsidian" in outside_msgs[0]["msg"]

    assert not server_errors(report), diagnostic
    assert report["prose_line"] == find_line(prose, PROSE_TEXT)
    items = report["loclist"]
    assert items, diagnostic
    title = report["loclist_title"]
    assert title.startswith("Related notes for the paragraph at line "), title
    assert title.endswith(" of BM25.md"), title
    assert report["list_window_buftype"] == "quickfix"
    for item in items:
        path = Path(item["file"])
        assert path.is_file() and vault.resolve() in path.resolve().parents, item
        assert path.resolve() != (vault / PROSE_CARD).resolve(), "the note itself is not related"
        assert " [" in item["text"] and "] — " in item["text"], item
        assert item["lnum"] >= 1
        # the entry's line is the first line of the passage the excerpt starts with
        first_line = path.read_text(encoding="utf-8").splitlines()[item["lnum"] - 1]
        excerpt = item["text"].split("] — ", 1)[1]
        passage_start = first_line.lstrip("#").strip()
        assert passage_start, (first_line, item)
        assert excerpt.startswith("…") or excerpt.startswith(passage_start[:40]), (first_line, item)
    relations = {item["text"].split(" [", 1)[1].split("]", 1)[0] for item in items}
    assert relations <= {"linked", "backlink", "2 hops", "not linked"}, relations
    # the paragraph is about BM25's saturation: TF-IDF (which links to it) is among the notes
    assert any(item["text"].startswith("TF-IDF [") for item in items), items

    first = items[0]
    assert Path(report["opened"]).resolve() == Path(first["file"]).resolve(), diagnostic
    assert report["opened_cursor"][0] == first["lnum"], diagnostic

    float_text = "\n".join(report["float_lines"])
    assert "Related notes" in float_text, float_text
    titles = [item["text"].split(" [", 1)[0] for item in items]
    assert titles[0] in float_text, (titles, float_text)
    # one line per note: title, relation, the card's folder (the vault's name at its top)
    first_rel = Path(items[0]["file"]).resolve().relative_to(vault.resolve())
    folder = first_rel.parent.as_posix() if first_rel.parent != Path(".") else vault.name
    assert report["float_lines"][1].startswith(f"{titles[0]} ["), float_text
    assert f"] — {folder}" in report["float_lines"][1], float_text
    assert len(report["float_lines"]) == 1 + len(items), float_text
    assert_fits(report["float"], diagnostic)
    assert report["float_on_same_paragraph"] == 0, "the same paragraph was asked about twice"
    assert report["float_on_other_paragraph"] == 1, diagnostic
    assert len(items) == 5  # the server's default hoverLimit
    assert report["loclist_after_settings"] == 2, diagnostic


def test_help_file_tags_are_valid(tmp_path: Path) -> None:
    """:helptags accepts doc/zettel_lsp.txt (no duplicate tags) and every command has a tag."""
    assert NVIM is not None
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-c",
            f"helptags {doc}",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    messages = proc.stdout + proc.stderr
    assert proc.returncode == 0 and not re.search(r"E\d+:", messages), messages
    tags = {line.split("\t", 1)[0] for line in (doc / "tags").read_text().splitlines()}
    for name in ("ZettelSearch", "ZettelRelated", "ZettelSuggestLinks", "ZettelAsk"):
        assert f":{name}" in tags, tags
    for tag in ("zettel_lsp", ":ZettelReindex", ":ZettelStatus", "zettel_lsp-setup"):
        assert tag in tags, tags
    assert "zettel_lsp-troubleshooting" in tags and "zettel_lsp-ollama" in tags


# ---------------------------------------------------------------- K, gd, gr; floats; jumps

LINK_CARD = PROSE_CARD  # BM25.md: "In classic [[TF-IDF]] the weight grows ..."
LINK_TARGET = "retrieval/TF-IDF.md"


def link_position(text: str, needle: str = "[[TF-IDF]]") -> tuple[int, int]:
    """(1-based line, 0-based byte column) of the middle of ``needle``'s target."""
    line = find_line(text, needle)
    col = text.splitlines()[line - 1].encode("utf-8").index(needle.encode("utf-8"))
    return line, col + 4


def assert_fits(float_info: dict[str, Any], diagnostic: str) -> None:
    """A float sized to its text: as wide as its widest line (no soft wrap, nothing cut off at
    the right or with "@@@" at the bottom), as high as its lines, at most 80 cells of text."""
    width, lines, widths = float_info["width"], float_info["lines"], float_info["widths"]
    assert lines and float_info["height"] == len(lines), (float_info, diagnostic)
    assert max(widths) == width <= 80, (float_info, diagnostic)
    assert not float_info["wrap"], float_info


def test_k_gd_gr_work_with_the_documented_setup(tmp_path: Path) -> None:
    """setup({cmd = ...}) alone: K shows the link's preview (titles and vault-relative paths,
    wrapped at word boundaries, sized to its text), gd follows the link, gr lists backlinks.
    On 0.7 these keys did nothing useful before (a man page, a Vim search)."""
    vault = make_vault(tmp_path)
    line, col = link_position((vault / LINK_CARD).read_text(encoding="utf-8"))
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "keys",
            "vault": str(vault),
            "card": LINK_CARD,
            "link_line": line,
            "link_col": col,
            "target": LINK_TARGET,
        },
        asynchronous=True,
    )
    assert not server_errors(report) and not plugin_errors(report), diagnostic
    maps = report["maps"]
    for lhs in ("K", "gd", "gr"):
        assert maps.get(lhs, "").startswith("zettel-lsp: "), (lhs, maps)

    k_float = report["k_float"]
    text = "\n".join(k_float["lines"])
    assert "file:" not in text and "%20" not in text, text
    # plain text: the title without "###", no backticks, no "> " before the preview
    assert k_float["lines"][0] == "TF-IDF", text
    assert f"\n{LINK_TARGET} · " in text, text  # the server's line under the title
    assert "`" not in text and "**" not in text and not re.search(r"(?m)^\s*(#|>)", text), text
    # similar notes: "• title (folder) · relation — excerpt"
    assert re.search(r"(?m)^• [^(]+ \([^)]+\) · (linked|backlink|2 hops|not linked) — ", text)
    assert_fits(k_float, diagnostic)
    # every word of what the server said, once, in order: none split, none cut off
    raw = report["k_raw"]
    assert raw and "file://" in raw, raw
    expected = " ".join(report["k_display"]).split()
    assert " ".join(k_float["lines"]).split() == expected, (k_float["lines"], expected)

    assert report["gd_cursor"] == [1, 0], diagnostic
    references = {Path(name).resolve() for name in report["references"]}
    assert (vault / LINK_CARD).resolve() in references, report["references"]


def test_hover_suggestions_wait_for_an_ordinary_move_after_a_jump(tmp_path: Path) -> None:
    """CursorHold right after a jump (here to a heading, a paragraph of its own) shows no
    related-notes float; after the next ordinary move it does, sized to its text with
    vault-relative paths. K's float is not replaced by it."""
    vault = make_vault(tmp_path)
    source = (vault / LINK_TARGET).read_text(encoding="utf-8")  # TF-IDF.md links to BM25
    line, col = link_position(source, "[[BM25#Saturation and the k1 parameter]]")
    bm25 = (vault / LINK_CARD).read_text(encoding="utf-8")
    heading_line = find_line(bm25, "## Saturation and the k1 parameter")
    prose_line = find_line(bm25, "In classic [[TF-IDF]]")
    other_line, other_col = link_position(bm25, "[[Reciprocal rank fusion]]")
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "jump",
            "vault": str(vault),
            "card": LINK_TARGET,
            "link_line": line,
            "link_col": col,
            "target": LINK_CARD,
            "down": str(prose_line - heading_line),
            "other_link_line": other_line,
            "other_link_col": other_col,
            "updatetime": 500,
            "settle_ms": 2000,
            "hover_suggestions": True,
            # no background self-tune: its progress messages wake the editor more often than
            # 'updatetime' on a loaded machine, and CursorHold never comes
            "setup": {"settings": {"suggestSelfTune": False}},
        },
        asynchronous=True,
    )
    assert not server_errors(report) and not plugin_errors(report), diagnostic
    assert report["holds_before_jump"] >= 1, diagnostic
    assert report["holds_after_jump"] >= 1, "CursorHold should have fired after the jump"
    assert report["jump_cursor"][0] == heading_line, diagnostic
    assert report["floats_after_jump"] == 0, "the related-notes float opened right after gd"

    assert report["cursor_after_move"][0] == prose_line, diagnostic
    float_info = report["float"]
    lines = float_info["lines"]
    assert lines[0] == "Related notes", lines
    text = "\n".join(lines)
    assert "file:" not in text and "%20" not in text, text
    # each note on one line: "title [relation] — folder: excerpt"
    folders = [re.match(r"[^\[]+ \[[^\]]+\] — ([^:]+)", ln) for ln in lines[1:]]
    assert folders and all(
        m and (m.group(1) == vault.name or (vault / m.group(1)).is_dir()) for m in folders
    ), text
    assert_fits(float_info, diagnostic)

    assert report["floats_after_k"] == 1, diagnostic
    assert report["float_after_k"]["lines"][0] == "Reciprocal rank fusion", report["float_after_k"]


def test_keymaps_option_and_mappings_of_the_user(tmp_path: Path) -> None:
    """keymaps = { definition = "<leader>d", references = false }: K stays the user's own
    (mapped before the server attached), gd moves to <leader>d, gr is not mapped; nothing is
    mapped outside a vault, and keymaps = false maps nothing."""
    vault = make_vault(tmp_path)
    outside = tmp_path / "outside" / "loose note.md"
    outside.parent.mkdir()
    outside.write_text("# Loose\n\nNot in a vault.\n", encoding="utf-8")
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "keymap_options",
            "vault": str(vault),
            "card": LINK_CARD,
            "other_card": LINK_TARGET,
            "outside": str(outside),
            "setup": {"keymaps": {"definition": "<leader>d", "references": False}},
        },
    )
    maps = report["maps"]
    assert maps.get("K") == "my K", (maps, diagnostic)
    assert maps.get(",d", "").startswith("zettel-lsp: "), maps
    assert "gd" not in maps and "gr" not in maps, maps

    def plugin_maps(m: dict[str, str]) -> list[str]:
        return [lhs for lhs, desc in m.items() if desc.startswith("zettel-lsp: ")]

    assert plugin_maps(report["outside_maps"]) == [], report["outside_maps"]
    assert report["outside_maps"].get("K") == "my K"
    assert plugin_maps(report["maps_without_keymaps"]) == [], report["maps_without_keymaps"]


def test_helptags_output_is_ignored_by_git() -> None:
    """:helptags (lazy.nvim, packer, :helptags ALL) writes editors/nvim/doc/tags: not a change
    to commit."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(
        [git, "check-ignore", "-q", "editors/nvim/doc/tags"], cwd=ROOT, capture_output=True
    )
    assert proc.returncode == 0, "editors/nvim/doc/tags is not ignored (.gitignore)"
