-- zettel-lsp: a language server for Markdown note vaults (search, related notes, link fixes).
--
-- Neovim 0.11+ picks this file up from 'runtimepath' (this plugin's folder is on it):
--
--   vim.lsp.config("zettel_lsp", { init_options = { hoverLimit = 8 } })  -- optional overrides
--   vim.lsp.enable("zettel_lsp")
--
-- nvim-lspconfig users on older Neovim can register it as a custom server:
--
--   require("lspconfig.configs").zettel_lsp = { default_config = dofile(path_to_this_file) }
--   require("lspconfig").zettel_lsp.setup({})
--
-- Settings use the camelCase keys of docs/server.md, as `init_options` (read at start) and
-- under `settings.zettel` (sent with workspace/didChangeConfiguration). Empty tables are
-- vim.empty_dict() so that they reach the server as JSON objects, not as `[]`.
--
-- `require("zettel_lsp").setup()` does all of this for you on Neovim 0.7+ and adds the
-- :Zettel* commands; see :help zettel_lsp.
local config = {
  -- zettel-lsp on $PATH, else the one :ZettelInstall installed (lua/zettel_lsp/install.lua)
  cmd = (require("zettel_lsp.install").resolve_cmd()),
  filetypes = { "markdown" },
  root_markers = { ".obsidian", ".zk", ".git" },
  init_options = vim.empty_dict(),
  settings = { zettel = vim.empty_dict() },
}

-- Before vim.lsp.config (0.11) nobody reads root_markers: older nvim-lspconfig wants a
-- root_dir(fname) function instead.
if not (vim.lsp and vim.lsp.config) then
  config.root_dir = function(fname)
    return require("zettel_lsp.compat").find_root(fname, config.root_markers)
  end
end

return config
