-- Search and related rows (zettel.search, zettel.related, zettel.ask sources): how they read
-- on one line and how they open (as editors/vscode/src/lib/results.ts).
local util = require("zettel_lsp.util")

local M = {}

--- The folder of a row's card (a card at the top of the vault: the vault's name).
function M.folder_of(row)
  local dir = vim.fn.fnamemodify(row.path or "", ":h")
  if dir == "." or dir == "" then
    -- a card at the top of the vault: the vault's name, as workspace/symbol's container
    return row.vault and vim.fn.fnamemodify(row.vault, ":t") or "."
  end
  return dir
end

--- "title [relation] — folder: excerpt", one line (the relation to the note you searched from,
--- when the server gives one: linked, backlink, 2 hops, not linked).
function M.format_result(row)
  local title = row.title or vim.fn.fnamemodify(row.path or "?", ":t:r")
  if type(row.relation) == "string" and row.relation ~= "" and row.relation ~= "this card" then
    title = string.format("%s [%s]", title, row.relation)
  end
  return string.format("%s — %s: %s", title, M.folder_of(row), util.one_line(row.excerpt, 100))
end

--- "title [relation] — excerpt", a location list entry of :ZettelRelated.
function M.related_text(row)
  local relation = row.relation and (" [" .. row.relation .. "]") or ""
  return string.format("%s%s — %s", row.title or row.path, relation,
    util.one_line(row.excerpt, 120))
end

--- The file of a row (its uri, else its path).
function M.fname(row)
  if row.uri then
    return vim.uri_to_fname(row.uri)
  end
  return row.path
end

--- Open the card of a search/related row and put the cursor on its first line.
function M.open_result(row)
  local fname = M.fname(row)
  if not fname then
    return
  end
  local ok, problem = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(fname))
  if not ok then
    util.notify("cannot open " .. fname .. ": " .. tostring(problem), vim.log.levels.ERROR)
    return
  end
  local line = math.max(1, math.min((row.line_start or 0) + 1, vim.api.nvim_buf_line_count(0)))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  pcall(vim.cmd, "normal! zv")
end

return M
