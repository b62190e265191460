-- Small shims over Neovim APIs that changed between 0.7 and 0.11+.
--
-- Everything here detects the feature it needs (a function, a method on the client class)
-- rather than comparing version numbers, except where only the version can tell (documented
-- at the spot).
local M = {}

local uv = vim.loop or vim.uv

--- The clients of a table (0.7-0.10 key them by id) as a list in id order.
local function by_id(clients)
  local out = {}
  for _, client in pairs(clients) do
    table.insert(out, client)
  end
  table.sort(out, function(a, b)
    return a.id < b.id
  end)
  return out
end

--- Clients attached to `bufnr` (0.10+: vim.lsp.get_clients; before: vim.lsp.buf_get_clients).
---@param bufnr integer
---@return table[]
function M.buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return by_id(vim.lsp.buf_get_clients(bufnr) or {})
end

--- Every running client.
---@return table[]
function M.all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return by_id(vim.lsp.get_active_clients())
end

-- 0.11+ clients are objects whose class defines `request`/`notify` as methods (the dot form
-- `client.request(...)` is deprecated there); up to 0.10 `client.request` is a closure.
local function method_style(client, name)
  local mt = getmetatable(client)
  local class = mt and mt.__index
  return type(class) == "table" and type(rawget(class, name)) == "function"
end

--- client.request / client:request: (ok, request_id).
function M.request(client, method, params, handler, bufnr)
  if method_style(client, "request") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- client.notify / client:notify.
function M.notify(client, method, params)
  if method_style(client, "notify") then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- client.cancel_request / client:cancel_request.
function M.cancel_request(client, id)
  if method_style(client, "cancel_request") then
    return client:cancel_request(id)
  end
  if client.cancel_request then
    return client.cancel_request(id)
  end
end

--- Whether the server behind `client` advertises the workspace command `name`.
function M.has_command(client, name)
  local caps = client.server_capabilities or {}
  local provider = caps.executeCommandProvider
  local commands = type(provider) == "table" and provider.commands or {}
  for _, c in ipairs(commands) do
    if c == name then
      return true
    end
  end
  return false
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ":h")
  if up == dir then
    return nil
  end
  return up
end

--- The nearest folder at or above `path` that holds one of `markers` (vim.fs.root is 0.10+).
---@param path string a file or folder
---@param markers string[] names such as ".obsidian", ".git"
---@return string|nil root
function M.find_root(path, markers)
  if not path or path == "" then
    return nil
  end
  path = vim.fn.fnamemodify(path, ":p")
  local dir = path
  local stat = uv.fs_stat(path)
  if not stat or stat.type ~= "directory" then
    dir = vim.fn.fnamemodify(path, ":h")
  end
  dir = dir:gsub("(.)/+$", "%1")
  while dir do
    for _, marker in ipairs(markers or {}) do
      if exists(dir .. "/" .. marker) then
        return uv.fs_realpath(dir) or dir
      end
    end
    dir = parent(dir)
  end
  return nil
end

--- Code actions over lines `first`..`last` (1-based, inclusive) of the current buffer.
--- The API changed in 0.8 in a way no function check shows: `code_action()` gained a `range`
--- option and `range_code_action()` became deprecated, so this one spot asks the version.
function M.range_code_action(first, last, context)
  -- the end column is inclusive here (Neovim adds one unless 'selection' is exclusive)
  local last_len = #(vim.api.nvim_buf_get_lines(0, last - 1, last, false)[1] or "")
  last_len = math.max(last_len - 1, 0)
  if vim.fn.has("nvim-0.8") == 1 then
    vim.lsp.buf.code_action({
      context = context,
      range = { start = { first, 0 }, ["end"] = { last, last_len } },
    })
  else
    vim.lsp.buf.range_code_action(context, { first, 0 }, { last, last_len })
  end
end

--- LSP position of the cursor in the client's encoding.
function M.position_params(client)
  return vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
end

return M
