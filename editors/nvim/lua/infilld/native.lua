-- Neovim 0.12+: hand requests and rendering to vim.lsp.inline_completion.
--
-- Every function takes the `ic` module (vim.lsp.inline_completion) as an
-- argument. tests/editors/test_nvim_native.lua runs it in a real 0.12.
--
-- Native mode keeps Neovim's own debounce, rendering and cycling. Word and line
-- accept go through get{on_accept}, which hands us the item to insert
-- ourselves; the rest of the item is then dropped and Neovim asks again.
local text = require('infilld.text')

local M = {}

-- Is the native API there? `lsp` is vim.lsp.
function M.available(lsp)
  local ic = lsp and lsp.inline_completion
  return type(ic) == 'table' and type(ic.enable) == 'function' and type(ic.get) == 'function'
end


-- Enables it for the buffer. Not with a client_id in the filter: 0.12.4 then
-- sets the client's marker only, the buffer's stays off, and Neovim never
-- asks (a real 0.12.4 showed it; the stubbed test had accepted the call).
function M.attach(ic, bufnr)
  ic.enable(true, { bufnr = bufnr })
end

-- True when Neovim shows something we could accept (best effort: the native
-- module has no query; its extmark namespace is looked up by name).
function M.visible(bufnr, api)
  api = api or vim.api
  local ns = api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  if not ns then
    return false
  end
  local marks = api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { limit = 1 })
  return #marks > 0
end

-- The text of an item still to insert at the cursor (cursor row/col in bytes,
-- 0-based; line = the cursor line), and the byte column where the item's
-- replaced range ends (>= col).
function M.item_rest(item, row, col, line)
  local ins = item.insert_text
  if type(ins) == 'table' then
    ins = ins.value or ''
  end
  local r = item.range
  if not r then
    return ins, col
  end
  -- a vim.Range: 0-based byte positions, end exclusive (the stubbed tests
  -- had assumed { start = {row, col}, end_ = ... }, which 0.12.4 does not have)
  local srow, scol, erow, ecol = r.start_row, r.start_col, r.end_row, r.end_col
  if srow ~= row or erow ~= row or scol > col then
    return nil
  end
  local typed = line:sub(scol + 1, col)
  if not text.starts_with(ins, typed) then
    return nil
  end
  return ins:sub(#typed + 1), math.max(ecol, col), ins:sub(1, #typed)
end

-- how: 'all' | 'word' | 'line'. report(item, accepted_text, full) is called
-- after a word/line insert (a full accept runs the item's command natively).
function M.accept(ic, how, report, api)
  api = api or vim.api
  if how == 'all' then
    return ic.get() and true or false
  end
  return ic.get({
    on_accept = function(item)
      local pos = api.nvim_win_get_cursor(0)
      local row, col = pos[1] - 1, pos[2]
      local line = api.nvim_buf_get_lines(0, row, row + 1, false)[1] or ''
      local rest, _, typed = M.item_rest(item, row, col, line)
      if not rest or rest == '' then
        return
      end
      local piece = how == 'word' and text.next_word(rest) or text.next_line(rest)
      local lines = text.split_lines(piece)
      api.nvim_buf_set_text(0, row, col, row, col, lines)
      api.nvim_win_set_cursor(0, {
        row + #lines,
        (#lines == 1 and col or 0) + #lines[#lines],
      })
      if report then
        report(item, (typed or '') .. piece, #piece == #rest)
      end
    end,
  }) and true or false
end

-- Native has no dismiss; disabling and re-enabling for the buffer clears it.
function M.dismiss(ic, bufnr, api)
  api = api or vim.api
  bufnr = bufnr == 0 and api.nvim_get_current_buf() or bufnr
  if not M.visible(bufnr, api) then
    return false
  end
  ic.enable(false, { bufnr = bufnr })
  ic.enable(true, { bufnr = bufnr })
  return true
end

return M
