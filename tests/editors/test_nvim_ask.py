""":ZettelAsk in the Neovim plugin: headless Neovim, the real server, a stand-in for Ollama.

Same harness as test_nvim_plugin.py (one editor session per test, a JSON report from the Lua
side). ``OllamaStub`` (tests/llm/stub.py) answers on 127.0.0.1 as Ollama would, streaming its
canned answer ("According to [<first note of the prompt>], ...") piece by piece; the plugin
gets it through the server's ``zettel/askDelta`` notifications and the ``zettel.ask`` result.
The second test points ``ollamaHost`` at a closed port: no answer, a warning, the sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.test_nvim_plugin import (
    NVIM,
    RRF_CARD,
    make_vault,
    plugin_errors,
    run_session,
)
from tests.llm.stub import OllamaStub, default_answer, free_port

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not on PATH")

QUESTION = "how does reciprocal rank fusion combine result lists"
SLOW_QUESTION = "what does BM25 say about saturation, at length"
ANSWER_START = "According to [Reciprocal rank fusion]"
SLOW_PIECES = 30  # words of the slow answer, one streamed piece each

ASK_SCENARIOS = r"""
-- The answer window: the buffer named zettel-ask://N (the newest one when several).
local function answer_buffer()
  local found = nil
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b):find("zettel%-ask://") then
      found = b
    end
  end
  return found
end

local function answer_lines()
  local b = answer_buffer()
  return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}
end

local function has_line(pattern, plain)
  for i, line in ipairs(answer_lines()) do
    if line:find(pattern, 1, plain) then
      return i
    end
  end
  return nil
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
end

-- Every zettel/askDelta the server sends, as a user's own handler for it (the plugin's runs
-- first and chains to it).
out.deltas = {}
extra_handlers["zettel/askDelta"] = function(_, params)
  table.insert(out.deltas, { token = params.token, delta = params.delta })
end

local function deltas_for(token)
  local n = 0
  for _, d in ipairs(out.deltas) do
    if d.token == token then
      n = n + 1
    end
  end
  return n
end

-- Wait for the final answer, then <CR> on the first source; record what opened.
local function open_first_source(origin)
  wait_for("the Sources list", function() return has_line("^Sources") ~= nil end)
  step("answer complete")
  out.final_lines = answer_lines()
  local first = nil
  for i, line in ipairs(out.final_lines) do
    if i > has_line("^Sources") and line:find("^1%. ") then
      first = i
      break
    end
  end
  if first == nil then
    error("no first source line in " .. vim.inspect(out.final_lines))
  end
  out.answer_window_config = vim.api.nvim_win_get_config(0).relative
  out.windows_with_answer = #vim.api.nvim_list_wins()
  vim.api.nvim_win_set_cursor(0, { first, 0 })
  press("<CR>")
  wait_for("the source to open", function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), P.expect_suffix)
  end)
  step("source opened")
  out.opened = vim.api.nvim_buf_get_name(0)
  out.opened_cursor = vim.api.nvim_win_get_cursor(0)
  out.opened_in_origin = vim.api.nvim_get_current_win() == origin
  out.floats_after_open = #float_windows()
  out.answer_buffer_after_open = answer_buffer() ~= nil
end

scenarios.ask = function()
  local bufnr = open(P.start_card)
  local client = wait_ready(bufnr)
  local origin = vim.api.nvim_get_current_win()
  local compat = require("zettel_lsp.compat")
  local cancel_request = compat.cancel_request
  out.cancels = {}
  compat.cancel_request = function(c, id)
    table.insert(out.cancels, id)
    return cancel_request(c, id)
  end

  vim.cmd("ZettelAsk " .. P.question)
  -- While it streams: the text so far, before the final result adds the sources.
  wait_for("the answer to stream into the window", function()
    return has_line(P.answer_start, 1, true) ~= nil
  end)
  out.streamed_lines = answer_lines()
  out.streamed_sources = has_line("^Sources") ~= nil
  step("answer streaming")
  out.answer_token = out.deltas[1] and out.deltas[1].token
  open_first_source(origin)

  -- Cancel: q while a long answer streams closes the window and cancels the request.
  vim.cmd("ZettelAsk " .. P.slow_question)
  wait_for("the slow answer to start", function()
    return #out.deltas > 0 and out.deltas[#out.deltas].token ~= out.answer_token
  end)
  local token = out.deltas[#out.deltas].token
  press("q")
  out.floats_after_q = #float_windows()
  out.answer_buffer_after_q = answer_buffer() ~= nil
  out.deltas_at_cancel = deltas_for(token)
  local id = out.cancels[1]
  -- the server answers the cancelled request (RequestCancelled): no longer pending here
  out.cancel_answered = vim.wait(5000, function()
    return id ~= nil and client.requests[id] == nil
  end, 50)
  vim.wait(1500) -- deltas a server still sends now are dropped by the plugin
  out.deltas_after_cancel = deltas_for(token) - out.deltas_at_cancel
  -- Let a stream the server did not stop run out before the session ends (zettel-lsp with
  -- pygls 2.1 keeps streaming a cancelled zettel.ask), so that it does not write to a closed
  -- pipe at exit: wait until no delta came for 400 ms.
  local seen, quiet_since = deltas_for(token), vim.loop.now()
  vim.wait(6000, function()
    if deltas_for(token) ~= seen then
      seen, quiet_since = deltas_for(token), vim.loop.now()
    end
    return vim.loop.now() - quiet_since > 400
  end, 50)
  out.buffers_after_cancel = answer_buffer() ~= nil
  out.current_after_cancel = vim.api.nvim_buf_get_name(0)
end

scenarios.ask_fallback = function()
  local bufnr = open(P.start_card)
  wait_ready(bufnr)
  local origin = vim.api.nvim_get_current_win()
  -- Without a question, :ZettelAsk asks for one.
  vim.ui.input = function(opts, on_confirm)
    table.insert(out.input_calls, opts.prompt)
    on_confirm(P.question)
  end
  vim.cmd("ZettelAsk")
  open_first_source(origin)
end
"""


def answer_text(lines: list[str]) -> str:
    """The answer part of the window: between the question and the Sources heading."""
    end = lines.index(next(line for line in lines if line.startswith("Sources")))
    return "\n".join(lines[1:end]).strip()


def source_lines(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("Sources"))
    return [line for line in lines[start + 1 :] if line[:1].isdigit()]


def check_opened(report: dict[str, Any], vault: Path, diagnostic: str) -> None:
    """<CR> on the first source opened that card, in the editing window, at its line."""
    assert Path(report["opened"]).resolve() == (vault / RRF_CARD).resolve(), diagnostic
    assert report["opened_in_origin"], diagnostic
    first = source_lines(report["final_lines"])[0]
    line = int(first.rsplit(".md:", 1)[1].split()[0])  # "... — path:LINE  (score S)"
    assert report["opened_cursor"][0] == line, (first, diagnostic)


def test_ask_streams_the_answer_lists_sources_and_cancels(tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> str:
        if "at length" in body["messages"][-1]["content"]:
            return " ".join(["slowly"] * SLOW_PIECES)
        return default_answer(body)

    stub = OllamaStub(answer_chat=answer, token_delay=0.1)
    stub.start()
    vault = make_vault(tmp_path)
    try:
        report, diagnostic = run_session(
            tmp_path,
            {
                "scenario": "ask",
                "vault": str(vault),
                "start_card": "retrieval/BM25.md",
                "question": QUESTION,
                "slow_question": SLOW_QUESTION,
                "answer_start": ANSWER_START,
                "expect_suffix": RRF_CARD,
                "setup": {"settings": {"zettel": {"ollamaHost": stub.url}}},
            },
            ASK_SCENARIOS,
        )
    finally:
        stub.close()
    assert not plugin_errors(report), diagnostic
    assert not [m for m in report["server_messages"] if m.get("type") in (1, 2)], diagnostic

    # streamed: the window showed the answer's text before the result (and its sources) came
    streamed = "\n".join(report["streamed_lines"])
    assert ANSWER_START in streamed and not report["streamed_sources"], diagnostic
    assert report["streamed_lines"][0] == QUESTION, diagnostic  # plain text, no "# "
    first_deltas = [d["delta"] for d in report["deltas"] if d["token"] == report["answer_token"]]
    assert len(first_deltas) > 3, diagnostic  # piece by piece, not in one go

    # final: the answer, then the sources, best first, as "N. title — path:line  (score S)"
    lines = report["final_lines"]
    # the window's own lines as plain text: no "#" headings, no "_" around notes
    assert not [ln for ln in lines if ln.startswith(("#", "_")) or ln.endswith("_")], lines
    assert answer_text(lines).startswith(ANSWER_START), lines
    assert answer_text(lines) == "".join(first_deltas).strip(), lines
    sources = source_lines(lines)
    assert sources[0].startswith(f"1. Reciprocal rank fusion — {RRF_CARD}:"), lines
    assert all(" — " in s and ".md:" in s and "(score " in s for s in sources), sources
    assert report["answer_window_config"] == "editor", "a floating window by default"

    # <CR> on the first source: the float closed, the card opened where :ZettelAsk was run
    check_opened(report, vault, diagnostic)
    assert report["floats_after_open"] == 0 and not report["answer_buffer_after_open"], diagnostic

    # q while the slow answer streams: window gone, request cancelled and answered as such
    assert report["floats_after_q"] == 0 and not report["answer_buffer_after_q"], diagnostic
    assert len(report["cancels"]) == 1, diagnostic
    assert report["cancel_answered"], diagnostic
    assert report["deltas_at_cancel"] < SLOW_PIECES, diagnostic
    assert not report["buffers_after_cancel"], diagnostic
    assert Path(report["current_after_cancel"]).resolve() == (vault / RRF_CARD).resolve()
    chats = stub.bodies("/api/chat")
    assert len(chats) == 2 and all(c["stream"] is True for c in chats), chats


def test_ask_without_ollama_warns_and_still_lists_the_sources(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    closed = f"http://127.0.0.1:{free_port()}"
    report, diagnostic = run_session(
        tmp_path,
        {
            "scenario": "ask_fallback",
            "vault": str(vault),
            "start_card": "retrieval/BM25.md",
            "question": QUESTION,
            "expect_suffix": RRF_CARD,
            "setup": {"settings": {"ollamaHost": closed}, "ask_window": "split"},
        },
        ASK_SCENARIOS,
    )
    assert report["input_calls"] == ["Zettel ask: "], diagnostic
    [warning] = plugin_errors(report)
    assert warning["level"] == 3, warning  # vim.log.levels.WARN
    assert "Ollama" in warning["msg"] and closed in warning["msg"], warning
    assert warning["msg"].startswith("zettel-lsp: no answer ("), warning

    lines = report["final_lines"]
    # the window's own lines as plain text: no "#" headings, no "_" around notes
    assert not [ln for ln in lines if ln.startswith(("#", "_")) or ln.endswith("_")], lines
    assert "According to" not in "\n".join(lines), lines
    assert answer_text(lines).startswith("No answer: Ollama at "), lines
    assert report["deltas"] == [], "no answer, nothing streamed"
    sources = source_lines(lines)
    assert sources and sources[0].startswith("1. Reciprocal rank fusion — "), lines
    assert report["answer_window_config"] == "" and report["windows_with_answer"] == 2
    check_opened(report, vault, diagnostic)
