-- Default mappings (option `keymaps`) in the buffers the server attaches to: K (the link's
-- preview, or related notes), gd (follow the link), gr (backlinks). Buffer-local, and never over
-- a mapping the buffer already has (yours, from an ftplugin, on_attach or LspAttach), except
-- Neovim's own LSP defaults (0.10+ maps K to vim.lsp.buf.hover()).
local config = require("zettel_lsp.config")

local M = {}

--- action -> { rhs, desc }. The functions look the modules up when called.
M.actions = {
  hover = {
    rhs = function()
      require("zettel_lsp.hover").hover()
    end,
    desc = "zettel-lsp: preview the link / related notes",
  },
  definition = {
    rhs = function()
      vim.lsp.buf.definition()
    end,
    desc = "zettel-lsp: follow the link",
  },
  references = {
    rhs = function()
      vim.lsp.buf.references()
    end,
    desc = "zettel-lsp: backlinks",
  },
}

local function keys_of(lhs)
  return vim.api.nvim_replace_termcodes(lhs, true, true, true)
end

--- The buffer-local Normal-mode mapping of `lhs` in `bufnr`, or nil.
local function buffer_mapping(bufnr, lhs)
  local want = keys_of(lhs)
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(bufnr, "n")) do
    if m.lhs == lhs or keys_of(m.lhs) == want then
      return m
    end
  end
  return nil
end

-- A mapping this plugin made (set again on a second attach) or one Neovim makes by itself
-- when a client attaches (K -> vim.lsp.buf.hover() from 0.10).
local function replaceable(m)
  local desc = type(m.desc) == "string" and m.desc or ""
  if vim.startswith(desc, "zettel-lsp: ") or desc:match("^vim%.lsp%.buf%.") then
    return true
  end
  return m.callback ~= nil and m.callback == vim.lsp.buf.hover
end

--- Map the keys of the `keymaps` option in `bufnr` (a buffer the server is attached to).
--- Returns action -> lhs of the mappings made.
function M.attach(bufnr)
  local made = {}
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return made
  end
  for action, lhs in pairs(config.keymaps(config.current)) do
    local spec = M.actions[action]
    local existing = spec and buffer_mapping(bufnr, lhs)
    if spec and (existing == nil or replaceable(existing)) then
      vim.keymap.set("n", lhs, spec.rhs, { buffer = bufnr, silent = true, desc = spec.desc })
      made[action] = lhs
    end
  end
  return made
end

return M
