-- The plugin's options (setup()) and the server settings made from them.
local M = {}

M.defaults = {
  -- The plain "zettel-lsp" is looked up on $PATH, then in the virtual environment of
  -- :ZettelInstall (install.lua); any other command is used as it is.
  cmd = { "zettel-lsp" },
  -- The Python (3.11+) :ZettelInstall makes its virtual environment with; nil: python3, python.
  python = nil,
  filetypes = { "markdown" },
  root_markers = { ".obsidian", ".zk", ".git" },
  -- Server settings (docs/server.md, camelCase keys); both tables are merged and sent as
  -- initializationOptions and as workspace/didChangeConfiguration settings (init_options
  -- wins on a key given in both). `settings` may also be nested as { zettel = {...} }.
  init_options = {},
  settings = {},
  -- false: only define the commands (start the server yourself, e.g. vim.lsp.enable).
  autostart = true,
  -- Buffer-local mappings in the buffers the server attaches to (a mapping the buffer already
  -- has is kept). false: none; a table: these keys over the defaults, false for one turns it
  -- off, e.g. { references = false } or { hover = "<leader>k" }.
  keymaps = true,
  -- Set 'omnifunc' to the LSP's (v:lua.vim.lsp.omnifunc) in the buffers the server attaches
  -- to, so that <C-x><C-o> after [[ completes card names (Markdown's ftplugin sets
  -- htmlcomplete#CompleteTags, which Neovim keeps). false: leave 'omnifunc' as it is (e.g. with
  -- nvim-cmp or blink.cmp).
  omnifunc = true,
  -- Related notes in a floating window when the cursor rests in a paragraph.
  hover_suggestions = false,
  hover_delay_ms = nil, -- nil: 'updatetime' alone; else at least this long after the last move
  hover_limit = nil, -- nil: the server's hoverLimit
  -- "auto" (telescope.nvim when installed, else vim.ui.select), "telescope" or "select".
  picker = "auto",
  -- Where :ZettelRelated lists its notes: "loclist" or "quickfix".
  related_list = "loclist",
  -- Where :ZettelAsk shows its answer: "float" or "split".
  ask_window = "float",
  -- Passed through to the client.
  on_attach = nil,
  on_init = nil,
  capabilities = nil,
  handlers = nil,
}

--- The options in force (require("zettel_lsp").config reads and replaces this one).
M.current = vim.deepcopy(M.defaults)

--- The options of setup(opts): the defaults with `opts` over them.
function M.from(opts)
  local config = vim.deepcopy(M.defaults)
  for k, v in pairs(opts or {}) do
    config[k] = v
  end
  if type(config.cmd) == "string" then
    config.cmd = { config.cmd }
  end
  return config
end

--- The default keys of `keymaps`: action -> left-hand side.
M.default_keymaps = { hover = "K", definition = "gd", references = "gr" }

--- The mappings the options ask for: action -> lhs (a missing action is not mapped).
function M.keymaps(opts)
  local wanted = opts.keymaps
  if wanted == false then
    return {}
  end
  local keys = vim.deepcopy(M.default_keymaps)
  if type(wanted) == "table" then
    for action, lhs in pairs(wanted) do
      keys[action] = lhs or nil
    end
  end
  for action, lhs in pairs(keys) do
    if type(lhs) ~= "string" or lhs == "" then
      keys[action] = nil
    end
  end
  return keys
end

--- The merged server settings (flat, camelCase) from the options.
function M.server_settings(opts)
  local merged = {}
  local settings = opts.settings or {}
  if type(settings.zettel) == "table" then
    settings = settings.zettel
  end
  for k, v in pairs(settings) do
    merged[k] = v
  end
  for k, v in pairs(opts.init_options or {}) do
    merged[k] = v
  end
  return merged
end

--- Empty Lua tables encode as JSON arrays; the server wants objects.
function M.as_object(t)
  if next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

return M
