-- The plugin's TCP mode against a real `infilld --listen 127.0.0.1:0`. On
-- Neovim 0.7 this goes through the `nc` bridge (0.8+ would use
-- vim.lsp.rpc.connect). Environment as test_nvim_e2e.lua.
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')

local bin = os.getenv('INFILLD_BIN')
if not bin or vim.fn.executable(bin) ~= 1 then
  T.skip('INFILLD_BIN not set or not executable')
end
if not (vim.lsp.rpc.connect or vim.fn.executable('nc') == 1) then
  T.skip('Neovim 0.7 without nc on the PATH cannot connect over TCP')
end
local model = os.getenv('INFILLD_TINY_MODEL')
local args = { bin, '--listen', '127.0.0.1:0', '--log-level', 'info' }
if model and vim.fn.filereadable(model .. '/config.json') == 1 then
  vim.list_extend(args, { '--model', model })
end

-- Start the daemon and read the port it bound from stderr.
local port
local daemon = vim.fn.jobstart(args, {
  on_stderr = function(_, lines)
    for _, l in ipairs(lines) do
      local p = l:match('listening on 127%.0%.0%.1:(%d+)')
      if p then
        port = tonumber(p)
      end
    end
  end,
})
T.ok(daemon > 0, 'daemon started')
if not vim.wait(20000, function()
  return port ~= nil
end, 20) then
  T.ok(false, 'daemon printed its port')
  vim.fn.jobstop(daemon)
  T.finish()
end

T.start(([[{ tcp = { host = '127.0.0.1', port = %d }, debounce_ms = 30, native = false,
  init_options = { validate = false, seed = 5, candidates = 1, latencyBudgetMs = 0 } }]]):format(port))
T.lua('vim.cmd("edit " .. ...)', vim.fn.tempname() .. '.py')
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)', 20000,
  'attached over TCP')
T.input('i# sum of two numbers ')
T.wait('return _G.t.answers > 0', 90000, 'an inlineCompletion answer over TCP')
T.eq(T.lua('return _G.t.errors'), 0, 'no error answers')
T.wait('local s = require("infilld").status(); return s and s.state ~= nil', 10000, 'infilld/status over TCP')
local st = T.lua('return require("infilld").status()')
if model then
  T.eq(vim.fn.fnamemodify(st.model or '', ':t'), vim.fn.fnamemodify(model, ':t'), 'status names the model')
end
T.stop()
vim.fn.jobstop(daemon)
T.finish()
