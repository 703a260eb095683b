-- The plugin tells the REAL daemon where the cursor is (infilld/didChangeCursor,
-- docs/PROTOCOL.md) and the daemon prefills there: a real Neovim opens a file
-- (no edit at all), the plugin sends the cursor after the buffer is attached,
-- and infilld/status then shows a completed idle prefill; a move in insert
-- mode (again without an edit) queues one more. Short on purpose.
-- Environment: INFILLD_BIN (the daemon), INFILLD_TINY_MODEL (optional model).
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')

local bin, model = T.daemon()

T.start(([[{
  path = %q,
  model = %s,
  native = false,
  auto_trigger = false,
  cursor_debounce_ms = 30,
  log_level = 'error',
  init_options = { validate = false, seed = 7, steps = 8, latencyBudgetMs = 0,
                   idlePrefill = true, idlePrefillDelayMs = 50 },
}]]):format(bin, model and ('%q'):format(model) or 'nil'))
T.lua([[
  _G.t.cursors = {}
  require('infilld')._hooks.on_cursor = function(p) table.insert(_G.t.cursors, p) end
]])

local file = vim.fn.tempname() .. '.py'
local f = io.open(file, 'w')
f:write('def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n')
f:close()
T.lua('vim.cmd("edit " .. ...)', file)
T.lua('vim.api.nvim_win_set_cursor(0, {4, 14})')
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)',
  20000, 'daemon attached')
T.wait('return #_G.t.cursors >= 1', 10000, 'the plugin sent the cursor after attaching')
local sent = T.lua('return _G.t.cursors[1]')
T.eq(sent.textDocument.uri, vim.uri_from_fname(file), 'cursor notification for the opened file')
T.eq(sent.position.line, 3, 'cursor line (0-based)')
local function pf(key)
  return T.lua(([[
    local s = require('infilld').status()
    return s and s.idlePrefill and s.idlePrefill.%s or -1
  ]]):format(key))
end
T.wait('local s = require("infilld").status(); return s and s.state == "ready"', 60000, 'model ready')
-- the model may have loaded after the first notification: move once more
T.lua('vim.api.nvim_win_set_cursor(0, {5, 4})')
T.input('i')
T.wait(('return #_G.t.cursors >= 2'), 10000, 'InsertEnter sends the cursor')
T.wait('local s = require("infilld").status(); return s and s.idlePrefill and s.idlePrefill.completed >= 1',
  60000, 'the daemon completed a prefill at the reported cursor')
T.ok(pf('completed') >= 1, 'infilld/status shows a completed idle prefill without any edit')
if pf('completed') < 1 then
  T.log('cursors: ' .. vim.inspect(T.lua('return _G.t.cursors')))
  T.log('status: ' .. vim.inspect(T.lua('return require("infilld").status()')))
end
local q = pf('queued')
T.input('<Up>')
T.wait(('local s = require("infilld").status(); return s and s.idlePrefill.queued > %d'):format(q),
  20000, 'an insert-mode move queues a prefill at the new place')
T.eq(T.lua('return vim.api.nvim_buf_get_changedtick(0)') > 0, true, 'buffer valid')
T.ok(table.concat(T.buffer(), '\n') == 'def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b',
  'nothing was typed')
os.remove(file)
T.finish()
