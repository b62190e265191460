-- The plugin's floating windows next to the cursor:
--   K (M.hover): the server's textDocument/hover as plain text (plain.lua: no Markdown marks,
--     links as titles and folders), wrapped at word boundaries;
--   hover suggestions (option `hover_suggestions`): related notes for the paragraph under the
--     cursor on CursorHold, one line each, but not when the cursor got there by a jump (gd,
--     <C-o>, a search, another file) and not over another float (K's, a picker, :ZettelAsk's).
-- Both are sized to their text (never wider than MAX_WIDTH) and closed when the cursor moves.
local client = require("zettel_lsp.client")
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local plain = require("zettel_lsp.plain")
local related = require("zettel_lsp.related")
local results = require("zettel_lsp.results")
local util = require("zettel_lsp.util")

local M = {}

M.MAX_WIDTH = 80 -- screen cells of text in a float (less in a narrow window)
M.MAX_HEIGHT = 20 -- lines of the related-notes float (less on a short screen)
M.HOVER_MAX_HEIGHT = 30 -- lines of K's float (less on a short screen; K again enters it)
M.RELATED_FOCUS_ID = "zettel_lsp_related"
M.HOVER_FOCUS_ID = "textDocument/hover" -- as Neovim's own hover: K twice enters the float

local hover_state = {} -- bufnr -> { text = last paragraph asked about, seq = n, request = id }
local hover_seq = 0
local moves = {} -- window -> { buf, jumps = jumplist signature, jumped = bool } at the last move
local namespace = nil

-- ---------------------------------------------------------------------------- floats

local function define_highlights()
  if namespace then
    return namespace
  end
  namespace = vim.api.nvim_create_namespace("zettel_lsp_float")
  for group, link in pairs({
    ZettelLspHeader = "Title",
    ZettelLspTitle = "Title",
    ZettelLspDetail = "Comment",
    ZettelLspPath = "Directory",
  }) do
    vim.cmd(string.format("highlight default link %s %s", group, link))
  end
  return namespace
end

--- The width the text of a float is wrapped at: MAX_WIDTH, less in a narrow window (room for
--- the border).
function M.wrap_width()
  return math.max(20, math.min(M.MAX_WIDTH, vim.api.nvim_win_get_width(0) - 4))
end

local function max_height(limit)
  return math.max(3, math.min(limit or M.MAX_HEIGHT, vim.o.lines - 6))
end

--- Open `lines` (already wrapped) in a float next to the cursor, exactly as wide and as high as
--- its lines (up to `limit` lines and the screen; no soft wrapping, so no word is split and
--- nothing is cut off with "@@@"; more lines scroll). `marks`: highlights from
--- util.wrap_segments. Returns (buf, win), or nil when the call only went into an open float of
--- the same focus_id (K twice).
local function open_float(lines, syntax, opts, marks, limit)
  local from = vim.api.nvim_get_current_win()
  local float_opts = vim.tbl_extend("force", {
    border = "rounded",
    wrap = false,
    width = math.max(1, util.max_width(lines)),
    height = math.min(math.max(#lines, 1), max_height(limit)),
  }, opts)
  local buf, win = vim.lsp.util.open_floating_preview(lines, syntax, float_opts)
  if vim.api.nvim_get_current_win() ~= from or not (win and vim.api.nvim_win_is_valid(win))
    or vim.api.nvim_win_get_config(win).relative == "" then
    return nil
  end
  -- Markdown styling may have dropped lines (blank lines collapsed, a code fence removed):
  -- shrink the window to what its buffer holds (never grow it past the room Neovim gave it).
  local shown = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local width = math.max(1, math.min(util.max_width(shown), vim.api.nvim_win_get_width(win)))
  local height = math.max(1, math.min(#shown, vim.api.nvim_win_get_height(win)))
  if width ~= vim.api.nvim_win_get_width(win) or height ~= vim.api.nvim_win_get_height(win) then
    pcall(vim.api.nvim_win_set_config, win, { width = width, height = height })
  end
  if marks and #marks > 0 then
    local ns = define_highlights()
    for _, m in ipairs(marks) do
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, m[1], m[2], { end_col = m[3], hl_group = m[4] })
    end
  end
  return buf, win
end

--- Whether a focusable floating window other than the related-notes one is open in this tab
--- page: K's hover, a diagnostic, the :ZettelAsk answer, a picker (telescope, dressing, fzf-lua).
--- The related-notes float never opens over one of them.
local function other_float_open(state)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local cfg = vim.api.nvim_win_get_config(win)
    if cfg.relative ~= "" and cfg.focusable ~= false and win ~= (state and state.float) then
      return true
    end
  end
  return false
end

--- Close the related-notes float wherever it is open (a picker is about to open).
function M.close_related()
  for _, state in pairs(hover_state) do
    if state.float and vim.api.nvim_win_is_valid(state.float) then
      pcall(vim.api.nvim_win_close, state.float, true)
    end
    state.float = nil
  end
end

-- ---------------------------------------------------------------------------- K: hover

M.vault_path = plain.vault_path

local function markdown_of(result)
  if type(result) ~= "table" or result.contents == nil then
    return ""
  end
  local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
  return vim.trim(table.concat(lines, "\n"))
end

local function root_of(c)
  local root = c and c.config and c.config.root_dir
  if (root == nil or root == "") and c and type(c.workspace_folders) == "table"
    and c.workspace_folders[1] then
    root = vim.uri_to_fname(c.workspace_folders[1].uri)
  end
  return root
end

--- Show a textDocument/hover answer of client `c` for `bufnr` (if it is still the current
--- buffer).
function M.show_hover(err, result, bufnr, c)
  if err then
    util.notify("hover failed: " .. util.err_text(err), vim.log.levels.WARN)
    return
  end
  if vim.api.nvim_get_current_buf() ~= bufnr then
    return
  end
  local markdown = markdown_of(result)
  if markdown == "" then
    util.notify("nothing to preview here (no link under the cursor, no related notes)")
    return
  end
  local lines, marks = plain.lines(markdown, root_of(c), M.wrap_width())
  open_float(lines, "", { focus_id = M.HOVER_FOCUS_ID }, marks, M.HOVER_MAX_HEIGHT)
end

--- K: the server's hover for the cursor (a link: the linked note, its backlinks and similar
--- notes; prose: related notes) in a float, with vault-relative paths instead of file:// links.
function M.hover(bufnr)
  bufnr = util.buf(bufnr)
  local c = client.require_client(bufnr)
  if c == nil then
    return
  end
  local params = compat.position_params(c)
  local ok = compat.request(c, "textDocument/hover", params, function(err, result)
    M.show_hover(err, result, bufnr, c)
  end, bufnr)
  if not ok then
    util.notify("the server is not running (see :help zettel_lsp-troubleshooting)",
      vim.log.levels.ERROR)
  end
end

--- An lsp-handler for textDocument/hover (the client's, so that vim.lsp.buf.hover() shows the
--- same float up to Neovim 0.10; 0.11's vim.lsp.buf.hover() no longer calls handlers).
function M.handler(err, result, ctx)
  local c = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id)
  M.show_hover(err, result, (ctx and ctx.bufnr) or vim.api.nvim_get_current_buf(), c)
end

-- ---------------------------------------------------------------------------- related notes

--- The lines (and highlights) of the related-notes float: a header, then one line per note of
--- at most `width` cells: "title [relation] — folder: excerpt", the folder shortened from the
--- left and the excerpt cut to fit (results.row_line).
function M.related_lines(rows, width)
  local lines = { "Related notes" }
  local marks = { { 0, 0, #lines[1], "ZettelLspHeader" } }
  for _, row in ipairs(rows) do
    local line, line_marks = results.row_line(row, width)
    for _, m in ipairs(line_marks) do
      table.insert(marks, { #lines, m[2], m[3], m[4] })
    end
    table.insert(lines, line)
  end
  return lines, marks
end

--- Ask for related notes for the paragraph under the cursor, if it changed, and show them in
--- a floating window (closed when the cursor moves). Called on CursorHold.
function M.hover_related(bufnr)
  bufnr = util.buf(bufnr)
  if bufnr ~= vim.api.nvim_get_current_buf() or vim.fn.mode() ~= "n" then
    return
  end
  local c = client.get_client(bufnr)
  if c == nil then
    return
  end
  local state = hover_state[bufnr] or {}
  hover_state[bufnr] = state
  if other_float_open(state) then
    return -- K's hover (or another float) is showing: leave it
  end
  local _, _, text = related.paragraph_at_cursor(bufnr)
  if text == nil or text == state.text then
    return
  end
  state.text = text
  if state.request then
    compat.cancel_request(state.client, state.request)
    state.request = nil
  end
  hover_seq = hover_seq + 1
  local seq = hover_seq
  state.seq = seq
  local cursor = vim.api.nvim_win_get_cursor(0)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = {
    command = "zettel.related",
    arguments = { related.related_args(c, bufnr, config.current.hover_limit) },
  }
  local ok, id = compat.request(c, "workspace/executeCommand", params, function(err, rows)
    if state.seq ~= seq then
      return -- a newer paragraph was asked about
    end
    state.request = nil
    if err then
      state.text = nil -- ask again next time
      util.notify("related notes failed: " .. util.err_text(err), vim.log.levels.WARN)
      return
    end
    if type(rows) ~= "table" or #rows == 0 then
      return
    end
    -- Only show it where it was asked for, and not over another float.
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.fn.mode() ~= "n"
      or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or other_float_open(state) then
      state.text = nil
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] ~= cursor[1] or now[2] ~= cursor[2] then
      state.text = nil
      return
    end
    local lines, marks = M.related_lines(rows, M.wrap_width())
    local float_buf, float_win = open_float(lines, "", {
      focus_id = M.RELATED_FOCUS_ID,
      focus = false,
      close_events = { "CursorMoved", "CursorMovedI", "InsertEnter", "BufLeave", "WinLeave" },
    }, marks)
    state.float = float_win
    state.float_buf = float_buf
  end, bufnr)
  if ok then
    state.request = id
    state.client = c
  else
    state.text = nil
  end
end

-- ---------------------------------------------------------------------------- jumps

-- What changes when a jump moves the cursor: the window's jumplist (its length, position and
-- newest entry). Switching files adds to it too.
local function jump_signature()
  local ok, jumps = pcall(vim.fn.getjumplist)
  if not ok or type(jumps) ~= "table" or type(jumps[1]) ~= "table" then
    return ""
  end
  local list = jumps[1]
  local last = list[#list] or {}
  return string.format("%d:%s:%s:%s:%s", #list, tostring(jumps[2]), tostring(last.bufnr),
    tostring(last.lnum), tostring(last.col))
end

--- CursorMoved (any buffer): remember whether this move was a jump (the jumplist changed or the
--- window shows another buffer since the last move).
function M.on_cursor_moved(bufnr)
  local win = vim.api.nvim_get_current_win()
  local sig = jump_signature()
  local last = moves[win]
  moves[win] = {
    buf = bufnr,
    jumps = sig,
    jumped = last ~= nil and (last.buf ~= bufnr or last.jumps ~= sig),
  }
end

--- Whether the cursor in the current window got where it is by a jump (see on_cursor_moved),
--- also when no CursorMoved came after the jump. A window with no move seen yet: no.
function M.arrived_by_jump(bufnr)
  local win = vim.api.nvim_get_current_win()
  local last = moves[win]
  if last == nil then
    return false
  end
  local sig = jump_signature()
  if last.buf ~= bufnr or last.jumps ~= sig then
    moves[win] = { buf = bufnr, jumps = sig, jumped = true }
    return true
  end
  return last.jumped
end

--- Forget a window that closed.
function M.forget_window(win)
  moves[win] = nil
end

--- CursorHold in a note: hover_related() now, or after `hover_delay_ms` if the cursor stays;
--- nothing when the cursor came by a jump (it shows after the next ordinary move).
function M.on_cursor_hold(bufnr)
  if M.arrived_by_jump(bufnr) then
    return
  end
  local delay = config.current.hover_delay_ms
  local extra = delay and (delay - vim.o.updatetime) or 0
  if extra <= 0 then
    M.hover_related(bufnr)
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  vim.defer_fn(function()
    if vim.api.nvim_get_current_buf() ~= bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] == cursor[1] and now[2] == cursor[2]
      and vim.api.nvim_buf_get_changedtick(bufnr) == tick then
      M.hover_related(bufnr)
    end
  end, extra)
end

--- Forget what was asked for a buffer that goes away.
function M.forget(bufnr)
  hover_state[bufnr] = nil
end

return M
