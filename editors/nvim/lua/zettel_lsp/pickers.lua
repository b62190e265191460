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

--- Let the user pick one of `rows` (telescope or vim.ui.select); open it.
function M.pick_result(rows, title)
  if telescope_available() then
    telescope_pick(rows, title, results.open_result)
    return
  end
  vim.ui.select(rows, {
    prompt = title,
    kind = "zettel_lsp.result",
    format_item = results.format_result,
  }, function(row)
    if row then
      results.open_result(row)
    end
  end)
end

return M
