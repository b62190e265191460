-- The server's hover Markdown as plain text for the plugin's floats: Neovim 0.7 shows a float's
-- Markdown as written (`###`, backticks, `>` quote marks), so the floats show the text a reader
-- sees, with highlights in place of the marks, the same in every Neovim version:
--   a heading or a line in bold: its text (highlighted); a quote: its text, indented;
--   a code block: its lines, indented, without the fences; a list item: "• " and its text;
--   [title](file:///…) links: the title and the note's folder inside the vault, shortened from
--   the left ("Hadrons (…/Particle Physics/Standard Model)"); in a heading or bold: the title;
--   other links: the text and the address; `code`, **bold**, *emphasis*, \-escapes: the text.
local util = require("zettel_lsp.util")

local M = {}

--- The vault-relative path of a file:// uri (else the path from ~) and the line of its
--- "#L<n>" fragment, if any.
function M.vault_path(uri, root)
  local target, fragment = uri:match("^([^#]*)#?(.*)$")
  local fname = vim.uri_to_fname(target)
  local line = fragment:match("^L(%d+)")
  local uv = vim.loop or vim.uv
  if root and root ~= "" then
    local roots = { root, uv.fs_realpath(root) }
    local names = { fname, uv.fs_realpath(fname) }
    for _, r in ipairs(roots) do
      local prefix = r:gsub("/+$", "") .. "/"
      for _, name in ipairs(names) do
        if name:sub(1, #prefix) == prefix then
          return name:sub(#prefix + 1), line
        end
      end
    end
  end
  return vim.fn.fnamemodify(fname, ":~"), line
end

--- The folder a view shows for a vault-relative path: its folder, or the vault's name at the top
--- of the vault (the server's convention, search/results.py folder_of).
function M.folder_of(path, root)
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then
    return dir
  end
  return root and vim.fn.fnamemodify((root:gsub("/+$", "")), ":t") or ""
end

-- The `[` that opens the link text ending at `close` (the `]` of "]("), skipping escaped
-- brackets (the server escapes those of titles and excerpts).
local function label_start(line, close)
  local depth = 0
  for j = close - 1, 1, -1 do
    local ch = line:sub(j, j)
    if (ch == "[" or ch == "]") and line:sub(j - 1, j - 1) ~= "\\" then
      if ch == "]" then
        depth = depth + 1
      elseif depth == 0 then
        return j
      else
        depth = depth - 1
      end
    end
  end
  return nil
end

--- Text without inline Markdown: `code`, **bold**, *emphasis*, [[wikilinks]] (their label or
--- target), \-escapes.
function M.unmark(text)
  text = text:gsub("%[%[([^%]|]-)|([^%]]-)%]%]", "%2")
  text = text:gsub("%[%[([^%]]-)%]%]", "%1")
  text = text:gsub("`+([^`]+)`+", "%1")
  text = text:gsub("%*%*(.-)%*%*", "%1")
  text = text:gsub("%*([^%s*][^*]-)%*", "%1")
  text = text:gsub("%*%*", "") -- the half of a bold pair a link split off
  text = text:gsub("\\([%[%]%*_`\\#>%-%.!|~()+])", "%1")
  return text
end

-- The segments ({ text, highlight }) of one line of inline Markdown: links as their text (and,
-- for a note outside a heading or bold text, its folder), the rest without marks.
local function segments(text, root, hl, bare_links)
  local out = {}
  local from = 1
  while true do
    local close = text:find("](", from, true)
    local open = close and label_start(text, close)
    local finish = close and text:find(")", close + 2, true)
    if not (close and open and finish) or open < from then
      table.insert(out, { M.unmark(text:sub(from)), hl })
      return out
    end
    local before = text:sub(from, open - 1):gsub("!$", "")
    table.insert(out, { M.unmark(before), hl })
    local label = M.unmark(text:sub(open + 1, close - 1))
    local target = text:sub(close + 2, finish - 1)
    table.insert(out, { label, hl or "ZettelLspTitle" })
    if vim.startswith(target, "file:") then
      if not bare_links and text:sub(open - 2, open - 1) ~= "**" then
        local path = M.vault_path(target, root)
        table.insert(out, { "(" .. util.short_folder(M.folder_of(path, root)) .. ")",
          "ZettelLspPath" })
      end
    elseif target ~= "" then
      table.insert(out, { "(" .. target .. ")", "ZettelLspPath" })
    end
    from = finish + 1
  end
end

-- (first line prefix, text, prefix of the following lines, highlight) of a Markdown line
-- outside code blocks, `indent` before both prefixes.
local function line_parts(line, indent)
  local heading = line:match("^%s*#+%s+(.*)$")
  if heading then
    return indent, heading:gsub("%s+#+%s*$", ""), indent, "ZettelLspHeader"
  end
  local item = line:match("^(%s*[-*+]%s+)")
  if item then
    local first = indent .. item:gsub("[-*+]", "•")
    return first, line:sub(#item + 1), string.rep(" ", vim.fn.strdisplaywidth(first)), nil
  end
  local number = line:match("^(%s*%d+[.)]%s+)")
  if number then
    local first = indent .. number
    return first, line:sub(#number + 1), string.rep(" ", vim.fn.strdisplaywidth(first)), nil
  end
  local lead = line:match("^(%s*)")
  local text = line:sub(#lead + 1)
  -- a line all in bold ("**Related notes**"): a header
  local hl = (text:match("^%*%*[^*]+%*%*$") or text:match("^%*%*[^*]+%*%*:?$")) and
    "ZettelLspHeader" or nil
  return indent .. lead, text, indent .. lead, hl
end

--- The lines (and highlights { line, start col, end col, group }) of Markdown as plain text (see
--- the top of this file), wrapped at word boundaries to `width` screen cells; code and table
--- lines are cut at `width` instead. `root`: the vault (for links' folders).
function M.lines(markdown, root, width)
  local lines, marks = {}, {}
  local fenced = false
  local function add(more, more_marks)
    for _, m in ipairs(more_marks or {}) do
      table.insert(marks, { m[1] + #lines, m[2], m[3], m[4] })
    end
    vim.list_extend(lines, more)
  end
  for _, raw in ipairs(vim.split(markdown, "\n", { plain = true })) do
    local quote = raw:match("^%s*>[>%s]*")
    local line = quote and raw:sub(#quote + 1) or raw
    local indent = quote and "  " or ""
    if line:match("^%s*```") or line:match("^%s*~~~") then
      fenced = not fenced
    elseif fenced or line:match("^%s*|") then
      add({ util.fit(indent .. (fenced and "  " or "") .. line, width) })
    elseif not line:find("%S") then
      if #lines > 0 and lines[#lines] ~= "" then
        add({ "" })
      end
    else
      local first, text, rest, hl = line_parts(line, indent)
      add(util.wrap_segments(segments(text, root, hl, hl == "ZettelLspHeader"), width, first,
        rest))
    end
  end
  while #lines > 0 and lines[#lines] == "" do
    table.remove(lines)
  end
  return lines, marks
end

return M
