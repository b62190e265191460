"""`[[` completion in Neovim through 'omnifunc' with the documented set-up (headless Neovim, the
plugin, the real server on a small vault in tmp_path).

Markdown's ftplugin (``filetype plugin on``, as in every user's Neovim) sets 'omnifunc' to
``htmlcomplete#CompleteTags``, and Neovim only sets the LSP's 'omnifunc' in buffers that have
none: the plugin sets ``v:lua.vim.lsp.omnifunc`` where the server attaches, unless
``setup({ omnifunc = false })``. The keys are typed as a user types them: ``o[[Sourd`` then
``<C-x><C-o>``; the completion items are read from ``complete_info()`` in Insert mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.editors.test_nvim_plugin import plugin_errors, run_session, server_errors

OMNI_SCENARIO = r"""
-- Markdown's ftplugin, on before setup() as in a user's config.
vim.cmd("filetype plugin on")

-- Open a note, read its 'omnifunc' once attached, type [[ and a prefix, <C-x><C-o> (async).
scenarios.omni = function()
  vim.opt.completeopt = { "menuone", "noselect" }
  local bufnr = open(P.card)
  wait_ready(bufnr)
  idle(300) -- on_attach and the FileType autocommands have run
  out.omnifunc = vim.bo[bufnr].omnifunc
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  type_keys("o[[" .. P.prefix .. "<C-x><C-o>")
  local function items()
    local info = vim.fn.complete_info({ "items" })
    return info.items or {}
  end
  local waited = 0
  while #items() == 0 and waited < P.wait_ms do
    idle(100)
    waited = waited + 100
  end
  out.mode = vim.api.nvim_get_mode().mode
  out.words = {}
  for _, item in ipairs(items()) do
    table.insert(out.words, item.word)
  end
  -- choose the first item, as <C-n> and <C-y> do in the menu
  type_keys("<C-n><C-y>")
  idle(200)
  out.line = vim.api.nvim_get_current_line()
  type_keys("<Esc>")
  idle(100)
  vim.bo[bufnr].modified = false
  vim.cmd("edit!") -- FileType again: the ftplugin sets its 'omnifunc' again
  idle(300)
  out.omnifunc_after_edit = vim.bo[bufnr].omnifunc
  if P.second_card then -- the option is read at each attach
    zettel.config.omnifunc = true
    local other = open(P.second_card)
    idle_until("the client on the second note", function()
      return zettel.get_client(other) ~= nil
    end)
    idle(300)
    out.second_omnifunc = vim.bo[other].omnifunc
  end
end
"""

CARDS = {
    "Hydration.md": "# Hydration\n\nThe water to flour ratio of a dough.\n",
    "Sourdough starter.md": "# Sourdough starter\n\nFlour and water, fermented.\n",
    "Sourdough bread.md": "# Sourdough bread\n\nBread raised by a starter.\n",
    "Crumb.md": "# Crumb\n\nThe inside of a loaf.\n",
}


def small_vault(work: Path) -> Path:
    """Four short cards and an .obsidian folder (the plugin's root marker)."""
    vault = work / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    for name, text in CARDS.items():
        (vault / name).write_text(text, encoding="utf-8")
    return vault


def omni_session(work: Path, wait_ms: int, **extra: Any) -> tuple[dict[str, Any], str]:
    vault = small_vault(work)
    params = {
        **extra,
        "scenario": "omni",
        "vault": str(vault),
        "card": "Hydration.md",
        "prefix": "Sourd",
        "wait_ms": wait_ms,
    }
    report, diagnostic = run_session(work, params, OMNI_SCENARIO, asynchronous=True)
    assert not server_errors(report) and not plugin_errors(report), diagnostic
    return report, diagnostic


def test_omni_completion_after_brackets_lists_cards(tmp_path: Path) -> None:
    """The documented set-up: 'omnifunc' is the LSP's once the server attached, and
    ``[[Sourd<C-x><C-o>`` offers both Sourdough cards; <C-n><C-y> completes the link."""
    report, diagnostic = omni_session(tmp_path, wait_ms=10_000)
    assert report["omnifunc"] == "v:lua.vim.lsp.omnifunc", diagnostic
    assert report["omnifunc_after_edit"] == "v:lua.vim.lsp.omnifunc", diagnostic
    assert report["mode"].startswith("i"), diagnostic
    words = report["words"]
    assert any(w.startswith("Sourdough starter") for w in words), (words, diagnostic)
    assert any(w.startswith("Sourdough bread") for w in words), (words, diagnostic)
    assert not any(w.startswith("Crumb") for w in words), words
    assert report["line"] == "[[" + words[0], diagnostic
    assert report["line"] in ("[[Sourdough starter]]", "[[Sourdough bread]]"), diagnostic


def test_omnifunc_false_keeps_the_buffers_own(tmp_path: Path) -> None:
    """``setup({ omnifunc = false })``: the ftplugin's 'omnifunc' stays, so <C-x><C-o> offers
    no card; with the option back to true the next note the server attaches to gets the LSP's."""
    report, diagnostic = omni_session(
        tmp_path, wait_ms=1_500, setup={"omnifunc": False}, second_card="Crumb.md"
    )
    assert report["omnifunc"] == "htmlcomplete#CompleteTags", diagnostic
    assert not any(w.startswith("Sourdough") for w in report["words"]), diagnostic
    assert report["second_omnifunc"] == "v:lua.vim.lsp.omnifunc", diagnostic
