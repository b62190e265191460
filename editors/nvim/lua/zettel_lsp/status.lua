-- :ZettelStatus and :ZettelReindex: each vault's phase and counts, a background reindex.
local client = require("zettel_lsp.client")
local util = require("zettel_lsp.util")

local notify = util.notify

local M = {}

--- The client of the current buffer, else every running one.
local function targets(bufnr)
  local attached = client.get_client(bufnr)
  return attached and { attached } or client.clients()
end

--- :ZettelReindex
function M.reindex()
  local bufnr = vim.api.nvim_get_current_buf()
  local clients = targets(bufnr)
  if #clients == 0 then
    notify("no zettel-lsp server is running", vim.log.levels.ERROR)
    return
  end
  for _, c in ipairs(clients) do
    client.execute(c, bufnr, "zettel.reindex", nil, function(result)
      local roots = type(result) == "table" and result.started or {}
      notify("reindexing " .. (#roots > 0 and table.concat(roots, ", ") or "nothing")
        .. " in the background (:ZettelStatus shows the progress)")
    end)
  end
end

--- The status lines of one server's answer.
function M.format_status(result)
  local lines = {}
  if type(result) ~= "table" then
    return { "no status" }
  end
  local vaults = result.vaults or {}
  table.insert(lines,
    string.format("zettel-lsp %s: %d vault(s)", tostring(result.version), #vaults))
  local function s(v)
    if v == nil or v == vim.NIL then
      return "-"
    end
    return tostring(v)
  end
  for _, v in ipairs(vaults) do
    table.insert(lines, string.format("%s: phase %s%s", s(v.root), s(v.phase),
      v.complete == false and " (answers are partial)" or ""))
    table.insert(lines, string.format(
      "  cards %s, chunks %s, embedded cards %s, chunks waiting for vectors %s, cards in graph %s",
      s(v.cards), s(v.chunks), s(v.cards_embedded), s(v.chunks_waiting_for_vectors),
      s(v.cards_in_graph)))
    table.insert(lines, string.format("  model %s, backend %s", s(v.model), s(v.backend)))
    if type(v.legs_ready) == "table" then
      table.insert(lines, "  search legs ready: " .. table.concat(v.legs_ready, ", "))
    end
    if type(v.languages) == "table" and not vim.tbl_isempty(v.languages) then
      local langs = {}
      for code, n in pairs(v.languages) do
        table.insert(langs, string.format("%s %s", code, s(n)))
      end
      table.sort(langs)
      table.insert(lines, "  languages: " .. table.concat(langs, ", "))
    end
    if v.multilingual_scope and v.multilingual_scope ~= vim.NIL then
      table.insert(lines, string.format(
        "  multilingual: %s, %s cards embedded, %s waiting",
        s(v.multilingual_scope), s(v.cards_embedded_multilingual),
        s(v.cards_waiting_for_multilingual)))
    end
    if type(v.suggestion_weights) == "string" then
      table.insert(lines, "  suggestion weights: " .. v.suggestion_weights)
    end
    table.insert(lines, "  index dir " .. s(v.index_dir))
    if v.note and v.note ~= vim.NIL and v.note ~= "" then
      table.insert(lines, "  note: " .. tostring(v.note))
    end
    local skipped = 0
    if type(v.skipped) == "table" then
      skipped = vim.tbl_count(v.skipped) -- {path: reason}
    elseif type(v.skipped) == "number" then
      skipped = v.skipped
    end
    local problems = type(v.problems) == "table" and vim.tbl_count(v.problems) or 0
    if skipped > 0 or problems > 0 then
      table.insert(lines, string.format("  skipped files %d, problems %d", skipped, problems))
    end
    if type(v.problems) == "table" then
      for i, problem in ipairs(v.problems) do
        if i > 3 then
          table.insert(lines, "  ... (the LSP log has them all)")
          break
        end
        table.insert(lines, "  problem: " .. util.one_line(problem, 160))
      end
    end
  end
  return lines
end

--- :ZettelStatus
function M.status()
  local bufnr = vim.api.nvim_get_current_buf()
  local clients = targets(bufnr)
  if #clients == 0 then
    notify("no zettel-lsp server is running (" .. client.no_client_message() .. ")",
      vim.log.levels.WARN)
    return
  end
  for _, c in ipairs(clients) do
    client.execute(c, bufnr, "zettel.status", nil, function(result)
      notify(table.concat(M.format_status(result), "\n"))
    end)
  end
end

return M
