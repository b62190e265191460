-- :ZettelInstall and where the server command comes from.
--
-- :ZettelInstall makes a virtual environment under stdpath("data") with the user's Python
-- (3.11 or later) and pip-installs zettel-lsp into it, as the VS Code extension's "Install
-- zettel-lsp" does in its global storage. Every step runs as a job: the editor stays usable,
-- pip's output goes to a scratch buffer, and a failure ends with pip's last lines.
--
-- The command: the `cmd` option when it names anything but the plain `zettel-lsp`; else
-- `zettel-lsp` on $PATH; else the one :ZettelInstall put in its environment.
local client = require("zettel_lsp.client")
local config = require("zettel_lsp.config")
local util = require("zettel_lsp.util")

local notify = util.notify

local M = {}

local is_windows = vim.fn.has("win32") == 1
local MIN_PYTHON = { 3, 11 }
local TAIL_LINES = 15

--- The folder of the virtual environment :ZettelInstall makes.
function M.venv_dir()
  return vim.fn.stdpath("data") .. "/zettel-lsp/venv"
end

--- A program of the virtual environment (`python`, `zettel-lsp`).
local function venv_program(name)
  if is_windows then
    return M.venv_dir() .. "/Scripts/" .. name .. ".exe"
  end
  return M.venv_dir() .. "/bin/" .. name
end

--- The `zettel-lsp` executable of the :ZettelInstall environment (it may not exist).
function M.venv_command()
  return venv_program("zettel-lsp")
end

--- Whether `cmd` is the default: the plain name `zettel-lsp`, to be looked up.
local function is_default(cmd)
  return cmd == nil or #cmd == 0 or (#cmd == 1 and cmd[1] == "zettel-lsp")
end

--- The command that starts the server and where it comes from: "option" (the `cmd` option
--- names a program of its own), "PATH", "ZettelInstall" (the environment :ZettelInstall
--- made) or "missing" (none of these: the plain `zettel-lsp`, which will not start).
---@param cmd string[]|string|nil the `cmd` option (nil: the default)
---@return string[] cmd, string source
function M.resolve_cmd(cmd)
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if type(cmd) == "function" or not is_default(cmd) then -- 0.11+ also takes a function
    return cmd, "option"
  end
  if vim.fn.executable("zettel-lsp") == 1 then
    return { "zettel-lsp" }, "PATH"
  end
  if vim.fn.executable(M.venv_command()) == 1 then
    return { M.venv_command() }, "ZettelInstall"
  end
  return { "zettel-lsp" }, "missing"
end

--- The zettel-lsp checkout this plugin is part of (the plugin is `editors/nvim` of the
--- repository), or nil when the plugin was copied out of it.
function M.plugin_checkout()
  local here = debug.getinfo(1, "S").source:gsub("^@", "")
  local repo = vim.fn.fnamemodify(here, ":p:h:h:h:h:h")
  local pyproject = repo .. "/pyproject.toml"
  if vim.fn.filereadable(pyproject) == 0 then
    return nil
  end
  for _, line in ipairs(vim.fn.readfile(pyproject, "", 40)) do
    if line:match('^name%s*=%s*"zettel%-lsp"') then
      return repo
    end
  end
  return nil
end

--- The first Python of `candidates` that is 3.11 or later: its path, or nil and what was
--- found instead.
---@param candidates string[]
---@return string|nil python, string[] tried
function M.find_python(candidates)
  local tried = {}
  local probe = "import sys; print(sys.version_info >= (%d, %d), sys.version.split()[0])"
  probe = string.format(probe, MIN_PYTHON[1], MIN_PYTHON[2])
  for _, name in ipairs(candidates) do
    if vim.fn.executable(name) == 1 then
      local answer = vim.fn.system({ name, "-c", probe })
      local fits, version = answer:match("^(%a+) (%S+)")
      if vim.v.shell_error == 0 and fits == "True" then
        return vim.fn.exepath(name), tried
      end
      table.insert(tried, name .. " is " .. (version or vim.trim(answer)))
    else
      table.insert(tried, name .. " not found")
    end
  end
  return nil, tried
end

--- The Pythons to try: the `python` option alone, else the usual names.
function M.python_candidates()
  local chosen = config.current.python
  if type(chosen) == "string" and chosen ~= "" then
    return { chosen }
  end
  return { "python3", "python", "python3.13", "python3.12", "python3.11" }
end

-- ---------------------------------------------------------------------------- the log buffer

local log = { buf = nil, lines = {} }

--- Show `lines` at the end of the install log (a scratch buffer, in a window when one shows it).
local function show(lines)
  for _, line in ipairs(lines) do
    table.insert(log.lines, line)
  end
  if log.buf == nil or not vim.api.nvim_buf_is_valid(log.buf) then
    return
  end
  vim.api.nvim_buf_set_lines(log.buf, -1, -1, false, lines)
  for _, win in ipairs(vim.fn.win_findbuf(log.buf)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(log.buf), 0 })
  end
end

--- A fresh log buffer in a small split at the bottom (the window the user was in keeps focus).
local function open_log()
  log.lines = {}
  if log.buf == nil or not vim.api.nvim_buf_is_valid(log.buf) then
    log.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[log.buf].bufhidden = "hide"
    pcall(vim.api.nvim_buf_set_name, log.buf, "zettel-lsp install")
  end
  vim.api.nvim_buf_set_lines(log.buf, 0, -1, false, {})
  if #vim.fn.win_findbuf(log.buf) == 0 then
    local previous = vim.api.nvim_get_current_win()
    vim.cmd("botright 10split")
    vim.api.nvim_win_set_buf(0, log.buf)
    vim.api.nvim_set_current_win(previous)
  end
end

--- The lines of the install log so far (for tests and :checkhealth).
function M.log_lines()
  return vim.deepcopy(log.lines)
end

-- ---------------------------------------------------------------------------- the steps

local running = nil -- the job id of the step in progress

--- Run `argv` as a job; its output lines go to the log. `done(code, output_lines)`.
local function step(title, argv, done)
  show({ "$ " .. table.concat(argv, " ") })
  local output = {}
  local partial = { stdout = "", stderr = "" }
  local function collect(_, data, stream)
    -- a job's data: the first item continues the last line, the last one is unfinished
    data[1] = partial[stream] .. data[1]
    partial[stream] = table.remove(data)
    local lines = {}
    for _, line in ipairs(data) do
      table.insert(lines, (line:gsub("\r", "")))
    end
    vim.list_extend(output, lines)
    if #lines > 0 then
      show(lines)
    end
  end
  local started, id = pcall(vim.fn.jobstart, argv, {
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      for _, stream in ipairs({ "stdout", "stderr" }) do
        if partial[stream] ~= "" then
          table.insert(output, partial[stream])
          show({ partial[stream] })
        end
      end
      running = nil
      done(code, output)
    end,
  })
  if not started or id <= 0 then
    running = nil
    done(-1, { title .. ": could not run " .. argv[1] })
    return
  end
  running = id
end

--- The last `n` non-empty lines of `lines`.
local function tail(lines, n)
  local out = {}
  for i = #lines, 1, -1 do
    if vim.trim(lines[i]) ~= "" then
      table.insert(out, 1, lines[i])
      if #out == n then
        break
      end
    end
  end
  return out
end

local function fail(what, output)
  local lines = tail(output, TAIL_LINES)
  show({ "", "zettel-lsp install failed: " .. what })
  notify("install failed: " .. what .. (#lines > 0 and ":\n" .. table.concat(lines, "\n") or "")
    .. "\n(the whole log is in the buffer \"zettel-lsp install\")", vim.log.levels.ERROR)
end

--- Stop the running zettel-lsp clients, then, once they are gone, attach the open notes again
--- (with the command :ZettelInstall made). A timer waits, not the editor.
local function restart_clients()
  for _, c in ipairs(client.clients()) do
    vim.lsp.stop_client(c.id, true)
  end
  if not config.current.autostart then
    return
  end
  local waited = 0
  local function attach_when_stopped()
    if #client.clients() > 0 and waited < 5000 then
      waited = waited + 50
      vim.defer_fn(attach_when_stopped, 50)
      return
    end
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(config.current.filetypes, vim.bo[bufnr].filetype) then
        client.attach(bufnr)
      end
    end
  end
  attach_when_stopped()
end

--- The pip arguments of :ZettelInstall: its own, and the plugin's checkout when they name no
--- source (an argument not starting with "-"). nil: no source to install from.
function M.pip_args(fargs)
  local args, has_source = {}, false
  for _, a in ipairs(fargs or {}) do
    table.insert(args, a)
    if not vim.startswith(a, "-") then
      has_source = true
    end
  end
  if not has_source then
    local checkout = M.plugin_checkout()
    if checkout == nil then
      return nil
    end
    table.insert(args, checkout)
  end
  return args
end

local function finish(on_success)
  local cmd = { M.venv_command(), "--version" }
  step("check", cmd, function(code, output)
    local version = nil
    for _, line in ipairs(output) do
      version = version or line:match("^zettel%-lsp%s+(%S+)")
    end
    if code ~= 0 or version == nil then
      fail(M.venv_command() .. " --version did not answer", output)
      return
    end
    show({ "", "zettel-lsp " .. version .. " is installed: " .. M.venv_command() })
    local _, source = M.resolve_cmd(config.current.cmd)
    local used = source == "ZettelInstall" and "the plugin uses it now"
      or "the plugin keeps using the " .. (source == "PATH" and "zettel-lsp on $PATH" or "cmd option")
    notify("zettel-lsp " .. version .. " installed in " .. M.venv_dir() .. "; " .. used)
    if source == "ZettelInstall" then
      restart_clients()
    end
    if on_success then
      on_success(version)
    end
  end)
end

--- :ZettelInstall [pip options] [{source}]: `source` a folder (a zettel-lsp checkout), a
--- wheel, or anything pip installs; default: the checkout this plugin belongs to.
---@param fargs string[]|nil
---@param on_success fun(version: string)|nil
function M.install(fargs, on_success)
  if running ~= nil then
    notify("an install is already running (see the buffer \"zettel-lsp install\")",
      vim.log.levels.WARN)
    return
  end
  local args = M.pip_args(fargs)
  if args == nil then
    notify("no source to install from: this plugin is not inside a zettel-lsp checkout. Give "
      .. "one: :ZettelInstall /path/to/zettel-lsp (a clone, a wheel or a URL pip accepts)",
      vim.log.levels.ERROR)
    return
  end
  local python, tried = M.find_python(M.python_candidates())
  if python == nil then
    notify("no Python 3.11 or later (" .. table.concat(tried, "; ") .. "). Install one, or "
      .. "name it in setup({ python = \"/path/to/python3.11\" })", vim.log.levels.ERROR)
    return
  end
  open_log()
  show({ "zettel-lsp install into " .. M.venv_dir() .. " with " .. python, "" })
  notify("installing zettel-lsp into " .. M.venv_dir() .. " (progress in the buffer "
    .. "\"zettel-lsp install\")")
  local venv_python = venv_program("python")
  local function pip_install()
    local argv = { venv_python, "-m", "pip", "install", "--upgrade" }
    vim.list_extend(argv, args)
    step("pip install", argv, function(code, output)
      if code ~= 0 then
        fail("pip install " .. table.concat(args, " ") .. " exited with " .. code, output)
        return
      end
      finish(on_success)
    end)
  end
  if vim.fn.executable(venv_python) == 1 then
    pip_install()
    return
  end
  vim.fn.mkdir(vim.fn.fnamemodify(M.venv_dir(), ":h"), "p")
  step("venv", { python, "-m", "venv", M.venv_dir() }, function(code, output)
    if code ~= 0 then
      fail("could not create the virtual environment " .. M.venv_dir(), output)
      return
    end
    pip_install()
  end)
end

--- Whether an install is running.
function M.running()
  return running ~= nil
end

return M
