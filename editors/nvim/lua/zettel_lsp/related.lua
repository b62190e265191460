-- :ZettelRelated: zettel.related for the paragraph at the cursor, in the location list (or the
-- quickfix list); the paragraph helpers hover.lua shares.
local client = require("zettel_lsp.client")
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local results = require("zettel_lsp.results")
local util = require("zettel_lsp.util")

local M = {}

--- The non-blank lines around the cursor below the frontmatter: (first, last, text) 1-based,
--- or nil on a blank line.
function M.paragraph_at_cursor(bufnr, row)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  row = row or vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local body_start = 1
  if lines[1] == "---" then
    for i = 2, #lines do
      if lines[i] == "---" or lines[i] == "..." then
        body_start = i + 1
        break
      end
    end
  end
  local function blank(i)
    return lines[i] == nil or not lines[i]:find("%S")
  end
  if row < body_start or blank(row) then
    return nil
  end
  local first, last = row, row
  while first > body_start and not blank(first - 1) do
    first = first - 1
  end
  while last < #lines and not blank(last + 1) do
    last = last + 1
  end
  return first, last, table.concat(lines, "\n", first, last)
end

--- The argument of zettel.related for the cursor's position in `bufnr`.
function M.related_args(c, bufnr, limit)
  local params = compat.position_params(c)
  return {
    uri = vim.uri_from_bufnr(bufnr),
    position = params.position,
    limit = limit,
  }
end

--- :ZettelRelated: related notes for the paragraph at the cursor (the whole note on a blank
--- line) in the location list (or quickfix list), opened.
function M.related()
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.require_client(bufnr)
  if c == nil then
    return
  end
  local winid = vim.api.nvim_get_current_win()
  local first = M.paragraph_at_cursor(bufnr)
  local what = first and ("the paragraph at line " .. first) or "this note"
  client.execute(c, bufnr, "zettel.related", M.related_args(c, bufnr), function(rows)
    rows = type(rows) == "table" and rows or {}
    if #rows == 0 then
      util.notify("no related notes for " .. what, vim.log.levels.WARN)
      return
    end
    local items = {}
    for _, row in ipairs(rows) do
      table.insert(items, {
        filename = results.fname(row),
        lnum = (row.line_start or 0) + 1,
        col = 1,
        text = results.related_text(row),
      })
    end
    local title = "Related notes for " .. what .. " of " .. vim.fn.fnamemodify(
      vim.api.nvim_buf_get_name(bufnr), ":t")
    if config.current.related_list == "quickfix" then
      vim.fn.setqflist({}, " ", { title = title, items = items })
      vim.cmd("copen")
    else
      if not vim.api.nvim_win_is_valid(winid) then
        winid = 0
      end
      vim.fn.setloclist(winid, {}, " ", { title = title, items = items })
      vim.api.nvim_set_current_win(winid ~= 0 and winid or vim.api.nvim_get_current_win())
      vim.cmd("lopen")
    end
  end)
end

return M
