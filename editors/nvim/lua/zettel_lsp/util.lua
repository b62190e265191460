-- Small helpers shared by the plugin's modules: messages and one-line text.
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

--- Whether a JSON value is given (not nil, not null, not "").
function M.present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ""
end

--- `bufnr`, with nil and 0 meaning the current buffer.
function M.buf(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

return M
