-- :ZettelSearch: zettel.search, the rows in a picker, the chosen note opened at its passage.
local client = require("zettel_lsp.client")
local pickers = require("zettel_lsp.pickers")
local util = require("zettel_lsp.util")

local M = {}

--- :ZettelSearch [query]
function M.search(query)
  local c, bufnr = client.client_and_text(query, "Zettel search: ", M.search)
  if c == nil then
    return
  end
  local args = { query = query }
  if vim.bo[bufnr].filetype == "markdown" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    args.uri = vim.uri_from_bufnr(bufnr) -- results then say how they relate to this note
  end
  client.execute(c, bufnr, "zettel.search", args, function(result)
    local rows = type(result) == "table" and result.results or {}
    local partial = type(result) == "table" and result.complete == false
    local note = type(result) == "table" and result.note or ""
    if partial and note ~= vim.NIL and note ~= "" then
      util.notify("partial results (the index is still being built): " .. note,
        vim.log.levels.WARN)
    end
    if #rows == 0 then
      util.notify("no notes found for '" .. query .. "'", vim.log.levels.WARN)
      return
    end
    pickers.pick_result(rows, "Zettel search: " .. query)
  end)
end

return M
