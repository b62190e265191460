-- zettel-lsp for Neovim 0.7+: starts the server for Markdown notes in a vault and adds
-- :ZettelSearch, :ZettelRelated, :ZettelSuggestLinks, :ZettelAsk, :ZettelReindex,
-- :ZettelStatus and :ZettelInstall (and :checkhealth zettel_lsp).
-- See :help zettel_lsp (doc/zettel_lsp.txt) and docs/server.md for the server's side.
--
-- This file is the entry point: setup(), the user commands and the public Lua API, gathered
-- from the modules that hold them (as editors/vscode/src is split):
--   config.lua   options and the server settings made from them
--   client.lua   start/attach, find the client, zettel.* commands, settings, answer streams
--   results.lua  how result rows read and open      pickers.lua  telescope / vim.ui.select
--   search.lua   :ZettelSearch                       related.lua  :ZettelRelated, paragraphs
--   suggest.lua  :ZettelSuggestLinks                 hover.lua    K's float, related notes on
--   ask.lua      :ZettelAsk and its answer window                 CursorHold
--   status.lua   :ZettelStatus, :ZettelReindex       keymaps.lua  K, gd, gr where it attaches
--   util.lua     messages, text wrapping             compat.lua   shims for Neovim 0.7 to 0.11+
--   install.lua  :ZettelInstall, the server command   health.lua   :checkhealth zettel_lsp
local config = require("zettel_lsp.config")
local client = require("zettel_lsp.client")
local results = require("zettel_lsp.results")
local search = require("zettel_lsp.search")
local related = require("zettel_lsp.related")
local suggest = require("zettel_lsp.suggest")
local hover = require("zettel_lsp.hover")
local ask = require("zettel_lsp.ask")
local status = require("zettel_lsp.status")
local install = require("zettel_lsp.install")

local M = {}

--- The client name (also the name of lsp/zettel_lsp.lua for vim.lsp.enable()).
M.name = client.name

-- M.config is the options in force, kept in config.lua so that every module reads the same
-- table: reading require("zettel_lsp").config gives it, assigning to it replaces it.
setmetatable(M, {
  __index = function(_, key)
    if key == "config" then
      return config.current
    end
  end,
  __newindex = function(t, key, value)
    if key == "config" then
      config.current = value
    else
      rawset(t, key, value)
    end
  end,
})

-- The client
M.is_zettel_client = client.is_zettel_client
M.get_client = client.get_client
M.clients = client.clients
M.execute = client.execute
M.attach = client.attach
M.update_settings = client.update_settings

-- Results
M.format_result = results.format_result
M.open_result = results.open_result

-- Commands
M.search = search.search
M.paragraph_at_cursor = related.paragraph_at_cursor
M.related = related.related
M.suggest_links = suggest.suggest_links
M.reindex = status.reindex
M.format_status = status.format_status
M.status = status.status
M.hover_related = hover.hover_related
M.hover = hover.hover
M.ask = ask.ask
M.install = install.install

-- ---------------------------------------------------------------------------- setup

-- One entry per user command.
M.commands = {
  ZettelSearch = {
    run = function(a)
      M.search(a.args)
    end,
    opts = { nargs = "*", desc = "zettel-lsp: search the vault, open the chosen note" },
  },
  ZettelRelated = {
    run = function()
      M.related()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: notes related to the paragraph at the cursor" },
  },
  ZettelSuggestLinks = {
    run = function(a)
      M.suggest_links(a.bang)
    end,
    opts = { nargs = 0, bang = true, desc = "zettel-lsp: link suggestions for this note" },
  },
  ZettelReindex = {
    run = function()
      M.reindex()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: rebuild the index in the background" },
  },
  ZettelStatus = {
    run = function()
      M.status()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: index phase, counts, model and index folder" },
  },
  ZettelAsk = {
    run = function(a)
      M.ask(a.args)
    end,
    opts = { nargs = "*", desc = "zettel-lsp: answer a question from the notes (Ollama)" },
  },
  ZettelInstall = {
    run = function(a)
      M.install(a.fargs)
    end,
    opts = { nargs = "*", complete = "file",
      desc = "zettel-lsp: install the server into a virtual environment (pip options, source)" },
  },
}

local function create_commands()
  for name, spec in pairs(M.commands) do
    vim.api.nvim_create_user_command(name, spec.run, spec.opts)
  end
end

--- Configure the plugin: see :help zettel_lsp-setup.
---@param opts table|nil
function M.setup(opts)
  local cfg = config.from(opts)
  M.config = cfg
  create_commands()
  require("zettel_lsp.lenses").register() -- code lens commands (backlinks, mentions)

  local group = vim.api.nvim_create_augroup("zettel_lsp", { clear = true })
  if cfg.autostart then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = cfg.filetypes,
      callback = function(args)
        M.attach(args.buf)
      end,
      desc = "zettel-lsp: start/attach the server for notes in a vault",
    })
    -- Buffers opened before setup() (e.g. when the plugin is lazy-loaded on a filetype).
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(cfg.filetypes, vim.bo[bufnr].filetype) then
        M.attach(bufnr)
      end
    end
  end
  -- The default mappings also for a client started elsewhere (vim.lsp.enable, nvim-lspconfig);
  -- the plugin's own clients map them in on_attach (0.7 has no LspAttach).
  if vim.fn.exists("##LspAttach") == 1 then
    vim.api.nvim_create_autocmd("LspAttach", {
      group = group,
      callback = function(args)
        local c = args.data and vim.lsp.get_client_by_id(args.data.client_id)
        if M.is_zettel_client(c) then
          client.on_buffer_attach(args.buf)
        end
      end,
      desc = "zettel-lsp: K, gd, gr in buffers the server attaches to (option keymaps)",
    })
  end
  if cfg.hover_suggestions then
    -- Which cursor moves were jumps: no float after gd, <C-o>, a search or a file switch.
    vim.api.nvim_create_autocmd("CursorMoved", {
      group = group,
      callback = function(args)
        hover.on_cursor_moved(args.buf)
      end,
    })
    vim.api.nvim_create_autocmd("WinClosed", {
      group = group,
      callback = function(args)
        hover.forget_window(tonumber(args.match))
      end,
    })
    vim.api.nvim_create_autocmd("CursorHold", {
      group = group,
      callback = function(args)
        if vim.tbl_contains(cfg.filetypes, vim.bo[args.buf].filetype) then
          hover.on_cursor_hold(args.buf)
        end
      end,
      desc = "zettel-lsp: related notes for the paragraph under the cursor",
    })
    vim.api.nvim_create_autocmd({ "BufDelete", "BufWipeout" }, {
      group = group,
      callback = function(args)
        hover.forget(args.buf)
      end,
    })
  end
  return M
end

return M
