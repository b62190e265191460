-- :ZettelSuggestLinks: the server's link suggestions for a note (unlinked mentions, "Add
-- related links"), applied to the buffer (as editors/vscode/src/suggest.ts).
local client = require("zettel_lsp.client")
local compat = require("zettel_lsp.compat")
local pickers = require("zettel_lsp.pickers")
local util = require("zettel_lsp.util")

local notify = util.notify

local M = {}

local function apply_edit(c, edit)
  local encoding = c.offset_encoding or "utf-16"
  local ok, problem = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
  if not ok then
    notify("could not apply the edit: " .. tostring(problem), vim.log.levels.ERROR)
  end
  return ok
end

-- "Add related links under '## Related'": the server computes it as a code action (resolved
-- lazily), so ask for the actions over the whole buffer and run that one.
local function add_related_links(c, bufnr)
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
  compat.request(c, "textDocument/codeAction", params, function(err, actions)
    if err then
      notify("code actions failed: " .. util.err_text(err), vim.log.levels.ERROR)
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
        apply_edit(c, action.edit)
      else
        notify("the server sent no edit for '" .. tostring(action.title) .. "'",
          vim.log.levels.WARN)
      end
    end
    if chosen.edit == nil then
      compat.request(c, "codeAction/resolve", chosen, function(rerr, resolved)
        if rerr then
          notify("codeAction/resolve failed: " .. util.err_text(rerr), vim.log.levels.ERROR)
          return
        end
        run(resolved or chosen)
      end, bufnr)
    else
      run(chosen)
    end
  end, bufnr)
end

local function edit_of(range, text)
  return { range = range, newText = text }
end

--- The mention choices of a server that sends ``mention_targets`` (each mentioned card once, most
--- confident first, with its count) and ``link_confident`` ("Link N confident mentions", below
--- the one-card fixes, as the code actions and the VS Code picker order them).
local function target_choices(result, choices)
  for _, t in ipairs(result.mention_targets) do
    local edits = {}
    for _, r in ipairs(t.ranges or {}) do
      table.insert(edits, edit_of(r, t.replacement))
    end
    if #edits > 0 then
      local where = string.format("(line %d)", edits[1].range.start.line + 1)
      if #edits > 1 then
        where = string.format("(%d mentions, from line %d)", #edits, edits[1].range.start.line + 1)
      end
      table.insert(choices, {
        label = string.format("Link '%s' → %s %s", t.text, t.replacement, where),
        edits = edits,
      })
    end
  end
  local confident = result.link_confident
  if type(confident) == "table" and (confident.count or 0) > 0 then
    local edits = {}
    for _, e in ipairs(confident.edits or {}) do
      table.insert(edits, edit_of(e.range, e.newText))
    end
    table.insert(choices, { label = confident.title, edits = edits })
  end
end

--- The mention choices of an older server (``unlinked_mentions`` only): one per mention, then
--- "Link all".
local function mention_choices(result, choices)
  local mentions = result.unlinked_mentions or {}
  for _, m in ipairs(mentions) do
    table.insert(choices, {
      label = string.format("Link '%s' → %s (line %d)", m.text, m.replacement,
        m.range.start.line + 1),
      edits = { edit_of(m.range, m.replacement) },
    })
  end
  if #mentions > 1 then
    local edits = {}
    for _, m in ipairs(mentions) do
      table.insert(edits, edit_of(m.range, m.replacement))
    end
    table.insert(choices, {
      label = string.format("Link all unlinked mentions in this note (%d)", #mentions),
      edits = edits,
    })
  end
end

--- The choices offered for a zettel.suggestLinks result: each { label, edits } or
--- { label, related = true }.
function M.choices(result)
  local choices = {}
  if type(result.mention_targets) == "table" then
    target_choices(result, choices)
  else
    mention_choices(result, choices)
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
  return choices
end

--- :ZettelSuggestLinks[!]: pick one of the server's link suggestions for this note and apply
--- it to the buffer (nothing is written to disk). With bang: the code action menu instead.
function M.suggest_links(bang)
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.require_client(bufnr)
  if c == nil then
    return
  end
  if bang then
    compat.range_code_action(1, vim.api.nvim_buf_line_count(bufnr), { diagnostics = {} })
    return
  end
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  client.execute(c, bufnr, "zettel.suggestLinks", { uri = uri }, function(result)
    if type(result) ~= "table" then
      notify("this file is not a note of the vault", vim.log.levels.WARN)
      return
    end
    local target_uri = result.uri or uri
    local choices = M.choices(result)
    if #choices == 0 then
      notify("no link suggestions for this note", vim.log.levels.INFO)
      return
    end
    pickers.select(choices, {
      prompt = "Zettel link suggestions",
      kind = "zettel_lsp.suggestion",
      format_item = function(choice)
        return choice.label
      end,
    }, function(choice)
      if choice == nil then
        return
      end
      if not vim.api.nvim_buf_is_valid(bufnr) then
        return
      end
      if choice.related then
        add_related_links(c, bufnr)
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
      apply_edit(c, { changes = { [target_uri] = choice.edits } })
    end)
  end)
end

return M
