"""What the Neovim plugin shows (issue #45, item 8), on Neovim 0.7 as CI runs it:

- floats as plain text: K's hover and the related notes have no ``###``, backticks or ``>``
  (0.7 shows a float's Markdown as written);
- long vault paths: each related note is one line within the float, its folder shortened from
  the left as the VS Code views do;
- ``:ZettelSearch``'s list (Neovim's own ``vim.ui.select``) fits a 24-line screen: one line per
  result, all 20 titles on the screen at once;
- no related-notes float over a picker: the float closes when :ZettelSuggestLinks' picker
  opens, and CursorHold does not open it while the picker (a float) is open;
- a card at the top of the vault shows the vault's name as its folder, as in every view.

The search list runs in a real 24x80 screen: a headless Neovim's terminal running a second
Neovim, whose screen lines are read from the terminal buffer. The other scenarios run the real
server on a small generated vault with deep, long folder names (tests/editors/
test_nvim_plugin.py's harness).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.editors.test_nvim_plugin import PLUGIN, run_session, server_errors
from tests.nvim import NVIM, run_headless

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not on PATH")

SCREEN_LINES, SCREEN_COLUMNS = 24, 80
DEEP = (
    "04. Organized Knowledge - Old Format/Science and Engineering/Physics/Particle Physics/"
    "Standard Model"
)

# --------------------------------------------------------------- the search list on a screen

# The outer editor: a terminal window of SCREEN_LINES x SCREEN_COLUMNS running the inner one,
# until its list shows; the screen's lines go to the report, then q (no choice) ends it.
OUTER = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
local out = {}
local ok, err = pcall(function()
  vim.o.laststatus = 0
  vim.o.lines = P.lines + 1 -- the command line below the window
  vim.o.columns = P.columns
  local chan = vim.fn.termopen({ P.nvim, "-u", "NONE", "-i", "NONE", "-n",
    "--cmd", "set rtp+=" .. P.plugin, "-c", "luafile " .. P.inner })
  local buf = vim.api.nvim_get_current_buf()
  local function screen()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  local shown = vim.wait(20000, function()
    local text = table.concat(screen(), "\n")
    return text:find("Type number", 1, true) ~= nil or text:find("-- More --", 1, true) ~= nil
  end, 50)
  vim.wait(300)
  out.shown = shown
  out.window = { vim.api.nvim_win_get_height(0), vim.api.nvim_win_get_width(0) }
  out.screen = screen()
  vim.fn.chansend(chan, "q\r") -- no choice: the inner editor quits
  out.exited = vim.fn.jobwait({ chan }, 5000)[1]
end)
out.error = not ok and tostring(err) or nil
vim.fn.writefile({ vim.fn.json_encode(out) }, P.output)
"""

# The inner editor: :ZettelSearch's picker for P.rows, with Neovim's own vim.ui.select.
INNER = r"""
local P = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ZETTEL_NVIM_PARAMS")), "\n"))
require("zettel_lsp").setup({ autostart = false, picker = "select" })
require("zettel_lsp.pickers").pick_result(P.rows, "Zettel search: " .. P.query)
vim.cmd("qa!")
"""


def search_rows(count: int) -> list[dict[str, Any]]:
    """Rows as zettel.search gives them, in deep folders with long excerpts."""
    rows = []
    for i in range(count):
        folder = f"{DEEP}/Topic {i:02d} with a long folder name"
        rows.append(
            {
                "title": f"Result {i + 1:02d} title",
                "path": f"{folder}/Result {i + 1:02d} title.md",
                "folder": folder,
                "vault": "/notes/vaultofknowledge",
                "line_start": 0,
                "excerpt": "Quarks are elementary particles " * 6,
                "excerpt_text": "Quarks are elementary particles " * 6,
            }
        )
    return rows


def test_search_list_fits_a_24_line_screen(tmp_path: Path) -> None:
    """20 results in Neovim's own vim.ui.select on a 24x80 screen: one line each, every title
    on the screen at once, no "-- More --" (before: two lines each, the list scrolled off)."""
    inner = tmp_path / "inner.lua"
    inner.write_text(INNER, encoding="utf-8")
    rows = search_rows(20)
    params = {
        "nvim": NVIM,
        "plugin": str(PLUGIN),
        "inner": str(inner),
        "rows": rows,
        "query": "quarks",
        "lines": SCREEN_LINES,
        "columns": SCREEN_COLUMNS,
        "output": str(tmp_path / "out.json"),
    }
    report, diagnostic = run_headless(OUTER, params, tmp_path)
    assert report is not None and not report.get("error"), (report, diagnostic)
    assert report["shown"], report
    assert report["window"] == [SCREEN_LINES, SCREEN_COLUMNS], report["window"]
    screen = [line.rstrip() for line in report["screen"]]
    text = "\n".join(screen)
    assert "-- More --" not in text, text
    items = [line for line in screen if re.match(r"\d+: ", line)]
    assert [int(line.split(":")[0]) for line in items] == list(range(1, 21)), text
    for row, line in zip(rows, items, strict=True):
        assert line.split(": ", 1)[1].startswith(row["title"] + " — …/"), line
        assert len(line) < SCREEN_COLUMNS, line
    assert report["exited"] == 0, report


# --------------------------------------------------------------- floats, with the server

HADRONS = f"{DEEP}/Hadrons.md"
CARDS = {
    HADRONS: (
        "# Hadrons\n\n"
        "Hadrons are particles made of [[Quarks]] held together by the strong force.\n\n"
        "Baryons and mesons are the two families of hadrons, built from quarks and gluons.\n\n"
        "Protons and neutrons are baryons; pions and kaons are mesons.\n"
    ),
    f"{DEEP}/Elementary particles and their long folder names/Quarks.md": (
        "# Quarks\n\nQuarks are elementary particles that combine into hadrons.\n"
    ),
    f"{DEEP}/Gauge bosons of the strong interaction/Gluons.md": (
        "# Gluons\n\nGluons carry the strong force between quarks inside hadrons.\n"
    ),
    f"{DEEP}/Composite particles/Mesons.md": (
        "# Mesons\n\nMesons are hadrons of one quark and one antiquark, such as pions and kaons.\n"
    ),
    "Particles.md": "# Particles\n\nHadrons, quarks, gluons and mesons: the particle zoo.\n",
}

UI_SCENARIO = r"""
scenarios.ui = function()
  vim.o.lines = 40
  vim.o.columns = 100
  local bufnr = open(P.card)
  wait_ready(bufnr)
  local function find(text)
    local line = vim.fn.search(vim.fn.escape(text, "\\.*[]~^$"), "w")
    if line == 0 then
      error(text .. " not found")
    end
    return line
  end
  local function hold_at(line)
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
    vim.api.nvim_exec_autocmds("CursorHold", { buffer = bufnr })
  end
  out.window_width = vim.api.nvim_win_get_width(0)

  -- Related notes on CursorHold: one line per note.
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr }) -- the move :edit made
  hold_at(find(P.families))
  wait_for("the related-notes float", function() return #float_windows() > 0 end)
  out.related = float_info(float_windows()[1])
  out.related_rows = command(zettel.get_client(bufnr), bufnr, "zettel.related",
    { uri = vim.uri_from_bufnr(bufnr), position = { line = find(P.families) - 1, character = 0 } })
  vim.api.nvim_win_set_cursor(0, { find(P.families), 2 })
  vim.api.nvim_exec_autocmds("CursorMoved", { buffer = bufnr })
  wait_for("the float to close", function() return #float_windows() == 0 end)

  -- K on a link: the linked note's preview as plain text.
  local link = find(P.link)
  vim.api.nvim_win_set_cursor(0, { link, vim.fn.getline(link):find(P.link, 1, true) + 2 })
  zettel.hover()
  wait_for("K's float", function() return #float_windows() > 0 end)
  vim.wait(300)
  out.k = float_info(float_windows()[1])
  vim.api.nvim_win_close(float_windows()[1], true)

  -- The picker: the related float closes when it opens, and CursorHold shows none over it.
  hold_at(find(P.other))
  wait_for("the related-notes float again", function() return #float_windows() > 0 end)
  vim.ui.select = function(items, opts, on_choice)
    out.floats_when_picker_opened = #float_windows()
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { opts.prompt })
    -- a picker in a float, as dressing.nvim or telescope show one
    out.picker = vim.api.nvim_open_win(buf, false, { relative = "editor", row = 1, col = 1,
      width = 40, height = #items + 1, border = "rounded" })
    out.picker_items = #items
  end
  vim.cmd("ZettelSuggestLinks")
  wait_for("the picker", function() return out.picker ~= nil end)
  hold_at(find(P.first))
  vim.wait(2000, function() return #float_windows() > 1 end, 50)
  out.floats_over_picker = #float_windows()
  vim.api.nvim_win_close(out.picker, true)
end
"""


def make_deep_vault(work: Path) -> Path:
    vault = work / "vaultofknowledge"
    (vault / ".obsidian").mkdir(parents=True)
    for rel, text in CARDS.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    return vault


def test_floats_plain_one_line_notes_and_none_over_a_picker(tmp_path: Path) -> None:
    vault = make_deep_vault(tmp_path)
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "ui",
            "vault": str(vault),
            "card": HADRONS,
            "families": "Baryons and mesons are the two families",
            "other": "Protons and neutrons are baryons",
            "first": "Hadrons are particles made of",
            "link": "[[Quarks]]",
            "hover_suggestions": True,
        },
        UI_SCENARIO,
    )
    assert not server_errors(report), diagnostic

    # related notes: a header, then one line per note within the float and the window
    related = report["related"]
    lines, rows = related["lines"], report["related_rows"]
    assert lines[0] == "Related notes" and len(lines) == 1 + len(rows), (lines, rows)
    assert related["height"] == len(lines) and not related["wrap"], related
    assert max(related["widths"]) <= related["width"] <= report["window_width"] - 4, related
    for row, line in zip(rows, lines[1:], strict=True):
        assert line.startswith(row["title"]), (line, row)
    # the deep folders shortened from the left; the card at the top: the vault's name
    assert any(" — …/" in line for line in lines), lines
    top = [line for line in lines if line.startswith("Particles")]
    assert top and top[0].split(" — ", 1)[1].startswith("vaultofknowledge"), lines

    # K: plain text, no Markdown marks
    k_lines = report["k"]["lines"]
    assert k_lines[0] == "Quarks", k_lines
    for line in k_lines:
        assert not re.match(r"\s*(#|>|```)", line), k_lines
        assert "`" not in line and "**" not in line and "](" not in line, k_lines
    assert "Quarks are elementary particles" in " ".join(k_lines), k_lines

    # the picker: opened with no float over the note, and none opened over it
    assert report["floats_when_picker_opened"] == 0, diagnostic
    assert report["floats_over_picker"] == 1, diagnostic
