-- Pick one row of a result list: telescope.nvim when installed (option `picker`), else
-- vim.ui.select.
local config = require("zettel_lsp.config")
local results = require("zettel_lsp.results")
local util = require("zettel_lsp.util")

local M = {}

local function telescope_available()
  local picker = config.current.picker
  if picker == "select" then
    return false
  end
  local ok = pcall(require, "telescope")
  if not ok and picker == "telescope" then
    util.notify("picker = 'telescope' but telescope.nvim is not installed; using vim.ui.select",
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
          local text = results.format_result(row)
          return {
            value = row,
            display = text,
            ordinal = text,
            filename = results.fname(row),
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

--- vim.ui.select, with the related-notes float closed first (it would stay over the list).
function M.select(items, opts, on_choice)
  require("zettel_lsp.hover").close_related()
  vim.ui.select(items, opts, on_choice)
end

--- The screen cells an item of a list of `count` gets in vim.ui.select: the width of the editor
--- less the "N: " Neovim's own select puts before it (one line each, so that the whole list
--- shows on one screen; telescope, fzf-lua and dressing.nvim cut it to their own width).
function M.item_width(count)
  return math.max(20, vim.o.columns - #tostring(count) - 3)
end

--- Let the user pick one of `rows` (telescope or vim.ui.select): one line each, title first;
--- open it.
function M.pick_result(rows, title)
  if telescope_available() then
    require("zettel_lsp.hover").close_related()
    telescope_pick(rows, title, results.open_result)
    return
  end
  local width = M.item_width(#rows)
  M.select(rows, {
    prompt = title,
    kind = "zettel_lsp.result",
    format_item = function(row)
      return results.format_result(row, width)
    end,
  }, function(row)
    if row then
      results.open_result(row)
    end
  end)
end

return M
