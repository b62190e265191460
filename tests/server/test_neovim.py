"""End to end in a real editor: headless Neovim (Debian's ``neovim``, 0.7.x) runs the server.

A Lua script starts the server with ``vim.lsp.start_client`` on a copy of examples/vault,
attaches it to buffers on two cards, waits for ``zettel.status`` to say every vault is ready,
then asks ``workspace/symbol`` and ``textDocument/hover`` through ``vim.lsp.buf_request_sync``
and writes the raw answers as JSON for the assertions below. ``scripts/setup-neovim.sh``
installs Neovim in the test set-up; without ``nvim`` on PATH the module is skipped.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.nvim import NVIM, run_headless

pytestmark = pytest.mark.skipif(
    NVIM is None,
    reason="nvim not on PATH (bash scripts/setup-neovim.sh installs Debian's neovim)",
)

READY_TIMEOUT_MS = 180_000
QUERY = "fusing ranked lists from BM25 and embeddings"
LINK_CARD = "retrieval/TF-IDF.md"
LINK_TEXT = "[[BM25#Saturation"
PROSE_CARD = "retrieval/BM25.md"
PROSE_TEXT = "k1 controls how quickly saturation sets in."

# Inputs come from the JSON file named by $ZETTEL_NVIM_PARAMS (no quoting of paths in Lua).
# Everything runs under xpcall: any error lands in the output JSON's "error" field.
LUA_SCRIPT = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local out = { nvim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
  .. "." .. tostring(vim.version().patch), messages = {}, log = {} }
local client_id = nil

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

local function write_out()
  vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
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

local function main()
  client_id = vim.lsp.start_client({
    name = "zettel-lsp",
    cmd = P.cmd,
    cmd_cwd = P.vault,
    root_dir = P.vault,
    workspace_folders = { { uri = vim.uri_from_fname(P.vault), name = "vault" } },
    init_options = { cacheDir = P.cache_dir, indexDir = P.index_dir },
    handlers = {
      ["window/showMessage"] = function(_, result)
        table.insert(out.messages, result)
      end,
      ["window/logMessage"] = function(_, result)
        table.insert(out.log, result.message)
        if #out.log > 50 then
          table.remove(out.log, 1)
        end
      end,
    },
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

  local link_buf = open(P.link_card)
  local prose_buf = open(P.prose_card)

  -- Wait for zettel.status to report every vault ready.
  local deadline = now_ms() + P.ready_timeout_ms
  local status, why
  while true do
    status, why = request(link_buf, "workspace/executeCommand",
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
        break
      end
    end
    if now_ms() > deadline then
      error("server not ready in " .. P.ready_timeout_ms .. " ms; last status: "
        .. vim.inspect(status) .. " " .. tostring(why))
    end
    vim.wait(200)
  end

  out.symbols, out.symbols_error = request(link_buf, "workspace/symbol", { query = P.query }, 30000)
  out.link_hover, out.link_hover_error = request(link_buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(link_buf) },
    position = P.link_pos,
  }, 30000)
  out.prose_hover, out.prose_hover_error = request(prose_buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(prose_buf) },
    position = P.prose_pos,
  }, 30000)

  vim.lsp.stop_client(client_id)
  out.stopped = vim.wait(15000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 50)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  out.error = tostring(err)
  if client_id and vim.lsp.get_client_by_id(client_id) then
    vim.lsp.stop_client(client_id) -- shutdown + exit rather than the 0.5 s exit handler's kill
    vim.wait(15000, function()
      return vim.lsp.get_client_by_id(client_id) == nil
    end, 50)
  end
end
local wrote, werr = pcall(write_out)
if not wrote then
  io.stderr:write("writing the output failed: " .. tostring(werr) .. "\n")
end
vim.cmd("qa!")
"""


def utf16_position(text: str, needle: str, shift: int = 0) -> dict[str, int]:
    """The LSP position (0-based line, UTF-16 character) of ``needle`` in ``text``, + ``shift``."""
    offset = text.index(needle) + shift
    line = text.count("\n", 0, offset)
    prefix = text[text.rfind("\n", 0, offset) + 1 : offset]
    return {"line": line, "character": len(prefix.encode("utf-16-le")) // 2}


def uri_path(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return Path(unquote(parsed.path))


def run_nvim(params: dict[str, Any], work: Path) -> tuple[dict[str, Any] | None, str]:
    """Run the Lua script in headless Neovim; (its JSON output or None, a diagnostic text)."""
    return run_headless(LUA_SCRIPT, params, work)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One Neovim session over a fresh copy of the example vault; its answers as JSON."""
    work = tmp_path_factory.mktemp("neovim")
    vault = work / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    link_text = (vault / LINK_CARD).read_text(encoding="utf-8")
    prose_text = (vault / PROSE_CARD).read_text(encoding="utf-8")
    params = {
        "cmd": [sys.executable, "-m", "zettel_lsp"],
        "vault": str(vault),
        "cache_dir": str(work / "cache"),
        "index_dir": str(work / "index"),
        "output": str(work / "out.json"),
        "ready_timeout_ms": READY_TIMEOUT_MS,
        "query": QUERY,
        "link_card": LINK_CARD,
        "prose_card": PROSE_CARD,
        # inside the link, past "[[" and on "BM25"
        "link_pos": utf16_position(link_text, LINK_TEXT, shift=3),
        "prose_pos": utf16_position(prose_text, PROSE_TEXT, shift=5),
    }
    out, diagnostic = run_nvim(params, work)
    assert out is not None, f"the Lua script wrote no output\n{diagnostic}"
    assert "error" not in out, f"Lua error: {out['error']}\n{out}\n{diagnostic}"
    out["vault"] = str(vault)
    out["link_start"] = utf16_position(link_text, LINK_TEXT)
    out["diagnostic"] = diagnostic
    return out


def test_neovim_session_is_clean(session: dict[str, Any]) -> None:
    assert session["nvim"].startswith("0."), session["nvim"]
    vaults = session["status"]["vaults"]
    assert [v["phase"] for v in vaults] == ["ready"]
    assert session["stopped"], f"the server did not stop: {session['diagnostic']}"
    assert session.get("server_exit", {}).get("code") == 0, session.get("server_exit")
    errors = [m for m in session["messages"] if m.get("type") == 1]
    assert not errors, f"the server showed errors: {errors}"


def test_workspace_symbol_finds_the_card(session: dict[str, Any]) -> None:
    assert session.get("symbols_error") is None, session["symbols_error"]
    symbols = session["symbols"]
    assert isinstance(symbols, list) and symbols, f"no symbols: {session}"
    first = symbols[0]
    assert first["name"] == "Reciprocal rank fusion"
    uri = first["location"]["uri"]
    want = Path(session["vault"]) / "retrieval" / "Reciprocal rank fusion.md"
    assert uri.endswith("retrieval/Reciprocal%20rank%20fusion.md") or uri_path(uri) == want, uri
    assert uri_path(uri).resolve() == want.resolve()


def test_hover_on_a_wikilink_shows_the_target_card(session: dict[str, Any]) -> None:
    assert session.get("link_hover_error") is None, session["link_hover_error"]
    hover = session["link_hover"]
    assert isinstance(hover, dict), f"no hover: {hover!r}"
    contents = hover["contents"]
    assert contents["kind"] == "markdown"
    first_line = contents["value"].split("\n", 1)[0]
    assert first_line.startswith("### [BM25]("), contents["value"]
    target = uri_path(first_line[len("### [BM25](") : first_line.rindex(")")])
    assert target.resolve() == (Path(session["vault"]) / "retrieval" / "BM25.md").resolve()
    # the preview is the linked section
    assert "saturate" in contents["value"]
    # the range is the whole link, on line 17 of the card
    start = session["link_start"]
    assert start["line"] == 16
    link = "[[BM25#Saturation and the k1 parameter]]"
    end = {"line": 16, "character": start["character"] + len(link)}
    assert hover["range"] == {"start": start, "end": end}


def test_hover_on_prose_lists_related_notes(session: dict[str, Any]) -> None:
    assert session.get("prose_hover_error") is None, session["prose_hover_error"]
    hover = session["prose_hover"]
    assert isinstance(hover, dict), f"no hover: {hover!r}"
    assert hover["contents"]["kind"] == "markdown"
    value = hover["contents"]["value"]
    assert "**Related notes**" in value
    assert "](file://" in value, value
