-- :ZettelAsk: a question answered from the notes (zettel.ask, needs a local Ollama), streamed
-- into a floating window or a split, then its sources; <CR> on a source opens it, q/<Esc>
-- closes the window and cancels the request (as editors/vscode/src/lib/ask.ts).
local compat = require("zettel_lsp.compat")
local config = require("zettel_lsp.config")
local results = require("zettel_lsp.results")
local util = require("zettel_lsp.util")
local zclient = require("zettel_lsp.client")

local notify = util.notify

local M = {}

local REQUEST_CANCELLED = -32800
local ask_seq = 0
local ask_open = nil -- the answer window's state (one at a time)

local function lines_of(text)
  return vim.split(tostring(text or ""), "\n", { plain = true })
end

-- `lines` in the buffer; `marks`: line (1-based) -> highlight group of the whole line.
local function set_lines(buf, lines, marks)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local namespace = vim.api.nvim_create_namespace("zettel_lsp_ask")
  vim.api.nvim_buf_clear_namespace(buf, namespace, 0, -1)
  for line, group in pairs(marks or {}) do
    pcall(vim.api.nvim_buf_set_extmark, buf, namespace, line - 1, 0,
      { end_col = #lines[line], hl_group = group })
  end
end

local function close_answer(state)
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    if not pcall(vim.api.nvim_win_close, state.win, true) then
      -- the last window of the tab: let the buffer go instead
      pcall(vim.api.nvim_buf_delete, state.buf, { force = true })
    end
  end
  if vim.api.nvim_buf_is_valid(state.buf) then
    pcall(vim.api.nvim_buf_delete, state.buf, { force = true })
  end
end

--- Stop waiting for an answer: forget its token and cancel the request if it is still running.
local function stop_answer(state)
  if state.closed then
    return
  end
  state.closed = true
  zclient.ask_streams[state.token] = nil
  if state.request then
    compat.cancel_request(state.client, state.request)
    state.request = nil
  end
  if ask_open == state then
    ask_open = nil
  end
end

local function source_label(i, src)
  local score = type(src.score) == "number" and string.format("%.3f", src.score) or "-"
  return string.format("%d. %s — %s:%d  (score %s)", i, src.title or src.path or "?",
    src.path or "?", (src.line_start or 0) + 1, score)
end

--- The window's text: the question, the answer so far (or the final one), the sources.
local function render_answer(state)
  -- The plugin's own lines are plain text, highlighted (no "#" or "_" marks, which Neovim 0.7
  -- shows as written); the model's answer is shown as it wrote it.
  local lines = { util.one_line(state.question), "" }
  local marks = { [1] = "Title" }
  local function note(text)
    table.insert(lines, text)
    marks[#lines] = "Comment"
  end
  local by_line = {}
  local answer_first = #lines + 1
  local text = state.answer
  if text == "" and not state.done then
    note("Retrieving notes and asking the model…")
  elseif text ~= "" then
    vim.list_extend(lines, lines_of(text))
  end
  local answer_last = #lines
  local result = state.result
  if not state.done then
    table.insert(lines, "")
    note("Answering… q or <Esc> closes the window and cancels.")
  else
    if state.error then
      note("zettel.ask failed: " .. util.one_line(state.error))
    elseif util.present(result.fallback) then
      if text ~= "" then
        table.insert(lines, "")
      end
      note("No answer: " .. util.one_line(result.fallback))
    elseif result.cancelled == true then
      note("(cancelled)")
    elseif text == "" then
      note("No answer.")
    end
    for _, message in ipairs(type(result.messages) == "table" and result.messages or {}) do
      note("Note: " .. util.one_line(message))
    end
    local sources = type(result.sources) == "table" and result.sources or {}
    if not state.error then
      local heading = "Sources"
      if util.present(result.model) and not util.present(result.fallback) then
        heading = heading .. " (" .. tostring(result.model) .. ")"
      elseif util.present(result.fallback) then
        heading = heading .. " (the retrieved notes)"
      end
      vim.list_extend(lines, { "", heading, "" })
      marks[#lines - 1] = "Title"
      if #sources == 0 then
        note("No note matched the question.")
      end
      for i, src in ipairs(sources) do
        table.insert(lines, source_label(i, src))
        by_line[#lines] = src
        local excerpt = util.one_line(results.excerpt_of(src), 200)
        if excerpt ~= "" then
          table.insert(lines, "   " .. excerpt)
          by_line[#lines] = src
        end
      end
      if #sources > 0 then
        table.insert(lines, "")
        note("<CR> on a source opens it · q closes")
      end
    end
  end
  state.sources_by_line = by_line
  set_lines(state.buf, lines, marks)
  -- While the answer streams, follow it when the cursor is at its end.
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    local cursor = vim.api.nvim_win_get_cursor(state.win)[1]
    if not state.done and cursor >= (state.answer_last or answer_first) then
      vim.api.nvim_win_set_cursor(state.win, { answer_last, 0 })
    elseif cursor > #lines then
      vim.api.nvim_win_set_cursor(state.win, { #lines, 0 })
    end
  end
  state.answer_last = answer_last
end

local function source_row(state, src)
  local row = { uri = src.uri, path = src.path, line_start = src.line_start }
  if not util.present(row.uri) then
    row.uri = nil
    if util.present(state.vault) and util.present(src.path) then
      row.path = state.vault .. "/" .. src.path
    end
  end
  return row
end

--- <CR> in the answer window: open the source under the cursor in the window :ZettelAsk was
--- run from (a float closes first; a split stays).
local function open_source(state)
  local src = state.sources_by_line and state.sources_by_line[vim.api.nvim_win_get_cursor(0)[1]]
  if src == nil then
    return
  end
  local row = source_row(state, src)
  if state.kind == "float" then
    close_answer(state)
  end
  if state.origin_win and vim.api.nvim_win_is_valid(state.origin_win) then
    vim.api.nvim_set_current_win(state.origin_win)
  elseif state.kind ~= "float" then
    vim.cmd("aboveleft split") -- keeps the answer in view
  end
  results.open_result(row)
end

local function open_answer_window(state)
  local buf = vim.api.nvim_create_buf(false, true)
  state.buf = buf
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "zettel_ask"
  vim.bo[buf].syntax = "markdown"
  pcall(vim.api.nvim_buf_set_name, buf, "zettel-ask://" .. state.seq)
  if config.current.ask_window == "split" then
    state.kind = "split"
    local height = math.max(8, math.floor(vim.o.lines * 0.4))
    vim.cmd("botright " .. height .. "split")
    state.win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(state.win, buf)
    vim.wo[state.win].winfixheight = true
    vim.wo[state.win].number = false
    vim.wo[state.win].relativenumber = false
  else
    state.kind = "float"
    local width = math.max(20, math.min(100, vim.o.columns - 4))
    local height = math.max(5, math.min(vim.o.lines - 6, math.floor(vim.o.lines * 0.7)))
    state.win = vim.api.nvim_open_win(buf, true, {
      relative = "editor",
      width = width,
      height = height,
      row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
      style = "minimal",
      border = "rounded",
    })
  end
  vim.wo[state.win].wrap = true
  vim.wo[state.win].linebreak = true
  local function map(lhs, fn)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map("q", function()
    stop_answer(state)
    close_answer(state)
  end)
  map("<Esc>", function()
    stop_answer(state)
    close_answer(state)
  end)
  map("<CR>", function()
    open_source(state)
  end)
  -- However the buffer goes (q, :close, :bdelete, another buffer in a float), stop the request.
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      stop_answer(state)
    end,
  })
end

--- :ZettelAsk [question]: answer `question` from the notes (the server's zettel.ask, which needs
--- a local Ollama), streamed into a floating window (or a split, `ask_window`), then the
--- sources. Without a question it asks for one with vim.ui.input.
function M.ask(question)
  local client, bufnr = zclient.client_and_text(question, "Zettel ask: ", M.ask)
  if client == nil then
    return
  end
  local provider = (client.server_capabilities or {}).executeCommandProvider
  if type(provider) == "table" and type(provider.commands) == "table"
    and not compat.has_command(client, "zettel.ask") then
    notify("this zettel-lsp server has no zettel.ask command; update zettel-lsp",
      vim.log.levels.ERROR)
    return
  end
  local origin_win = vim.api.nvim_get_current_win()
  if ask_open then -- one answer at a time: the previous one is cancelled
    local previous = ask_open
    if previous.win == origin_win then
      origin_win = previous.origin_win -- asked again from the answer window
    end
    stop_answer(previous)
    close_answer(previous)
  end
  zclient.ensure_ask_handler(client)
  ask_seq = ask_seq + 1
  local state = {
    seq = ask_seq,
    question = question,
    answer = "",
    done = false,
    client = client,
    origin_win = origin_win,
    token = string.format("nvim-%d-%d-%d", vim.fn.getpid(), ask_seq, (vim.uv or vim.loop).hrtime()),
  }
  local args = { question = question, token = state.token }
  if vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    args.uri = vim.uri_from_bufnr(bufnr) -- the vault of this note, when a server has several
  end
  open_answer_window(state)
  ask_open = state
  zclient.ask_streams[state.token] = function(delta)
    if state.closed or state.done then
      return
    end
    state.answer = state.answer .. delta
    render_answer(state)
  end
  render_answer(state)
  vim.api.nvim_win_set_cursor(state.win, { 3, 0 }) -- the answer's first line: follow it
  local params = { command = "zettel.ask", arguments = { args } }
  local ok, id = compat.request(client, "workspace/executeCommand", params, function(err, result)
    if state.closed then
      return -- closed (and cancelled) by the user
    end
    state.request = nil
    zclient.ask_streams[state.token] = nil
    state.done = true
    if err and err.code == REQUEST_CANCELLED then -- cancelled by someone else
      state.error = "the request was cancelled"
      state.result = {}
    elseif err then
      state.error = util.err_text(err)
      state.result = {}
      notify("zettel.ask failed: " .. state.error, vim.log.levels.ERROR)
    else
      result = type(result) == "table" and result or {}
      state.result = result
      state.vault = util.present(result.vault) and result.vault or nil
      -- the final text wins over the deltas (it is the same when none were lost)
      if type(result.answer) == "string" and result.answer ~= "" then
        state.answer = result.answer
      end
      if util.present(result.fallback) then
        notify("no answer (" .. util.one_line(result.fallback) .. "); the window lists the notes "
          .. "that were retrieved", vim.log.levels.WARN)
      end
    end
    local done, problem = pcall(render_answer, state)
    if not done then
      notify("zettel.ask: " .. tostring(problem), vim.log.levels.ERROR)
    end
  end, bufnr)
  if ok then
    state.request = id
  else
    stop_answer(state)
    close_answer(state)
    notify("the server is not running (it may have exited; see :help "
      .. "zettel_lsp-troubleshooting)", vim.log.levels.ERROR)
  end
  return state
end

return M
