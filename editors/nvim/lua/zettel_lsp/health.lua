-- :checkhealth zettel_lsp: the server command and its version, Neovim's version, the running
-- clients and their vaults' index state, and how `[[` completion is set up; each problem with
-- what to do about it.
--
-- Neovim 0.10+ reports through vim.health.start/ok/..., 0.8 and 0.9 through
-- vim.health.report_*, 0.7 through the health#report_* functions of autoload/health.vim.
local client = require("zettel_lsp.client")
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local install = require("zettel_lsp.install")
local status = require("zettel_lsp.status")

local M = {}

local VERSION_TIMEOUT_MS = 10000
local STATUS_TIMEOUT_MS = 3000

--- The report functions of this Neovim: start(name), ok(msg), info(msg), warn(msg, advice),
--- error(msg, advice); advice is a list of lines.
local function reporter()
  local h = vim.health or {}
  if h.start then
    return h
  end
  if h.report_start then
    return { start = h.report_start, ok = h.report_ok, info = h.report_info,
      warn = h.report_warn, error = h.report_error }
  end
  local function fn(name)
    return function(...)
      return vim.fn["health#report_" .. name](...)
    end
  end
  return { start = fn("start"), ok = fn("ok"), info = fn("info"), warn = fn("warn"),
    error = fn("error") }
end

--- The output lines of `argv` (stdout, then stderr) and its exit code; nil code on a timeout.
local function run(argv, timeout_ms)
  local text = { stdout = {}, stderr = {} }
  local function collect(_, data, stream)
    -- the pieces of a stream joined with "\n" give its text back
    table.insert(text[stream], table.concat(data, "\n"))
  end
  local ok, id = pcall(vim.fn.jobstart, argv, { on_stdout = collect, on_stderr = collect })
  if not ok or id <= 0 then
    return {}, -1
  end
  local code = vim.fn.jobwait({ id }, timeout_ms)[1]
  if code < 0 then
    vim.fn.jobstop(id)
    code = nil
  end
  local lines = {}
  for _, stream in ipairs({ "stdout", "stderr" }) do
    for _, line in ipairs(vim.split(table.concat(text[stream]), "\n")) do
      line = vim.trim(line)
      if line ~= "" then
        table.insert(lines, line)
      end
    end
  end
  return lines, code
end

local WHERE = {
  option = "the cmd option",
  PATH = "$PATH",
  ZettelInstall = "the virtual environment of :ZettelInstall",
}

local INSTALL_ADVICE = {
  "Run :ZettelInstall (a virtual environment under stdpath(\"data\") with your Python 3.11+)",
  "or install zettel-lsp yourself (pip install /path/to/zettel-lsp) and put it on $PATH",
  "or give its full path: require(\"zettel_lsp\").setup({ cmd = { \"/path/to/zettel-lsp\" } })",
}

local function check_server(r)
  r.start("zettel-lsp server")
  local cmd, source = install.resolve_cmd(config.current.cmd)
  if type(cmd) ~= "table" then
    r.ok("server command: a function of the cmd option (not checked here)")
    return
  end
  local shown = table.concat(cmd, " ")
  if source == "missing" then
    r.error("zettel-lsp is not found: not on $PATH, nor installed by :ZettelInstall in "
      .. install.venv_dir(), INSTALL_ADVICE)
    return
  end
  if vim.fn.executable(cmd[1]) == 0 then
    r.error("the server command of the cmd option is not found: " .. shown, INSTALL_ADVICE)
    return
  end
  local where = WHERE[source]
  if source == "PATH" then
    where = where .. ": " .. vim.fn.exepath(cmd[1])
  end
  r.ok(string.format("server command: %s (from %s)", shown, where))
  if source ~= "ZettelInstall" and vim.fn.executable(install.venv_command()) == 1 then
    r.info("not used: the zettel-lsp of :ZettelInstall, " .. install.venv_command())
  end
  local argv = vim.list_extend(vim.deepcopy(cmd), { "--version" })
  local lines, code = run(argv, VERSION_TIMEOUT_MS)
  local version = nil
  for _, line in ipairs(lines) do
    version = version or line:match("^zettel%-lsp%s+(%S+)")
  end
  if code == 0 and version then
    r.ok("version " .. version)
  elseif code == nil then
    r.error(shown .. " --version did not answer in " .. VERSION_TIMEOUT_MS / 1000 .. " s",
      { "Is the cmd option the zettel-lsp executable?" })
  else
    r.error(string.format("%s --version failed (exit %s): %s", shown, tostring(code),
      table.concat(lines, " | ")),
      { "Run it in a terminal to see why; :ZettelInstall installs a working copy" })
  end
end

local function check_neovim(r)
  r.start("Neovim")
  local v = vim.version()
  local text = string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    r.ok(text .. " (0.7 or later is supported)")
    if vim.fn.has("nvim-0.8") == 0 then
      r.info("lazy.nvim needs Neovim 0.8 or later: on 0.7 add the plugin with packer.nvim or "
        .. "as a native package, see :help zettel_lsp-install")
    end
  else
    r.error(text .. ": the plugin needs Neovim 0.7 or later", { "Upgrade Neovim" })
  end
end

--- zettel.status of `c`, waited for (nil and why when it does not come).
local function status_of(c)
  local done, answer, failure = false, nil, nil
  local params = { command = "zettel.status" }
  local ok = compat.request(c, "workspace/executeCommand", params, function(err, result)
    done, answer, failure = true, result, err
  end)
  if not ok then
    return nil, "the server is not running"
  end
  if not vim.wait(STATUS_TIMEOUT_MS, function() return done end, 20) then
    return nil, "no answer to zettel.status in " .. STATUS_TIMEOUT_MS / 1000 .. " s"
  end
  if failure then
    return nil, tostring(failure.message or vim.inspect(failure))
  end
  return answer, nil
end

local LOG_ADVICE = "Read the LSP log: :execute 'edit' v:lua.vim.lsp.get_log_path()"

--- One vault of a zettel.status answer: its phase as ok/warn/error, its counts as info.
local function check_vault(r, version, vault)
  local what = string.format("vault %s: phase %s", tostring(vault.root), tostring(vault.phase))
  local note = type(vault.note) == "string" and vault.note or ""
  if vault.phase == "ready" then
    r.ok(what)
  elseif vault.phase == "read-only" then
    r.warn(what, { "Another zettel-lsp (another editor) holds this index: close it; "
      .. "answers come from titles and a text scan meanwhile" })
  elseif vault.phase == "failed" then
    r.error(what .. " (" .. note .. ")", { LOG_ADVICE, "Then :ZettelReindex" })
  else
    r.warn(what .. ": still indexing, answers are partial",
      { "Wait for phase ready; :ZettelStatus shows the progress" })
  end
  -- format_status's lines after its header and the vault's "root: phase" line, but for those
  -- with no value yet ("model -, backend -")
  local lines = status.format_status({ version = version, vaults = { vault } })
  for i = 3, #lines do
    local known = false
    for part in lines[i]:gmatch("[^,]+") do
      known = known or not vim.trim(part):match("%s%-$")
    end
    if known then
      r.info(vim.trim(lines[i]))
    end
  end
end

local function check_clients(r)
  r.start("Clients and index")
  local clients = client.clients()
  if #clients == 0 then
    r.warn("no zettel-lsp client is running", {
      "Open a Markdown note inside a folder with one of "
        .. table.concat(config.current.root_markers or {}, ", ") .. " (the vault)",
      config.current.autostart and "setup() starts the server for those notes"
        or "autostart = false: start the server yourself (e.g. vim.lsp.enable)",
    })
    return
  end
  for _, c in ipairs(clients) do
    local cmd = type(c.config.cmd) == "table" and table.concat(c.config.cmd, " ") or "?"
    r.ok(string.format("client %d for %s: %s (%s)", c.id, tostring(c.config.root_dir),
      c.initialized and "running" or "starting", cmd))
    local answer, why = status_of(c)
    if answer == nil then
      r.warn("client " .. c.id .. ": no index state (" .. why .. ")", { LOG_ADVICE })
    elseif #(answer.vaults or {}) == 0 then
      r.warn("client " .. c.id .. " serves no vault yet", { ":ZettelStatus" })
    else
      for _, vault in ipairs(answer.vaults) do
        check_vault(r, answer.version, vault)
      end
    end
  end
end

--- The buffers a client is attached to.
local function attached_buffers(c)
  if type(c.attached_buffers) == "table" then
    return vim.tbl_keys(c.attached_buffers)
  end
  return vim.lsp.get_buffers_by_client_id(c.id)
end

local function has_module(name)
  return package.loaded[name] ~= nil or (pcall(require, name))
end

local function check_completion(r)
  r.start("Completion after [[")
  local cmp, blink = has_module("cmp"), has_module("blink.cmp")
  if cmp then
    if has_module("cmp_nvim_lsp") then
      r.ok("nvim-cmp with cmp-nvim-lsp: pass its capabilities to setup()")
    else
      r.warn("nvim-cmp without cmp-nvim-lsp: it does not ask the server",
        { "Install hrsh7th/cmp-nvim-lsp and add { name = \"nvim_lsp\" } to its sources" })
    end
  end
  if blink then
    r.ok("blink.cmp: its \"lsp\" source asks the server")
  end
  if config.current.omnifunc == false then
    if not (cmp or blink) then
      r.warn("omnifunc = false and no completion plugin: nothing completes [[ links",
        { "Leave omnifunc on (<C-x><C-o> completes), or set up nvim-cmp or blink.cmp "
          .. "; see :help zettel_lsp-completion" })
    end
    return
  end
  local checked = 0
  for _, c in ipairs(client.clients()) do
    for _, bufnr in ipairs(attached_buffers(c)) do
      if vim.api.nvim_buf_is_valid(bufnr) then
        checked = checked + 1
        local omnifunc = vim.bo[bufnr].omnifunc
        local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
        if omnifunc == client.OMNIFUNC then
          r.ok(string.format("%s: 'omnifunc' is the LSP's (<C-x><C-o> after [[)", name))
        else
          r.warn(string.format("%s: 'omnifunc' is %q, not the LSP's", name, omnifunc),
            { ":verbose setlocal omnifunc? shows who set it; the plugin sets it when the "
              .. "server attaches" })
        end
      end
    end
  end
  if checked == 0 then
    r.info("the plugin sets 'omnifunc' to the LSP's in the notes the server attaches to")
  end
end

--- :checkhealth zettel_lsp
function M.check()
  local r = reporter()
  check_server(r)
  check_neovim(r)
  check_clients(r)
  check_completion(r)
end

return M
