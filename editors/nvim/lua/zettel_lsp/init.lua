-- zettel-lsp for Neovim 0.7+: starts the server for Markdown notes in a vault and adds
-- :ZettelSearch, :ZettelRelated, :ZettelSuggestLinks, :ZettelAsk, :ZettelReindex and
-- :ZettelStatus.
-- See :help zettel_lsp (doc/zettel_lsp.txt) and docs/server.md for the server's side.
local compat = require("zettel_lsp.compat")

local M = {}

--- The client name (also the name of lsp/zettel_lsp.lua for vim.lsp.enable()).
M.name = "zettel_lsp"

local defaults = {
  cmd = { "zettel-lsp" },
  filetypes = { "markdown" },
  root_markers = { ".obsidian", ".zk", ".git" },
  -- Server settings (docs/server.md, camelCase keys); both tables are merged and sent as
  -- initializationOptions and as workspace/didChangeConfiguration settings (init_options
  -- wins on a key given in both). `settings` may also be nested as { zettel = {...} }.
  init_options = {},
  settings = {},
  -- false: only define the commands (start the server yourself, e.g. vim.lsp.enable).
  autostart = true,
  -- Related notes in a floating window when the cursor rests in a paragraph.
  hover_suggestions = false,
  hover_delay_ms = nil, -- nil: 'updatetime' alone; else at least this long after the last move
  hover_limit = nil, -- nil: the server's hoverLimit
  -- "auto" (telescope.nvim when installed, else vim.ui.select), "telescope" or "select".
  picker = "auto",
  -- Where :ZettelRelated lists its notes: "loclist" or "quickfix".
  related_list = "loclist",
  -- Where :ZettelAsk shows its answer: "float" or "split".
  ask_window = "float",
  -- Passed through to the client.
  on_attach = nil,
  on_init = nil,
  capabilities = nil,
  handlers = nil,
}

M.config = vim.deepcopy(defaults)

local clients_by_root = {} -- root -> client id (Neovim 0.7, which has no vim.lsp.start)

-- ---------------------------------------------------------------------------- helpers

local function notify(msg, level)
  vim.notify("zettel-lsp: " .. msg, level or vim.log.levels.INFO)
end

local function err_text(err)
  if type(err) == "table" then
    return tostring(err.message or vim.inspect(err))
  end
  return tostring(err)
end

local function one_line(text, max)
  text = tostring(text or ""):gsub("%s+", " ")
  text = vim.trim(text)
  if max and #text > max then
    -- cut on a character boundary (strcharpart counts characters, not bytes)
    text = vim.fn.strcharpart(text, 0, max - 1) .. "…"
  end
  return text
end

--- The merged server settings (flat, camelCase) from the options.
local function server_settings(opts)
  local merged = {}
  local settings = opts.settings or {}
  if type(settings.zettel) == "table" then
    settings = settings.zettel
  end
  for k, v in pairs(settings) do
    merged[k] = v
  end
  for k, v in pairs(opts.init_options or {}) do
    merged[k] = v
  end
  return merged
end

-- Empty Lua tables encode as JSON arrays; the server wants objects.
local function as_object(t)
  if next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- Whether `client` is a zettel-lsp client (by name, or by the commands it offers).
function M.is_zettel_client(client)
  if client == nil then
    return false
  end
  if client.name == M.name or client.name == "zettel-lsp" then
    return true
  end
  return compat.has_command(client, "zettel.status")
end

--- The zettel-lsp client attached to `bufnr` (default: current buffer), or nil.
function M.get_client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  for _, client in ipairs(compat.buf_clients(bufnr)) do
    if M.is_zettel_client(client) then
      return client
    end
  end
  return nil
end

--- Every running zettel-lsp client.
function M.clients()
  local out = {}
  for _, client in ipairs(compat.all_clients()) do
    if M.is_zettel_client(client) then
      table.insert(out, client)
    end
  end
  return out
end

local NO_CLIENT = "no zettel-lsp server is attached to this buffer. It starts for Markdown "
  .. "files inside a folder with %s; see :help zettel_lsp-troubleshooting"

local function no_client_message()
  return string.format(NO_CLIENT, table.concat(M.config.root_markers or {}, ", "))
end

--- The client for buffer-bound commands, or nil after telling the user why.
local function require_client(bufnr)
  local client = M.get_client(bufnr)
  if client == nil then
    notify(no_client_message(), vim.log.levels.ERROR)
  end
  return client
end

--- Run a `zettel.*` command asynchronously; `on_result(result)` only on success.
---@param client table
---@param bufnr integer
---@param command string
---@param args table|nil one argument object
---@param on_result fun(result: any)
function M.execute(client, bufnr, command, args, on_result)
  local params = { command = command }
  if args ~= nil then
    params.arguments = { args }
  end
  local ok = compat.request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      notify(command .. " failed: " .. err_text(err), vim.log.levels.ERROR)
      return
    end
    local done, problem = pcall(on_result, result)
    if not done then
      notify(command .. ": " .. tostring(problem), vim.log.levels.ERROR)
    end
  end, bufnr)
  if not ok then
    notify("the server is not running (it may have exited; see :help "
      .. "zettel_lsp-troubleshooting)", vim.log.levels.ERROR)
  end
end

-- ---------------------------------------------------------------------------- the client

-- :ZettelAsk sends zettel.ask with a token; the server streams the answer as zettel/askDelta
-- {token, delta} notifications, then answers the request with the whole result.
local ASK_DELTA = "zettel/askDelta"
local ask_streams = {} -- token -> function(delta) of the answer waiting for it
local chained = setmetatable({}, { __mode = "k" }) -- handlers made by with_ask_handler

local function on_ask_delta(_, params)
  if type(params) ~= "table" or type(params.delta) ~= "string" then
    return
  end
  local stream = ask_streams[params.token]
  if stream then
    stream(params.delta)
  end
end

--- `handlers` (a table of lsp-handlers, changed in place) with the zettel/askDelta handler; a
--- handler the user gave for that method still runs after it.
local function with_ask_handler(handlers)
  local own = handlers[ASK_DELTA]
  if own == nil then
    handlers[ASK_DELTA] = on_ask_delta
  elseif own ~= on_ask_delta and not chained[own] then
    local function both(...)
      on_ask_delta(...)
      return own(...)
    end
    chained[both] = true
    handlers[ASK_DELTA] = both
  end
  return handlers
end

local function client_config(root)
  local opts = M.config
  local settings = server_settings(opts)
  local user_on_init = opts.on_init
  return {
    name = M.name,
    cmd = opts.cmd,
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = {
      { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") },
    },
    init_options = as_object(vim.deepcopy(settings)),
    settings = { zettel = as_object(vim.deepcopy(settings)) },
    capabilities = opts.capabilities,
    handlers = with_ask_handler(vim.tbl_extend("force", {}, opts.handlers or {})),
    on_attach = opts.on_attach,
    on_init = function(client, result)
      -- Neovim 0.8 (which also brought vim.lsp.start) sends config.settings after
      -- initialize by itself; 0.7 does not, so do it here.
      if not vim.lsp.start then
        local params = { settings = client.config.settings }
        compat.notify(client, "workspace/didChangeConfiguration", params)
      end
      if user_on_init then
        user_on_init(client, result)
      end
    end,
  }
end

--- Start (or reuse) the client for the vault holding `bufnr` and attach it. Returns the client
--- id, or nil when the buffer is not a file in a folder with a root marker.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  if fname == "" or fname:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = compat.find_root(fname, M.config.root_markers)
  if root == nil then
    return nil
  end
  if vim.lsp.start then -- 0.8+: reuses a client with the same name and root_dir
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client == nil or (client.is_stopped and client.is_stopped()) then
    id = vim.lsp.start_client(client_config(root))
    if id == nil then
      notify("could not start " .. table.concat(M.config.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- ---------------------------------------------------------------------------- results

local function folder_of(row)
  local dir = vim.fn.fnamemodify(row.path or "", ":h")
  if dir == "." or dir == "" then
    -- a card at the top of the vault: the vault's name, as workspace/symbol's container
    return row.vault and vim.fn.fnamemodify(row.vault, ":t") or "."
  end
  return dir
end

--- "title [relation] — folder: excerpt", one line (the relation to the note you searched from,
--- when the server gives one: linked, backlink, 2 hops, not linked).
function M.format_result(row)
  local title = row.title or vim.fn.fnamemodify(row.path or "?", ":t:r")
  if type(row.relation) == "string" and row.relation ~= "" and row.relation ~= "this card" then
    title = string.format("%s [%s]", title, row.relation)
  end
  return string.format("%s — %s: %s", title, folder_of(row), one_line(row.excerpt, 100))
end

local function result_fname(row)
  if row.uri then
    return vim.uri_to_fname(row.uri)
  end
  return row.path
end

--- Open the card of a search/related row and put the cursor on its first line.
function M.open_result(row)
  local fname = result_fname(row)
  if not fname then
    return
  end
  local ok, problem = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(fname))
  if not ok then
    notify("cannot open " .. fname .. ": " .. tostring(problem), vim.log.levels.ERROR)
    return
  end
  local line = math.max(1, math.min((row.line_start or 0) + 1, vim.api.nvim_buf_line_count(0)))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  pcall(vim.cmd, "normal! zv")
end

local function telescope_available()
  if M.config.picker == "select" then
    return false
  end
  local ok = pcall(require, "telescope")
  if not ok and M.config.picker == "telescope" then
    notify("picker = 'telescope' but telescope.nvim is not installed; using vim.ui.select",
      vim.log.levels.WARN)
  end
  return ok
end

local function telescope_pick(rows, title, on_choice)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = title,
      finder = finders.new_table({
        results = rows,
        entry_maker = function(row)
          local text = M.format_result(row)
          return {
            value = row,
            display = text,
            ordinal = text,
            filename = result_fname(row),
            lnum = (row.line_start or 0) + 1,
          }
        end,
      }),
      sorter = conf.generic_sorter({}),
      previewer = conf.grep_previewer({}),
      attach_mappings = function(prompt_bufnr)
        actions.select_default:replace(function()
          local entry = action_state.get_selected_entry()
          actions.close(prompt_bufnr)
          if entry then
            on_choice(entry.value)
          end
        end)
        return true
      end,
    })
    :find()
end

--- Let the user pick one of `rows` (telescope or vim.ui.select); open it.
local function pick_result(rows, title)
  if telescope_available() then
    telescope_pick(rows, title, M.open_result)
    return
  end
  vim.ui.select(rows, {
    prompt = title,
    kind = "zettel_lsp.result",
    format_item = M.format_result,
  }, function(row)
    if row then
      M.open_result(row)
    end
  end)
end

-- ---------------------------------------------------------------------------- commands

--- The client for the current buffer (or any zettel-lsp client) and the text to send; asks for
--- the text with vim.ui.input (then calls `again`) when `text` is empty. nil: nothing to do now.
local function client_and_text(text, prompt, again)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr) or M.clients()[1]
  if client == nil then
    notify("no zettel-lsp server is running: open a note in your vault first "
      .. "(see :help zettel_lsp-troubleshooting)", vim.log.levels.ERROR)
    return nil
  end
  if text == nil or vim.trim(text) == "" then
    vim.ui.input({ prompt = prompt }, function(input)
      if input and vim.trim(input) ~= "" then
        again(input)
      end
    end)
    return nil
  end
  return client, bufnr
end


--- :ZettelSearch [query]
function M.search(query)
  local client, bufnr = client_and_text(query, "Zettel search: ", M.search)
  if client == nil then
    return
  end
  local args = { query = query }
  if vim.bo[bufnr].filetype == "markdown" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    args.uri = vim.uri_from_bufnr(bufnr) -- results then say how they relate to this note
  end
  M.execute(client, bufnr, "zettel.search", args, function(result)
    local rows = type(result) == "table" and result.results or {}
    local partial = type(result) == "table" and result.complete == false
    local note = type(result) == "table" and result.note or ""
    if partial and note ~= vim.NIL and note ~= "" then
      notify("partial results (the index is still being built): " .. note, vim.log.levels.WARN)
    end
    if #rows == 0 then
      notify("no notes found for '" .. query .. "'", vim.log.levels.WARN)
      return
    end
    pick_result(rows, "Zettel search: " .. query)
  end)
end

--- The non-blank lines around the cursor below the frontmatter: (first, last, text) 1-based,
--- or nil on a blank line.
function M.paragraph_at_cursor(bufnr, row)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  row = row or vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local body_start = 1
  if lines[1] == "---" then
    for i = 2, #lines do
      if lines[i] == "---" or lines[i] == "..." then
        body_start = i + 1
        break
      end
    end
  end
  local function blank(i)
    return lines[i] == nil or not lines[i]:find("%S")
  end
  if row < body_start or blank(row) then
    return nil
  end
  local first, last = row, row
  while first > body_start and not blank(first - 1) do
    first = first - 1
  end
  while last < #lines and not blank(last + 1) do
    last = last + 1
  end
  return first, last, table.concat(lines, "\n", first, last)
end

local function related_args(client, bufnr, limit)
  local params = compat.position_params(client)
  return {
    uri = vim.uri_from_bufnr(bufnr),
    position = params.position,
    limit = limit,
  }
end

local function related_text(row)
  local relation = row.relation and (" [" .. row.relation .. "]") or ""
  return string.format("%s%s — %s", row.title or row.path, relation, one_line(row.excerpt, 120))
end

--- :ZettelRelated: related notes for the paragraph at the cursor (the whole note on a blank
--- line) in the location list (or quickfix list), opened.
function M.related()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = require_client(bufnr)
  if client == nil then
    return
  end
  local winid = vim.api.nvim_get_current_win()
  local first = M.paragraph_at_cursor(bufnr)
  local what = first and ("the paragraph at line " .. first) or "this note"
  M.execute(client, bufnr, "zettel.related", related_args(client, bufnr), function(rows)
    rows = type(rows) == "table" and rows or {}
    if #rows == 0 then
      notify("no related notes for " .. what, vim.log.levels.WARN)
      return
    end
    local items = {}
    for _, row in ipairs(rows) do
      table.insert(items, {
        filename = result_fname(row),
        lnum = (row.line_start or 0) + 1,
        col = 1,
        text = related_text(row),
      })
    end
    local title = "Related notes for " .. what .. " of " .. vim.fn.fnamemodify(
      vim.api.nvim_buf_get_name(bufnr), ":t")
    if M.config.related_list == "quickfix" then
      vim.fn.setqflist({}, " ", { title = title, items = items })
      vim.cmd("copen")
    else
      if not vim.api.nvim_win_is_valid(winid) then
        winid = 0
      end
      vim.fn.setloclist(winid, {}, " ", { title = title, items = items })
      vim.api.nvim_set_current_win(winid ~= 0 and winid or vim.api.nvim_get_current_win())
      vim.cmd("lopen")
    end
  end)
end

local function apply_edit(client, edit)
  local encoding = client.offset_encoding or "utf-16"
  local ok, problem = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
  if not ok then
    notify("could not apply the edit: " .. tostring(problem), vim.log.levels.ERROR)
  end
  return ok
end

-- "Add related links under '## Related'": the server computes it as a code action (resolved
-- lazily), so ask for the actions over the whole buffer and run that one.
local function add_related_links(client, bufnr)
  -- Whole lines (character 0) need no conversion to the client's offset encoding.
  local last = vim.api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = {
      start = { line = 0, character = 0 },
      ["end"] = { line = math.max(last - 1, 0), character = 0 },
    },
    context = { diagnostics = {} },
  }
  compat.request(client, "textDocument/codeAction", params, function(err, actions)
    if err then
      notify("code actions failed: " .. err_text(err), vim.log.levels.ERROR)
      return
    end
    local chosen
    for _, action in ipairs(actions or {}) do
      local data = type(action.data) == "table" and action.data or {}
      if data.action == "zettel.addRelated" or (action.title or ""):match("^Add related links") then
        chosen = action
      end
    end
    if chosen == nil then
      notify("the server offers no related links to add", vim.log.levels.WARN)
      return
    end
    local function run(action)
      if action.edit then
        if (action.title or ""):match("nothing to add") then
          notify(action.title, vim.log.levels.WARN)
        end
        apply_edit(client, action.edit)
      else
        notify("the server sent no edit for '" .. tostring(action.title) .. "'",
          vim.log.levels.WARN)
      end
    end
    if chosen.edit == nil then
      compat.request(client, "codeAction/resolve", chosen, function(rerr, resolved)
        if rerr then
          notify("codeAction/resolve failed: " .. err_text(rerr), vim.log.levels.ERROR)
          return
        end
        run(resolved or chosen)
      end, bufnr)
    else
      run(chosen)
    end
  end, bufnr)
end

--- :ZettelSuggestLinks[!]: pick one of the server's link suggestions for this note and apply
--- it to the buffer (nothing is written to disk). With bang: the code action menu instead.
function M.suggest_links(bang)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = require_client(bufnr)
  if client == nil then
    return
  end
  if bang then
    compat.range_code_action(1, vim.api.nvim_buf_line_count(bufnr), { diagnostics = {} })
    return
  end
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  M.execute(client, bufnr, "zettel.suggestLinks", { uri = uri }, function(result)
    if type(result) ~= "table" then
      notify("this file is not a note of the vault", vim.log.levels.WARN)
      return
    end
    local target_uri = result.uri or uri
    local choices = {}
    local mentions = result.unlinked_mentions or {}
    for _, m in ipairs(mentions) do
      table.insert(choices, {
        label = string.format("Link '%s' → %s (line %d)", m.text, m.replacement,
          m.range.start.line + 1),
        edits = { { range = m.range, newText = m.replacement } },
      })
    end
    if #mentions > 1 then
      local edits = {}
      for _, m in ipairs(mentions) do
        table.insert(edits, { range = m.range, newText = m.replacement })
      end
      table.insert(choices, {
        label = string.format("Link all unlinked mentions in this note (%d)", #mentions),
        edits = edits,
      })
    end
    local related = result.related or {}
    if #related > 0 then
      local titles = {}
      for _, r in ipairs(related) do
        table.insert(titles, r.title or r.path)
      end
      table.insert(choices, {
        label = "Add related links: " .. table.concat(titles, ", "),
        related = true,
      })
    end
    if #choices == 0 then
      notify("no link suggestions for this note", vim.log.levels.INFO)
      return
    end
    vim.ui.select(choices, {
      prompt = "Zettel link suggestions",
      kind = "zettel_lsp.suggestion",
      format_item = function(c)
        return c.label
      end,
    }, function(choice)
      if choice == nil then
        return
      end
      if not vim.api.nvim_buf_is_valid(bufnr) then
        return
      end
      if choice.related then
        add_related_links(client, bufnr)
        return
      end
      if vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
        notify("the buffer changed since the suggestions were made; run :ZettelSuggestLinks again",
          vim.log.levels.WARN)
        return
      end
      -- Edits are sorted back to front so that earlier ranges stay valid.
      table.sort(choice.edits, function(a, b)
        if a.range.start.line ~= b.range.start.line then
          return a.range.start.line > b.range.start.line
        end
        return a.range.start.character > b.range.start.character
      end)
      apply_edit(client, { changes = { [target_uri] = choice.edits } })
    end)
  end)
end

--- :ZettelReindex
function M.reindex()
  local bufnr = vim.api.nvim_get_current_buf()
  local targets = {}
  local attached = M.get_client(bufnr)
  if attached then
    targets = { attached }
  else
    targets = M.clients()
  end
  if #targets == 0 then
    notify("no zettel-lsp server is running", vim.log.levels.ERROR)
    return
  end
  for _, client in ipairs(targets) do
    M.execute(client, bufnr, "zettel.reindex", nil, function(result)
      local roots = type(result) == "table" and result.started or {}
      notify("reindexing " .. (#roots > 0 and table.concat(roots, ", ") or "nothing")
        .. " in the background (:ZettelStatus shows the progress)")
    end)
  end
end

--- The status lines of one server's answer.
function M.format_status(result)
  local lines = {}
  if type(result) ~= "table" then
    return { "no status" }
  end
  local vaults = result.vaults or {}
  table.insert(lines,
    string.format("zettel-lsp %s: %d vault(s)", tostring(result.version), #vaults))
  local function s(v)
    if v == nil or v == vim.NIL then
      return "-"
    end
    return tostring(v)
  end
  for _, v in ipairs(vaults) do
    table.insert(lines, string.format("%s: phase %s%s", s(v.root), s(v.phase),
      v.complete == false and " (answers are partial)" or ""))
    table.insert(lines, string.format(
      "  cards %s, chunks %s, embedded cards %s, chunks waiting for vectors %s, cards in graph %s",
      s(v.cards), s(v.chunks), s(v.cards_embedded), s(v.chunks_waiting_for_vectors),
      s(v.cards_in_graph)))
    table.insert(lines, string.format("  model %s, backend %s", s(v.model), s(v.backend)))
    table.insert(lines, "  index dir " .. s(v.index_dir))
    if v.note and v.note ~= vim.NIL and v.note ~= "" then
      table.insert(lines, "  note: " .. tostring(v.note))
    end
    local skipped = 0
    if type(v.skipped) == "table" then
      skipped = vim.tbl_count(v.skipped) -- {path: reason}
    elseif type(v.skipped) == "number" then
      skipped = v.skipped
    end
    local problems = type(v.problems) == "table" and vim.tbl_count(v.problems) or 0
    if skipped > 0 or problems > 0 then
      table.insert(lines, string.format("  skipped files %d, problems %d", skipped, problems))
    end
    if type(v.problems) == "table" then
      for i, problem in ipairs(v.problems) do
        if i > 3 then
          table.insert(lines, "  ... (the LSP log has them all)")
          break
        end
        table.insert(lines, "  problem: " .. one_line(problem, 160))
      end
    end
  end
  return lines
end

--- :ZettelStatus
function M.status()
  local bufnr = vim.api.nvim_get_current_buf()
  local attached = M.get_client(bufnr)
  local targets = attached and { attached } or M.clients()
  if #targets == 0 then
    notify("no zettel-lsp server is running (" .. no_client_message() .. ")", vim.log.levels.WARN)
    return
  end
  for _, client in ipairs(targets) do
    M.execute(client, bufnr, "zettel.status", nil, function(result)
      notify(table.concat(M.format_status(result), "\n"))
    end)
  end
end

-- ---------------------------------------------------------------------------- hover mode

local hover_state = {} -- bufnr -> { text = last paragraph asked about, seq = n, request = id }
local hover_seq = 0

local function hover_lines(rows)
  local lines = { "**Related notes**", "" }
  for _, row in ipairs(rows) do
    local relation = row.relation and (" · _" .. row.relation .. "_") or ""
    table.insert(lines, string.format("- **%s** (%s, line %d)%s", row.title or row.path,
      folder_of(row), (row.line_start or 0) + 1, relation))
    local excerpt = one_line(row.excerpt, 90)
    if excerpt ~= "" then
      table.insert(lines, "  " .. excerpt)
    end
  end
  return lines
end

--- Ask for related notes for the paragraph under the cursor, if it changed, and show them in
--- a floating window (closed when the cursor moves). Called on CursorHold.
function M.hover_related(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if bufnr ~= vim.api.nvim_get_current_buf() or vim.fn.mode() ~= "n" then
    return
  end
  local client = M.get_client(bufnr)
  if client == nil then
    return
  end
  local _, _, text = M.paragraph_at_cursor(bufnr)
  local state = hover_state[bufnr] or {}
  hover_state[bufnr] = state
  if text == nil or text == state.text then
    return
  end
  state.text = text
  if state.request then
    compat.cancel_request(state.client, state.request)
    state.request = nil
  end
  hover_seq = hover_seq + 1
  local seq = hover_seq
  state.seq = seq
  local cursor = vim.api.nvim_win_get_cursor(0)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = {
    command = "zettel.related",
    arguments = { related_args(client, bufnr, M.config.hover_limit) },
  }
  local ok, id = compat.request(client, "workspace/executeCommand", params, function(err, rows)
    if state.seq ~= seq then
      return -- a newer paragraph was asked about
    end
    state.request = nil
    if err then
      state.text = nil -- ask again next time
      notify("related notes failed: " .. err_text(err), vim.log.levels.WARN)
      return
    end
    if type(rows) ~= "table" or #rows == 0 then
      return
    end
    -- Only show it where it was asked for.
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.fn.mode() ~= "n"
      or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
      state.text = nil
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] ~= cursor[1] or now[2] ~= cursor[2] then
      state.text = nil
      return
    end
    local float_buf, float_win = vim.lsp.util.open_floating_preview(hover_lines(rows), "markdown", {
      focus_id = "zettel_lsp_related",
      focus = false,
      max_width = 90,
      max_height = 20,
      border = "rounded",
      close_events = { "CursorMoved", "CursorMovedI", "InsertEnter", "BufLeave", "WinLeave" },
    })
    state.float = float_win
    state.float_buf = float_buf
  end, bufnr)
  if ok then
    state.request = id
    state.client = client
  else
    state.text = nil
  end
end

local function on_cursor_hold(bufnr)
  local delay = M.config.hover_delay_ms
  local extra = delay and (delay - vim.o.updatetime) or 0
  if extra <= 0 then
    M.hover_related(bufnr)
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  vim.defer_fn(function()
    if vim.api.nvim_get_current_buf() ~= bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] == cursor[1] and now[2] == cursor[2]
      and vim.api.nvim_buf_get_changedtick(bufnr) == tick then
      M.hover_related(bufnr)
    end
  end, extra)
end

-- ---------------------------------------------------------------------------- ask

local REQUEST_CANCELLED = -32800
local ask_seq = 0
local ask_open = nil -- the answer window's state (one at a time)

--- Make sure `client` passes zettel/askDelta to the plugin (it may have been started by
--- vim.lsp.enable or nvim-lspconfig, without the plugin's handlers).
local function ensure_ask_handler(client)
  if type(client.handlers) == "table" then
    with_ask_handler(client.handlers)
  else
    with_ask_handler(vim.lsp.handlers)
  end
end

local function present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ""
end

local function lines_of(text)
  return vim.split(tostring(text or ""), "\n", { plain = true })
end

local function set_lines(buf, lines)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
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
  ask_streams[state.token] = nil
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
  local lines = { "# " .. one_line(state.question), "" }
  local by_line = {}
  local answer_first = #lines + 1
  local text = state.answer
  if text == "" and not state.done then
    table.insert(lines, "_Retrieving notes and asking the model…_")
  elseif text ~= "" then
    vim.list_extend(lines, lines_of(text))
  end
  local answer_last = #lines
  local result = state.result
  if not state.done then
    vim.list_extend(lines, { "", "_Answering… q or <Esc> closes the window and cancels._" })
  else
    if state.error then
      table.insert(lines, "_zettel.ask failed: " .. one_line(state.error) .. "_")
    elseif present(result.fallback) then
      if text ~= "" then
        table.insert(lines, "")
      end
      table.insert(lines, "_No answer: " .. one_line(result.fallback) .. "_")
    elseif result.cancelled == true then
      table.insert(lines, "_(cancelled)_")
    elseif text == "" then
      table.insert(lines, "_No answer._")
    end
    for _, message in ipairs(type(result.messages) == "table" and result.messages or {}) do
      table.insert(lines, "_Note: " .. one_line(message) .. "_")
    end
    local sources = type(result.sources) == "table" and result.sources or {}
    if not state.error then
      local heading = "## Sources"
      if present(result.model) and not present(result.fallback) then
        heading = heading .. " (" .. tostring(result.model) .. ")"
      elseif present(result.fallback) then
        heading = heading .. " (the retrieved notes)"
      end
      vim.list_extend(lines, { "", heading, "" })
      if #sources == 0 then
        table.insert(lines, "_No note matched the question._")
      end
      for i, src in ipairs(sources) do
        table.insert(lines, source_label(i, src))
        by_line[#lines] = src
        local excerpt = one_line(src.excerpt, 200)
        if excerpt ~= "" then
          table.insert(lines, "   " .. excerpt)
          by_line[#lines] = src
        end
      end
      if #sources > 0 then
        vim.list_extend(lines, { "", "_<CR> on a source opens it · q closes_" })
      end
    end
  end
  state.sources_by_line = by_line
  set_lines(state.buf, lines)
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
  if not present(row.uri) then
    row.uri = nil
    if present(state.vault) and present(src.path) then
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
  M.open_result(row)
end

local function open_answer_window(state)
  local buf = vim.api.nvim_create_buf(false, true)
  state.buf = buf
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "zettel_ask"
  vim.bo[buf].syntax = "markdown"
  pcall(vim.api.nvim_buf_set_name, buf, "zettel-ask://" .. state.seq)
  if M.config.ask_window == "split" then
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
  local client, bufnr = client_and_text(question, "Zettel ask: ", M.ask)
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
  ensure_ask_handler(client)
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
  ask_streams[state.token] = function(delta)
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
    ask_streams[state.token] = nil
    state.done = true
    if err and err.code == REQUEST_CANCELLED then -- cancelled by someone else
      state.error = "the request was cancelled"
      state.result = {}
    elseif err then
      state.error = err_text(err)
      state.result = {}
      notify("zettel.ask failed: " .. state.error, vim.log.levels.ERROR)
    else
      result = type(result) == "table" and result or {}
      state.result = result
      state.vault = present(result.vault) and result.vault or nil
      -- the final text wins over the deltas (it is the same when none were lost)
      if type(result.answer) == "string" and result.answer ~= "" then
        state.answer = result.answer
      end
      if present(result.fallback) then
        notify("no answer (" .. one_line(result.fallback) .. "); the window lists the notes "
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

-- ---------------------------------------------------------------------------- setup

-- One entry per user command.
M.commands = {
  ZettelSearch = {
    run = function(a)
      M.search(a.args)
    end,
    opts = { nargs = "*", desc = "zettel-lsp: search the vault, open the chosen note" },
  },
  ZettelRelated = {
    run = function()
      M.related()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: notes related to the paragraph at the cursor" },
  },
  ZettelSuggestLinks = {
    run = function(a)
      M.suggest_links(a.bang)
    end,
    opts = { nargs = 0, bang = true, desc = "zettel-lsp: link suggestions for this note" },
  },
  ZettelReindex = {
    run = function()
      M.reindex()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: rebuild the index in the background" },
  },
  ZettelStatus = {
    run = function()
      M.status()
    end,
    opts = { nargs = 0, desc = "zettel-lsp: index phase, counts, model and index folder" },
  },
  ZettelAsk = {
    run = function(a)
      M.ask(a.args)
    end,
    opts = { nargs = "*", desc = "zettel-lsp: answer a question from the notes (Ollama)" },
  },
}

local function create_commands()
  for name, spec in pairs(M.commands) do
    vim.api.nvim_create_user_command(name, spec.run, spec.opts)
  end
end

--- Configure the plugin: see :help zettel_lsp-setup.
---@param opts table|nil
function M.setup(opts)
  opts = opts or {}
  local config = vim.deepcopy(defaults)
  for k, v in pairs(opts) do
    config[k] = v
  end
  if type(config.cmd) == "string" then
    config.cmd = { config.cmd }
  end
  M.config = config
  create_commands()

  local group = vim.api.nvim_create_augroup("zettel_lsp", { clear = true })
  if config.autostart then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = config.filetypes,
      callback = function(args)
        M.attach(args.buf)
      end,
      desc = "zettel-lsp: start/attach the server for notes in a vault",
    })
    -- Buffers opened before setup() (e.g. when the plugin is lazy-loaded on a filetype).
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
        M.attach(bufnr)
      end
    end
  end
  if config.hover_suggestions then
    vim.api.nvim_create_autocmd("CursorHold", {
      group = group,
      callback = function(args)
        if vim.tbl_contains(config.filetypes, vim.bo[args.buf].filetype) then
          on_cursor_hold(args.buf)
        end
      end,
      desc = "zettel-lsp: related notes for the paragraph under the cursor",
    })
    vim.api.nvim_create_autocmd({ "BufDelete", "BufWipeout" }, {
      group = group,
      callback = function(args)
        hover_state[args.buf] = nil
      end,
    })
  end
  return M
end

--- Send new settings (camelCase keys) to every running server; keys you leave out keep their
--- values. Index settings (model, cacheDir, ...) make the server re-open its vaults.
function M.update_settings(settings)
  local current = server_settings(M.config)
  for k, v in pairs(settings or {}) do
    current[k] = v
  end
  M.config.settings = current
  M.config.init_options = {}
  for _, client in ipairs(M.clients()) do
    client.config.settings = { zettel = as_object(vim.deepcopy(current)) }
    compat.notify(client, "workspace/didChangeConfiguration", { settings = client.config.settings })
  end
end

return M
