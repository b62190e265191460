-- The server's code lens commands (docs/lsp-outline.md) as Neovim runs them: a lens whose
-- command is in vim.lsp.commands runs here; any other goes to the server as
-- workspace/executeCommand, whose answer nothing would show.
--   zettel.showReferences (uri, position, locations): the backlinks in the quickfix list.
--   zettel.suggestLinks ({uri}): :ZettelSuggestLinks for that note.
local M = {}

--- The "N backlinks" lens: fill the quickfix list with its locations and open it. Returns the
--- number of items (0: nothing to show, the list is left alone).
function M.show_references(command, ctx)
  local args = command.arguments or {}
  local locations = args[3]
  if type(locations) ~= "table" or #locations == 0 then
    vim.notify("zettel-lsp: no backlinks", vim.log.levels.INFO)
    return 0
  end
  local encoding = "utf-16"
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id)
  if client and client.offset_encoding then
    encoding = client.offset_encoding
  end
  local items = vim.lsp.util.locations_to_items(locations, encoding)
  vim.fn.setqflist({}, " ", { title = command.title or "backlinks", items = items })
  vim.cmd("copen")
  return #items
end

--- The "M unlinked mentions" lens: the suggestions picker for the lens's note.
function M.suggest_links(command, _)
  local arg = (command.arguments or {})[1]
  local uri = type(arg) == "table" and arg.uri or nil
  if uri and vim.uri_to_bufnr(uri) ~= vim.api.nvim_get_current_buf() then
    vim.cmd("buffer " .. vim.uri_to_bufnr(uri))
  end
  require("zettel_lsp.suggest").suggest_links(false)
end

--- Put the handlers in vim.lsp.commands (setup() calls it).
function M.register()
  vim.lsp.commands["zettel.showReferences"] = M.show_references
  vim.lsp.commands["zettel.suggestLinks"] = M.suggest_links
end

return M
