-- Hover suggestions (option `hover_suggestions`): related notes for the paragraph under the
-- cursor in a floating window on CursorHold, closed when the cursor moves.
local client = require("zettel_lsp.client")
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local related = require("zettel_lsp.related")
local results = require("zettel_lsp.results")
local util = require("zettel_lsp.util")

local M = {}

local hover_state = {} -- bufnr -> { text = last paragraph asked about, seq = n, request = id }
local hover_seq = 0

local function hover_lines(rows)
  local lines = { "**Related notes**", "" }
  for _, row in ipairs(rows) do
    local relation = row.relation and (" · _" .. row.relation .. "_") or ""
    table.insert(lines, string.format("- **%s** (%s, line %d)%s", row.title or row.path,
      results.folder_of(row), (row.line_start or 0) + 1, relation))
    local excerpt = util.one_line(row.excerpt, 90)
    if excerpt ~= "" then
      table.insert(lines, "  " .. excerpt)
    end
  end
  return lines
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
  local _, _, text = related.paragraph_at_cursor(bufnr)
  local state = hover_state[bufnr] or {}
  hover_state[bufnr] = state
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
    -- Only show it where it was asked for.
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.fn.mode() ~= "n"
      or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
      state.text = nil
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] ~= cursor[1] or now[2] ~= cursor[2] then
      state.text = nil
      return
    end
    local float_buf, float_win = vim.lsp.util.open_floating_preview(hover_lines(rows), "markdown", {
      focus_id = "zettel_lsp_related",
      focus = false,
      max_width = 90,
      max_height = 20,
      border = "rounded",
      close_events = { "CursorMoved", "CursorMovedI", "InsertEnter", "BufLeave", "WinLeave" },
    })
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

--- CursorHold in a note: hover_related() now, or after `hover_delay_ms` if the cursor stays.
function M.on_cursor_hold(bufnr)
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
