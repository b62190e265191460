-- The client: start/attach the server for a vault, find the client of a buffer, run zettel.*
-- commands, send settings, and route zettel/askDelta notifications to the answer waiting for
-- them (as editors/vscode/src/client.ts does).
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local util = require("zettel_lsp.util")

local notify = util.notify

local M = {}

--- The client name (also the name of lsp/zettel_lsp.lua for vim.lsp.enable()).
M.name = "zettel_lsp"

local clients_by_root = {} -- root -> client id (Neovim 0.7, which has no vim.lsp.start)
local told_missing = false -- said once per session that the server command is not found

--- Whether `client` is a zettel-lsp client (by name, or by the commands it offers).
function M.is_zettel_client(client)
  if client == nil then
    return false
  end
  if client.name == M.name or client.name == "zettel-lsp" then
    return true
  end
  return compat.has_command(client, "zettel.status")
end

--- The zettel-lsp client attached to `bufnr` (default: current buffer), or nil.
function M.get_client(bufnr)
  bufnr = util.buf(bufnr)
  for _, client in ipairs(compat.buf_clients(bufnr)) do
    if M.is_zettel_client(client) then
      return client
    end
  end
  return nil
end

--- Every running zettel-lsp client.
function M.clients()
  local out = {}
  for _, client in ipairs(compat.all_clients()) do
    if M.is_zettel_client(client) then
      table.insert(out, client)
    end
  end
  return out
end

local NO_CLIENT = "no zettel-lsp server is attached to this buffer. It starts for Markdown "
  .. "files inside a folder with %s; see :help zettel_lsp-troubleshooting"

--- Why a buffer has no client.
function M.no_client_message()
  return string.format(NO_CLIENT, table.concat(config.current.root_markers or {}, ", "))
end

--- The client for buffer-bound commands, or nil after telling the user why.
function M.require_client(bufnr)
  local client = M.get_client(bufnr)
  if client == nil then
    notify(M.no_client_message(), vim.log.levels.ERROR)
  end
  return client
end

--- The client for the current buffer (or any zettel-lsp client) and the text to send; asks for
--- the text with vim.ui.input (then calls `again`) when `text` is empty. nil: nothing to do now.
function M.client_and_text(text, prompt, again)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr) or M.clients()[1]
  if client == nil then
    notify("no zettel-lsp server is running: open a note in your vault first "
      .. "(see :help zettel_lsp-troubleshooting)", vim.log.levels.ERROR)
    return nil
  end
  if text == nil or vim.trim(text) == "" then
    vim.ui.input({ prompt = prompt }, function(input)
      if input and vim.trim(input) ~= "" then
        again(input)
      end
    end)
    return nil
  end
  return client, bufnr
end

--- Run a `zettel.*` command asynchronously; `on_result(result)` only on success.
---@param client table
---@param bufnr integer
---@param command string
---@param args table|nil one argument object
---@param on_result fun(result: any)
function M.execute(client, bufnr, command, args, on_result)
  local params = { command = command }
  if args ~= nil then
    params.arguments = { args }
  end
  local ok = compat.request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      notify(command .. " failed: " .. util.err_text(err), vim.log.levels.ERROR)
      return
    end
    local done, problem = pcall(on_result, result)
    if not done then
      notify(command .. ": " .. tostring(problem), vim.log.levels.ERROR)
    end
  end, bufnr)
  if not ok then
    notify("the server is not running (it may have exited; see :help "
      .. "zettel_lsp-troubleshooting)", vim.log.levels.ERROR)
  end
end

-- ---------------------------------------------------------------------------- answer streams

-- :ZettelAsk sends zettel.ask with a token; the server streams the answer as zettel/askDelta
-- {token, delta} notifications, then answers the request with the whole result.
local ASK_DELTA = "zettel/askDelta"
--- token -> function(delta) of the answer waiting for it (set and cleared by ask.lua).
M.ask_streams = {}
local chained = setmetatable({}, { __mode = "k" }) -- handlers made by with_ask_handler

local function on_ask_delta(_, params)
  if type(params) ~= "table" or type(params.delta) ~= "string" then
    return
  end
  local stream = M.ask_streams[params.token]
  if stream then
    stream(params.delta)
  end
end

--- `handlers` (a table of lsp-handlers, changed in place) with the zettel/askDelta handler; a
--- handler the user gave for that method still runs after it.
local function with_ask_handler(handlers)
  local own = handlers[ASK_DELTA]
  if own == nil then
    handlers[ASK_DELTA] = on_ask_delta
  elseif own ~= on_ask_delta and not chained[own] then
    local function both(...)
      on_ask_delta(...)
      return own(...)
    end
    chained[both] = true
    handlers[ASK_DELTA] = both
  end
  return handlers
end

--- Make sure `client` passes zettel/askDelta to the plugin (it may have been started by
--- vim.lsp.enable or nvim-lspconfig, without the plugin's handlers).
function M.ensure_ask_handler(client)
  if type(client.handlers) == "table" then
    with_ask_handler(client.handlers)
  else
    with_ask_handler(vim.lsp.handlers)
  end
end

-- ---------------------------------------------------------------------------- start, attach

-- textDocument/hover through vim.lsp.buf.hover() (up to Neovim 0.10, which call handlers):
-- the same float as K, with vault-relative paths (hover.lua).
local function on_hover(...)
  return require("zettel_lsp.hover").handler(...)
end

--- The 'omnifunc' of the LSP client.
M.OMNIFUNC = "v:lua.vim.lsp.omnifunc"

--- What the plugin does in a buffer the server attached to: the `keymaps` mappings and, unless
--- the `omnifunc` option is false, the LSP's 'omnifunc'.
function M.on_buffer_attach(bufnr)
  require("zettel_lsp.keymaps").attach(bufnr)
  if config.current.omnifunc ~= false and vim.api.nvim_buf_is_valid(bufnr) then
    vim.bo[bufnr].omnifunc = M.OMNIFUNC
  end
end

local function client_config(root)
  local opts = config.current
  local settings = config.server_settings(opts)
  local user_on_init = opts.on_init
  local user_on_attach = opts.on_attach
  local handlers = vim.tbl_extend("force", { ["textDocument/hover"] = on_hover },
    opts.handlers or {})
  return {
    name = M.name,
    cmd = (require("zettel_lsp.install").resolve_cmd(opts.cmd)),
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = {
      { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") },
    },
    init_options = config.as_object(vim.deepcopy(settings)),
    settings = { zettel = config.as_object(vim.deepcopy(settings)) },
    capabilities = opts.capabilities,
    handlers = with_ask_handler(handlers),
    -- The default mappings first, then yours (a mapping you make there wins).
    on_attach = function(client, bufnr)
      M.on_buffer_attach(bufnr)
      if user_on_attach then
        user_on_attach(client, bufnr)
      end
    end,
    on_init = function(client, result)
      -- Neovim 0.8 (which also brought vim.lsp.start) sends config.settings after
      -- initialize by itself; 0.7 does not, so do it here.
      if not vim.lsp.start then
        local params = { settings = client.config.settings }
        compat.notify(client, "workspace/didChangeConfiguration", params)
      end
      if user_on_init then
        user_on_init(client, result)
      end
    end,
  }
end

--- Start (or reuse) the client for the vault holding `bufnr` and attach it. Returns the client
--- id, or nil when the buffer is not a file in a folder with a root marker.
function M.attach(bufnr)
  bufnr = util.buf(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  if fname == "" or fname:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = compat.find_root(fname, config.current.root_markers)
  if root == nil then
    return nil
  end
  local cfg = client_config(root)
  if type(cfg.cmd) == "table" and vim.fn.executable(cfg.cmd[1]) == 0 then
    if not told_missing then
      told_missing = true
      notify("the server " .. cfg.cmd[1] .. " is not found: run :ZettelInstall, or set the "
        .. "cmd option (:checkhealth zettel_lsp tells more)", vim.log.levels.ERROR)
    end
    return nil
  end
  if vim.lsp.start then -- 0.8+: reuses a client with the same name and root_dir
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client == nil or (client.is_stopped and client.is_stopped()) then
    id = vim.lsp.start_client(cfg)
    if id == nil then
      notify("could not start " .. table.concat(cfg.cmd, " ") .. " (:checkhealth zettel_lsp "
        .. "tells more)", vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- Send new settings (camelCase keys) to every running server; keys you leave out keep their
--- values. Index settings (model, cacheDir, ...) make the server re-open its vaults.
function M.update_settings(settings)
  local opts = config.current
  local current = config.server_settings(opts)
  for k, v in pairs(settings or {}) do
    current[k] = v
  end
  opts.settings = current
  opts.init_options = {}
  for _, client in ipairs(M.clients()) do
    client.config.settings = { zettel = config.as_object(vim.deepcopy(current)) }
    compat.notify(client, "workspace/didChangeConfiguration", { settings = client.config.settings })
  end
end

return M
