-- Small helpers shared by the plugin's modules: messages, one-line text and text wrapped at
-- word boundaries for floating windows.
local M = {}

--- vim.notify with the plugin's prefix (level: INFO unless given).
function M.notify(msg, level)
  vim.notify("zettel-lsp: " .. msg, level or vim.log.levels.INFO)
end

--- The text of an LSP error (a ResponseError table) or of anything else.
function M.err_text(err)
  if type(err) == "table" then
    return tostring(err.message or vim.inspect(err))
  end
  return tostring(err)
end

--- `text` on one line (runs of white space become one space), cut to `max` characters.
function M.one_line(text, max)
  text = tostring(text or ""):gsub("%s+", " ")
  text = vim.trim(text)
  if max and #text > max then
    -- cut on a character boundary (strcharpart counts characters, not bytes)
    text = vim.fn.strcharpart(text, 0, max - 1) .. "…"
  end
  return text
end

--- `text` cut at its end to at most `cells` screen cells, ending in "…" when cut.
function M.fit(text, cells)
  text = tostring(text or "")
  if vim.fn.strdisplaywidth(text) <= cells then
    return text
  end
  if cells < 1 then
    return ""
  end
  local n = vim.fn.strchars(text)
  local take = math.min(n, cells) -- characters are at least one cell wide
  while take > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, take)) > cells - 1 do
    take = take - 1
  end
  return vim.fn.strcharpart(text, 0, take):gsub("%s+$", "") .. "…"
end

--- A folder shortened from the left as the VS Code views do: its last `keep` (default 2)
--- folders after "…/" ("…/Physics/Particle Physics"), then, if still wider than `cells`
--- screen cells, its end after "…".
function M.short_folder(folder, cells, keep)
  folder = tostring(folder or "")
  local parts = vim.split(folder, "/", { plain = true })
  keep = keep or 2
  if #parts > keep then
    folder = "…/" .. table.concat(parts, "/", #parts - keep + 1)
  end
  if cells and vim.fn.strdisplaywidth(folder) > cells then
    local n = vim.fn.strchars(folder)
    local from = 0
    while from < n and vim.fn.strdisplaywidth(vim.fn.strcharpart(folder, from)) > cells - 1 do
      from = from + 1
    end
    folder = cells >= 1 and ("…" .. vim.fn.strcharpart(folder, from)) or ""
  end
  return folder
end

--- Whether a JSON value is given (not nil, not null, not "").
function M.present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ""
end

--- `bufnr`, with nil and 0 meaning the current buffer.
function M.buf(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

--- The longest start of `text` that takes at most `cells` screen cells (at least one
--- character), and the rest.
local function cut_to_width(text, cells)
  local n = vim.fn.strchars(text)
  local take = 1
  while take < n and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, take + 1)) <= cells do
    take = take + 1
  end
  return vim.fn.strcharpart(text, 0, take), vim.fn.strcharpart(text, take)
end

--- Words of `segments` ({ text, hl } pairs: hl a highlight group or nil) filled into lines of
--- at most `width` screen cells, broken at spaces only (a word longer than a whole line is the
--- one thing cut). `first` starts the first line, `rest` each following one (default: spaces
--- as wide as `first`). With `max_lines`, the lines after it are dropped and the last kept one
--- ends in "…". `escape(word)` (optional) rewrites a word that starts a following line.
--- Returns the lines and the highlights: { line (0-based), start col, end col (bytes), hl }.
---@param segments table[]
---@param width integer
---@param first string|nil
---@param rest string|nil
---@param max_lines integer|nil
---@param escape function|nil
---@return string[] lines, table[] highlights
function M.wrap_segments(segments, width, first, rest, max_lines, escape)
  first = first or ""
  rest = rest or string.rep(" ", vim.fn.strdisplaywidth(first))
  local lines, marks = {}, {}
  local line, used, empty = first, vim.fn.strdisplaywidth(first), true
  local function new_line()
    table.insert(lines, line)
    line, used, empty = rest, vim.fn.strdisplaywidth(rest), true
  end
  local function put(word, hl)
    if not empty then
      line = line .. " "
      used = used + 1
    elseif #lines > 0 and escape then
      word = escape(word)
    end
    local col = #line
    line = line .. word
    used = used + vim.fn.strdisplaywidth(word)
    empty = false
    if hl then
      table.insert(marks, { #lines, col, #line, hl })
    end
  end
  for _, segment in ipairs(segments) do
    for word in tostring(segment[1] or ""):gmatch("%S+") do
      local cells = vim.fn.strdisplaywidth(word)
      if not empty and used + 1 + cells > width then
        new_line()
      end
      -- a word longer than a whole line: cut it where the line ends
      while empty and used + cells > width and width - used > 0 and vim.fn.strchars(word) > 1 do
        local piece
        piece, word = cut_to_width(word, width - used)
        put(piece, segment[2])
        new_line()
        cells = vim.fn.strdisplaywidth(word)
      end
      put(word, segment[2])
    end
  end
  if not empty or #lines == 0 then
    table.insert(lines, line)
  end
  if max_lines and #lines > max_lines then
    local kept = {}
    for i = 1, max_lines do
      kept[i] = lines[i]
    end
    local last = kept[max_lines]
    while vim.fn.strdisplaywidth(last) + 2 > width and vim.fn.strchars(last) > 1 do
      -- drop the last word (a single word: its last character) to make room for " …"
      local shorter = last:match("^(.*%S)%s+%S+$")
      if shorter == nil or vim.fn.strdisplaywidth(shorter) <= vim.fn.strdisplaywidth(rest) then
        shorter = vim.fn.strcharpart(last, 0, vim.fn.strchars(last) - 1)
      end
      last = shorter
    end
    kept[max_lines] = last:gsub("%s+$", "") .. " …"
    local kept_marks = {}
    for _, m in ipairs(marks) do
      if m[1] < max_lines - 1 then
        table.insert(kept_marks, m)
      elseif m[1] == max_lines - 1 and m[2] < #last then
        table.insert(kept_marks, { m[1], m[2], math.min(m[3], #last), m[4] })
      end
    end
    lines, marks = kept, kept_marks
  end
  return lines, marks
end

--- `text` in lines of at most `width` screen cells, broken at spaces (see wrap_segments).
function M.wrap(text, width, first, rest, max_lines)
  return (M.wrap_segments({ { text } }, width, first, rest, max_lines))
end

--- The widest of `lines` in screen cells.
function M.max_width(lines)
  local widest = 0
  for _, line in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  return widest
end

return M
