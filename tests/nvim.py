"""Run a Lua script in headless Neovim for the editor tests; shared by tests/server and
tests/editors.

Values reach the script through a JSON file named by ``$ZETTEL_NVIM_PARAMS`` (no quoting of
paths inside Lua); the script writes its report to ``params["output"]``. The editor runs in its
own process group, so a timeout also kills the language server it started. With ``quit=False``
Neovim stays in its main loop after the script (typed keys run, CursorMoved and CursorHold fire
as for a user) until the script itself quits.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

NVIM = os.environ.get("ZETTEL_TEST_NVIM") or shutil.which("nvim")

# The start of a test script that runs the server with the built-in client: P (the params),
# out (the report: nvim version, messages, the last log lines), request(), open(), wait_ready(),
# start(extra_handlers) and run(main): main under xpcall (any error lands in out.error), the
# client stopped with shutdown + exit, the report written, Neovim quit. Params: cmd, vault,
# cache_dir, index_dir, ready_timeout_ms, output.
LUA_SESSION = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local out = { nvim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
  .. "." .. tostring(vim.version().patch), messages = {}, log = {} }
local client_id = nil

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

-- One request to our client through buf_request_sync: (result, nil) or (nil, reason).
local function request(bufnr, method, params, timeout_ms)
  local resp, reason = vim.lsp.buf_request_sync(bufnr, method, params, timeout_ms)
  if resp == nil then
    return nil, method .. ": no response (" .. tostring(reason) .. ")"
  end
  local r = resp[client_id]
  if r == nil then
    return nil, method .. ": no answer from client " .. tostring(client_id)
  end
  local err = r.error or r.err -- 0.7 says "error", older releases "err"
  if err ~= nil and err ~= vim.NIL then
    return nil, method .. ": error " .. vim.inspect(err)
  end
  return r.result, nil
end

local function open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(P.vault .. "/" .. rel))
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.lsp.buf_attach_client(bufnr, client_id) then
    error("buf_attach_client failed for " .. rel)
  end
  return bufnr
end

-- Until zettel.status reports every vault ready.
local function wait_ready(bufnr)
  local deadline = now_ms() + P.ready_timeout_ms
  local status, why
  while true do
    status, why = request(bufnr, "workspace/executeCommand",
      { command = "zettel.status", arguments = {} }, 2000)
    out.status = status
    if type(status) == "table" and type(status.vaults) == "table" and #status.vaults > 0 then
      local ready = true
      for _, v in ipairs(status.vaults) do
        if v.phase ~= "ready" then
          ready = false
        end
      end
      if ready then
        return
      end
    end
    if now_ms() > deadline then
      error("server not ready in " .. P.ready_timeout_ms .. " ms; last status: "
        .. vim.inspect(status) .. " " .. tostring(why))
    end
    vim.wait(200)
  end
end

-- Start the server on P.vault and wait for initialize; extra handlers beside the log ones.
local function start(extra_handlers)
  local handlers = {
    ["window/showMessage"] = function(_, result)
      table.insert(out.messages, result)
    end,
    ["window/logMessage"] = function(_, result)
      table.insert(out.log, result.message)
      if #out.log > 80 then
        table.remove(out.log, 1)
      end
    end,
  }
  for method, fn in pairs(extra_handlers or {}) do
    handlers[method] = fn
  end
  client_id = vim.lsp.start_client({
    name = "zettel-lsp",
    cmd = P.cmd,
    cmd_cwd = P.vault,
    root_dir = P.vault,
    workspace_folders = { { uri = vim.uri_from_fname(P.vault), name = "vault" } },
    init_options = { cacheDir = P.cache_dir, indexDir = P.index_dir },
    handlers = handlers,
    on_exit = function(code, sig)
      out.server_exit = { code = code, signal = sig }
    end,
  })
  if not client_id then
    error("vim.lsp.start_client returned nil")
  end
  local initialized = vim.wait(60000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return c ~= nil and c.initialized == true
  end, 50)
  if not initialized then
    error("the server did not answer initialize in 60 s")
  end
end

local function stop()
  vim.lsp.stop_client(client_id) -- shutdown + exit rather than the 0.5 s exit handler's kill
  return vim.wait(15000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 50)
end

local function run(main)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    out.error = tostring(err)
  end
  if client_id and vim.lsp.get_client_by_id(client_id) then
    out.stopped = stop()
  end
  local wrote, werr = pcall(function()
    vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
  end)
  if not wrote then
    io.stderr:write("writing the output failed: " .. tostring(werr) .. "\n")
  end
  vim.cmd("qa!")
end
"""
NVIM_TIMEOUT = 240.0  # one editor session: server start, indexing and the scenario


def session_params(work: Path, vault: Path, ready_timeout_ms: int, **extra: Any) -> dict[str, Any]:
    """The params :data:`LUA_SESSION` reads: this Python's server on ``vault``, its cache and
    index in ``work``, the report at ``work/out.json``; ``extra`` for the script's own part."""
    return {
        "cmd": [sys.executable, "-m", "zettel_lsp"],
        "vault": str(vault),
        "cache_dir": str(work / "cache"),
        "index_dir": str(work / "index"),
        "output": str(work / "out.json"),
        "ready_timeout_ms": ready_timeout_ms,
        **extra,
    }


def run_headless(
    script: str,
    params: dict[str, Any],
    work: Path,
    *,
    rtp: Path | None = None,
    quit: bool = True,
) -> tuple[dict[str, Any] | None, str]:
    """(the script's JSON report or None, a diagnostic text: how nvim ended, its output and the
    tail of lsp.log)."""
    assert NVIM is not None
    script_file = work / "zettel_test.lua"
    script_file.write_text(script, encoding="utf-8")
    params_file = work / "params.json"
    params_file.write_text(json.dumps(params), encoding="utf-8")
    env = dict(os.environ)
    env["ZETTEL_NVIM_PARAMS"] = str(params_file)
    env["ZETTEL_NVIM_SCRIPT"] = str(script_file)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[var] = str(work / var.lower())  # keeps lsp.log and shada out of $HOME
    # -u NONE: no user config or plugins; -i NONE: no shada; -n: no swap files
    command = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    if rtp is not None:
        command += ["--cmd", f"set rtp+={rtp}"]
    command += ["-c", "lua dofile(os.getenv('ZETTEL_NVIM_SCRIPT'))"]
    if quit:
        command += ["-c", "qa!"]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=work,
        env=env,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=NVIM_TIMEOUT)
        ended = f"nvim exited with {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        ended = f"nvim killed after {NVIM_TIMEOUT} s"
    with contextlib.suppress(ProcessLookupError):  # a server the editor left behind
        os.killpg(proc.pid, signal.SIGTERM)
    lsp_log = work / "xdg_state_home" / "nvim" / "lsp.log"
    if not lsp_log.is_file():
        lsp_log = work / "xdg_cache_home" / "nvim" / "lsp.log"  # Neovim < 0.8
    log_tail = lsp_log.read_text(errors="replace")[-4000:] if lsp_log.is_file() else ""
    diagnostic = f"{ended}\n--- nvim output:\n{output.decode(errors='replace')[-4000:]}"
    diagnostic += f"\n--- lsp.log (tail):\n{log_tail}"
    out_file = Path(params["output"])
    if not out_file.is_file():
        return None, diagnostic
    return json.loads(out_file.read_text(encoding="utf-8")), diagnostic
