-- Benchmark of the Neovim plugin (not a test; results go to docs/perf/editors.md).
--   nvim --headless -u NONE -i NONE -n -c 'luafile tests/editors/bench_nvim.lua'
-- Environment: INFILLD_BIN and INFILLD_TINY_MODEL for the daemon part (skipped
-- without them).
--  1. render cost: ghost.layout + nvim_buf_set_extmark (update in place), µs
--  2. keystroke -> updated ghost text while typing through (scripted server),
--     measured over RPC from a driver Neovim, ms
--  3. with the real daemon and tiny model: last keystroke -> answer drawn,
--     ms (includes the 30 ms debounce and the model)
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')
vim.opt.rtp:prepend(T.repo .. '/editors/nvim')
local ghost = require('infilld.ghost')
local uv = vim.uv or vim.loop

local function ms(t0)
  return (uv.hrtime() - t0) / 1e6
end
local function median(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)]
end

-- 1. render cost in this Neovim
local buf = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '    result = compute(alpha, beta)  # trailing' })
local ns = vim.api.nvim_create_namespace('bench')
local text = 'value_one + value_two\n    return result * 2\n'
local N = 20000
local mark
local t0 = uv.hrtime()
for i = 1, N do
  local lay = ghost.layout({
    line = '    result = compute(alpha, beta)  # trailing',
    col = 13 + (i % 5),
    ghost = text:sub(1 + (i % 7)),
    keep_from = 13 + (i % 5),
    inline = false,
    width = vim.fn.strdisplaywidth,
  })
  mark = ghost.show(vim.api, buf, ns, mark, 0, lay)
end
local render_us = ms(t0) * 1000 / N
io.stdout:write(('render (layout + set_extmark, overlay, 3 lines): %.2f us/update over %d\n'):format(render_us, N))

-- 2. typing-through latency with the scripted server
T.start(([[{ cmd = { '/usr/bin/python3', %q }, debounce_ms = 600000, native = false, partial = false }]])
  :format(T.dir .. 'fake_server.py'))
T.lua('vim.cmd("edit " .. ...)', vim.fn.tempname() .. '.py')
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)', 10000)
T.input('i# ')
T.input('<M-\\>')
T.wait('return require("infilld").shown(0) ~= nil', 10000, 'ghost')
local word = 'alpha_beta(gamma)'
local lat = {}
for i = 1, #word do
  local want = ('alpha_beta(gamma) + delta\n    return omega'):sub(i + 1)
  local t = uv.hrtime()
  T.input(word:sub(i, i))
  T.wait(('local s = require("infilld").shown(0); return s and s.ghost == %q'):format(want), 5000)
  lat[#lat + 1] = ms(t)
end
io.stdout:write(('typing-through keystroke -> ghost updated: median %.2f ms, max %.2f ms over %d keys (RPC round trips included)\n')
  :format(median(lat), math.max(unpack(lat)), #lat))
T.stop()

-- 3. real daemon
local bin, model = os.getenv('INFILLD_BIN'), os.getenv('INFILLD_TINY_MODEL')
if bin and vim.fn.executable(bin) == 1 then
  T.start(([[{ path = %q, model = %s, debounce_ms = 30, native = false, partial = false,
    init_options = { validate = false, seed = 7, candidates = 1 } }]]):format(bin, model and ('%q'):format(model) or 'nil'))
  T.lua('vim.cmd("edit " .. ...)', vim.fn.tempname() .. '.py')
  T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)', 20000,
    'daemon attached')
  T.input('idef f(x):<CR>    # ')
  T.wait('return #_G.t.responses > 0', 90000, 'first answer (model load)')
  local real = {}
  for i = 1, 7 do
    T.input('<C-]>')
    local n = T.lua('return _G.t.answers')
    local t = uv.hrtime()
    T.input(string.char(96 + i))
    -- an answer (it may be empty when post-processing drops the random text)
    T.wait('return _G.t.answers > ' .. n, 90000, 'answer from daemon')
    real[#real + 1] = ms(t)
  end
  io.stdout:write('last error: ' .. vim.inspect(T.lua('return _G.t.last_error')) .. '\n')
  io.stdout:write(('answers: %d, null (cancelled): %d, errors: %d\n'):format(
    T.lua('return _G.t.answers'), T.lua('return _G.t.nulls'), T.lua('return _G.t.errors')))
  io.stdout:write(('real daemon, tiny model, CPU: keystroke -> answer drawn: median %.0f ms, min %.0f, max %.0f over %d (30 ms debounce included)\n')
    :format(median(real), math.min(unpack(real)), math.max(unpack(real)), #real))
end
T.finish()
