"""End to end in a real editor: headless Neovim (Debian's ``neovim``, 0.7.x) runs the server.

A Lua script starts the server with ``vim.lsp.start_client`` on a copy of examples/vault,
attaches it to buffers on two cards, waits for ``zettel.status`` to say every vault is ready,
then asks ``workspace/symbol`` and ``textDocument/hover`` through ``vim.lsp.buf_request_sync``
and writes the raw answers as JSON for the assertions below. ``scripts/setup-neovim.sh``
installs Neovim in the test set-up; without ``nvim`` on PATH the module is skipped.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.nvim import LUA_SESSION, NVIM, run_headless, session_params

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
LUA_SCRIPT = (
    LUA_SESSION
    + r"""
run(function()
  start()
  local link_buf = open(P.link_card)
  local prose_buf = open(P.prose_card)
  wait_ready(link_buf)

  out.symbols, out.symbols_error = request(link_buf, "workspace/symbol", { query = P.query }, 30000)
  out.link_hover, out.link_hover_error = request(link_buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(link_buf) },
    position = P.link_pos,
  }, 30000)
  out.prose_hover, out.prose_hover_error = request(prose_buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(prose_buf) },
    position = P.prose_pos,
  }, 30000)
  out.stopped = stop()
end)
"""
)


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
    params = session_params(
        work,
        vault,
        READY_TIMEOUT_MS,
        query=QUERY,
        link_card=LINK_CARD,
        prose_card=PROSE_CARD,
        # inside the link, past "[[" and on "BM25"
        link_pos=utf16_position(link_text, LINK_TEXT, shift=3),
        prose_pos=utf16_position(prose_text, PROSE_TEXT, shift=5),
    )
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
