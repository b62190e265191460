-- Search and related rows (zettel.search, zettel.related, zettel.ask sources): how they read
-- on one line and how they open (as editors/vscode/src/lib/results.ts).
local util = require("zettel_lsp.util")

local M = {}

--- The folder of a row's card: the server's `folder` (newer servers: the folder inside the vault,
--- or the vault's name for a card at its top, the same in every view), else worked out the same
--- way from its path and vault.
function M.folder_of(row)
  if type(row.folder) == "string" then
    return row.folder
  end
  local dir = vim.fn.fnamemodify(row.path or "", ":h")
  if dir == "." or dir == "" then
    return util.present(row.vault) and vim.fn.fnamemodify(row.vault, ":t") or ""
  end
  return dir
end

--- The readable excerpt of a row (link text, no Markdown marks) when the server sends one.
function M.excerpt_of(row)
  local readable = type(row.excerpt_text) == "string" and row.excerpt_text ~= ""
  return util.one_line(readable and row.excerpt_text or row.excerpt)
end

--- A row on one line of at most `width` screen cells (nil: no limit):
--- "title [relation] — folder: excerpt". The title is cut only when it alone is too wide; the
--- folder is shortened from the left (util.short_folder), the excerpt cut at its end. Returns
--- the line and its highlights { 0, start col, end col (bytes), group } (title, relation,
--- folder).
function M.row_line(row, width)
  width = width or math.huge
  local title = row.title or vim.fn.fnamemodify(row.path or "?", ":t:r")
  local relation = ""
  if type(row.relation) == "string" and row.relation ~= "" and row.relation ~= "this card" then
    relation = " [" .. row.relation .. "]"
  end
  local head = title .. relation
  if vim.fn.strdisplaywidth(head) > width then
    local line = util.fit(head, width)
    return line, { { 0, 0, #line, "ZettelLspTitle" } }
  end
  local marks = { { 0, 0, #title, "ZettelLspTitle" } }
  if relation ~= "" then
    table.insert(marks, { 0, #title, #head, "ZettelLspDetail" })
  end
  local line = head
  local room = width - vim.fn.strdisplaywidth(head) - 3 -- " — "
  local folder = util.short_folder(M.folder_of(row), width ~= math.huge and room or nil)
  if folder ~= "" and room >= 2 then
    line = line .. " — "
    table.insert(marks, { 0, #line, #line + #folder, "ZettelLspPath" })
    line = line .. folder
  end
  local excerpt = M.excerpt_of(row)
  room = width - vim.fn.strdisplaywidth(line) - 2 -- ": "
  if excerpt ~= "" and room >= 4 then
    line = line .. ": " .. (width == math.huge and util.one_line(excerpt, 100)
      or util.fit(excerpt, room))
  end
  return line, marks
end

--- A search row on one line of at most `width` screen cells (see row_line).
function M.format_result(row, width)
  return (M.row_line(row, width))
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
