"""``:checkhealth zettel_lsp`` and ``:ZettelInstall`` in headless Neovim (0.7 in CI).

The health check reports the server command (where it was found) and its ``--version``, the
Neovim version, each running client with its vaults' index state (``zettel.status``), and how
``[[`` completion is set up; a missing command is an error with what to do. ``:ZettelInstall``
makes a virtual environment under ``stdpath("data")`` with the given Python and pip-installs a
source into it as jobs; the plugin then starts that environment's ``zettel-lsp``. Installing the
real package pulls its dependencies from PyPI (minutes), so the install test gives pip a small
wheel made here, whose ``zettel-lsp`` prints a version and otherwise reads stdin, with
``--no-index``: offline, a few seconds (most of them ``python -m venv``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.nvim import NVIM, run_headless
from zettel_lsp import __version__

PLUGIN = Path(os.environ.get("ZETTEL_TEST_NVIM_PLUGIN") or ROOT / "editors" / "nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not on PATH")

FAKE_VERSION = "9.9.9"

LUA_HEAD = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local out = { notifications = {} }
vim.notify = function(msg, level)
  table.insert(out.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local function wait_for(what, cond, timeout)
  if not vim.wait(timeout or 60000, cond, 50) then
    error("timed out waiting for " .. what .. "; notifications: " .. vim.inspect(out.notifications))
  end
end

-- The lines :checkhealth zettel_lsp writes (it opens them in a new tab).
local function checkhealth()
  vim.cmd("checkhealth zettel_lsp")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("tabclose")
  return lines
end

local function finish(main)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    out.error = tostring(err)
  end
  for _, c in ipairs(vim.lsp.get_active_clients()) do
    vim.lsp.stop_client(c.id, true)
  end
  vim.wait(5000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
  vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
  vim.cmd("qa!")
end
"""

LUA_MISSING = (
    LUA_HEAD
    + r"""
finish(function()
  local zettel = require("zettel_lsp")
  zettel.setup({ cmd = P.cmd, autostart = false })
  out.health = checkhealth()
  local found, install = pcall(require, "zettel_lsp.install")
  if found then
    out.checkout = install.plugin_checkout()
    out.default_args = install.pip_args({ "--quiet" })
  end
end)
"""
)

LUA_RUNNING = (
    LUA_HEAD
    + r"""
finish(function()
  vim.cmd("filetype plugin on")
  local zettel = require("zettel_lsp")
  zettel.setup({ cmd = P.cmd, init_options = { cacheDir = P.cache_dir, indexDir = P.index_dir } })
  vim.cmd("edit " .. vim.fn.fnameescape(P.card))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_for("the client", function()
    local c = zettel.get_client(bufnr)
    return c ~= nil and c.initialized == true
  end)
  out.health_starting = checkhealth()
  local ready = false
  wait_for("the vault to be ready", function()
    local done = false
    zettel.execute(zettel.get_client(bufnr), bufnr, "zettel.status", nil, function(result)
      local vault = (result.vaults or {})[1]
      ready, done = vault ~= nil and vault.phase == "ready", true
    end)
    vim.wait(5000, function() return done end, 20)
    return ready
  end, 120000)
  out.health = checkhealth()
end)
"""
)

LUA_INSTALL = (
    LUA_HEAD
    + r"""
local install = nil -- zettel_lsp.install, required in main (so that its absence is reported)

-- :ZettelInstall with these arguments; true once it returned and the install is running.
local function run_install(args)
  vim.cmd("ZettelInstall " .. table.concat(args, " "))
  local started = install.running()
  wait_for("the install to end", function() return not install.running() end, 120000)
  return started
end

finish(function()
  vim.env.PATH = P.path -- no zettel-lsp on it
  vim.cmd("filetype on")
  local zettel = require("zettel_lsp")
  zettel.setup({ python = P.python })
  out.commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
  install = require("zettel_lsp.install")
  out.before = { install.resolve_cmd(zettel.config.cmd) }
  -- a note of a vault: no server to start yet, and the plugin says what to do
  vim.cmd("edit " .. vim.fn.fnameescape(P.card))
  out.clients_before = #zettel.clients()
  out.told_before = vim.deepcopy(out.notifications)
  out.health_before = checkhealth()

  local first = #out.notifications
  out.bad_started = run_install({ "--no-index", vim.fn.fnameescape(P.missing_wheel) })
  out.bad = vim.list_slice(out.notifications, first + 1)

  first = #out.notifications
  out.good_started = run_install({ "--no-index", vim.fn.fnameescape(P.wheel) })
  out.good = vim.list_slice(out.notifications, first + 1)
  out.log = install.log_lines()
  out.after = { install.resolve_cmd(zettel.config.cmd) }
  out.venv = install.venv_dir()
  -- the open note gets a client with the installed command (the stand-in never answers
  -- initialize, so it stays among the starting clients, which get_client_by_id also finds)
  local started = nil
  wait_for("a client with the installed command", function()
    for id = 1, 10 do
      started = started or vim.lsp.get_client_by_id(id)
    end
    return started ~= nil
  end, 10000)
  out.client_cmd = started.config.cmd
  out.client_root = started.config.root_dir
  vim.lsp.stop_client(started.id, true)
  wait_for("the client to stop", function()
    return vim.lsp.get_client_by_id(started.id) == nil
  end, 10000)
  out.health_after = checkhealth()
end)
"""
)


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Sourdough.md").write_text(
        "# Sourdough\n\nWild yeast and lactic acid bacteria. See [[Starter]].\n", encoding="utf-8"
    )
    (vault / "Starter.md").write_text(
        "# Starter\n\nFlour and water, fed daily.\n", encoding="utf-8"
    )
    return vault


def _run(script: str, tmp_path: Path, **params: Any) -> dict[str, Any]:
    params["output"] = str(tmp_path / "out.json")
    result, diagnostic = run_headless(script, params, tmp_path, rtp=PLUGIN)
    assert result is not None, diagnostic
    assert "error" not in result, f"{result['error']}\n{diagnostic}"
    return result


def _is_title(line: str) -> bool:
    return line.startswith("## ") or line.rstrip().endswith(" ~")  # 0.7-0.9, 0.10+


def _section(lines: list[str], title: str) -> list[str]:
    """The lines of one section of the health report (up to the next section's title)."""
    titles = [i for i, line in enumerate(lines) if _is_title(line) and title in line]
    assert titles, f"no section {title!r} in:\n" + "\n".join(lines)
    start = titles[0]
    rest = lines[start + 1 :]
    end = next((i for i, line in enumerate(rest) if _is_title(line) or "=====" in line), None)
    return rest[:end] if end is not None else rest


def _fake_wheel(folder: Path) -> Path:
    """A wheel of a distribution named zettel-lsp whose ``zettel-lsp`` script prints a version."""
    dist_info = f"zettel_lsp-{FAKE_VERSION}.dist-info"
    files = {
        "fake_zettel_server.py": (
            "import sys\n\n\ndef main():\n"
            "    if '--version' in sys.argv:\n"
            f"        print('zettel-lsp {FAKE_VERSION}')\n"
            "        return 0\n"
            "    sys.stdin.read()\n"
            "    return 0\n"
        ),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: zettel-lsp\nVersion: {FAKE_VERSION}\n"
        ),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{dist_info}/entry_points.txt": (
            "[console_scripts]\nzettel-lsp = fake_zettel_server:main\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{name},sha256={b64},{len(text.encode())}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"zettel_lsp-{FAKE_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return wheel


def _path_without_zettel_lsp() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "zettel-lsp").exists())


def test_checkhealth_says_the_server_is_missing_and_what_to_do(tmp_path: Path) -> None:
    result = _run(LUA_MISSING, tmp_path, cmd=[str(tmp_path / "no-such-zettel-lsp")])
    lines = result["health"]
    text = "\n".join(lines)
    assert "No healthcheck found" not in text, text
    server = "\n".join(_section(lines, "zettel-lsp server"))
    assert "ERROR" in server and "cmd option" in server and "not found" in server, text
    assert "no-such-zettel-lsp" in server, text
    assert ":ZettelInstall" in server and "cmd" in server, text  # the advice
    neovim = "\n".join(_section(lines, "Neovim"))
    assert "OK" in neovim and "Neovim 0." in neovim, text
    clients = "\n".join(_section(lines, "Clients and index"))
    assert "WARNING" in clients and "no zettel-lsp client is running" in clients, text
    assert ".obsidian" in clients, text
    assert "Completion after [[" in text, text
    # :ZettelInstall's default source: the checkout the plugin is part of
    assert result["checkout"] == str(ROOT)
    assert result["default_args"] == ["--quiet", str(ROOT)]


def test_checkhealth_reports_version_client_index_and_omnifunc(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    result = _run(
        LUA_RUNNING,
        tmp_path,
        cmd=[sys.executable, "-m", "zettel_lsp"],
        card=str(vault / "Sourdough.md"),
        cache_dir=str(tmp_path / "cache"),
        index_dir=str(tmp_path / "index"),
    )
    lines = result["health"]
    text = "\n".join(lines)
    server = "\n".join(_section(lines, "zettel-lsp server"))
    assert "ERROR" not in server and "WARNING" not in server, text
    assert f"{sys.executable} -m zettel_lsp (from the cmd option)" in server, text
    assert f"version {__version__}" in server, text
    # while the server starts, the vault's phase is a warning: answers are partial
    starting = "\n".join(_section(result["health_starting"], "Clients and index"))
    assert f"for {vault.resolve()}: running" in starting, starting
    assert "WARNING" in starting or "phase ready" in starting, starting
    clients = "\n".join(_section(lines, "Clients and index"))
    assert "WARNING" not in clients and "ERROR" not in clients, text
    assert f"for {vault.resolve()}: running" in clients, text
    assert f"OK: vault {vault.resolve()}: phase ready" in clients, text
    assert "cards 2, chunks " in clients and "index dir " in clients, text  # zettel.status
    completion = "\n".join(_section(lines, "Completion after [["))
    assert "Sourdough.md: 'omnifunc' is the LSP's" in completion, text


def test_zettel_install_makes_a_venv_and_the_plugin_uses_it(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = _fake_wheel(wheels)
    result = _run(
        LUA_INSTALL,
        tmp_path,
        python=sys.executable,
        path=_path_without_zettel_lsp(),
        card=str(vault / "Sourdough.md"),
        wheel=str(wheel),
        missing_wheel=str(wheels / "zettel_lsp-0.0.1-py3-none-any.whl"),
    )
    venv = tmp_path / "xdg_data_home" / "nvim" / "zettel-lsp" / "venv"
    assert result["venv"] == str(venv)
    assert "ZettelInstall" in result["commands"]
    assert result["before"] == [["zettel-lsp"], "missing"]
    assert result["clients_before"] == 0
    told = [n["msg"] for n in result["told_before"]]
    assert len(told) == 1 and "not found: run :ZettelInstall" in told[0], told
    before = "\n".join(_section(result["health_before"], "zettel-lsp server"))
    assert "ERROR" in before and "not on $PATH" in before and str(venv) in before, before
    assert "Run :ZettelInstall" in before, before
    # a source pip cannot install: an error with pip's own last lines
    assert result["bad_started"], "the install ran in the foreground"
    errors = [n["msg"] for n in result["bad"] if n["level"] == 4]
    assert len(errors) == 1, result["bad"]
    assert "install failed: pip install" in errors[0], errors
    assert "zettel_lsp-0.0.1-py3-none-any.whl" in errors[0].split("\n", 1)[1], errors
    # the wheel: installed, the plugin now starts the venv's zettel-lsp
    assert result["good_started"]
    assert not [n for n in result["good"] if n["level"] >= 3], result["good"]
    assert any(
        f"zettel-lsp {FAKE_VERSION} installed" in n["msg"] and "uses it now" in n["msg"]
        for n in result["good"]
    ), result["good"]
    command = str(venv / "bin" / "zettel-lsp")
    assert (venv / "bin" / "python").exists() and Path(command).is_file()
    assert result["after"] == [[command], "ZettelInstall"]
    assert result["client_cmd"] == [command]
    assert result["client_root"] == str(vault.resolve())
    assert any("pip install --upgrade --no-index" in line for line in result["log"]), result["log"]
    after = "\n".join(_section(result["health_after"], "zettel-lsp server"))
    assert "ERROR" not in after, after
    assert f"{command} (from the virtual environment of :ZettelInstall)" in after, after
    assert f"version {FAKE_VERSION}" in after, after
