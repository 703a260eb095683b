-- Drives a second, embedded Neovim over its RPC channel the way a user does:
-- keys go through nvim_input and are processed by that Neovim's main loop, so
-- insert mode, autocmds, mappings and LSP traffic behave as in a session.
-- Run a test with: nvim --headless -u NONE -i NONE -n -c 'luafile TEST.lua'
-- (works on Neovim 0.7, which has no `nvim -l`).
local T = { failures = 0, checks = 0 }

local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
T.dir = here
T.repo = vim.fn.fnamemodify(here .. '../..', ':p'):gsub('/$', '')

local chan = nil

local function fail(msg)
  T.failures = T.failures + 1
  io.stderr:write('FAIL: ' .. msg .. '\n')
end

function T.log(msg)
  io.stderr:write(msg .. '\n')
end

-- Starts the embedded Neovim with the plugin on its runtimepath and `setup`
-- (a Lua table literal string) passed to require('infilld').setup.
function T.start(setup_code)
  local nvim = vim.v.progpath
  chan = vim.fn.jobstart({
    nvim,
    '--embed',
    '--headless',
    '-u',
    'NONE',
    '-i',
    'NONE',
    '-n',
    '--cmd',
    'set rtp^=' .. T.repo .. '/editors/nvim',
    '--cmd',
    'set noswapfile noautoindent shortmess+=F',
  }, { rpc = true })
  if chan <= 0 then
    fail('cannot start embedded nvim')
    T.finish()
  end
  T.check_editor()
  T.lua([[
    _G.t = { responses = {}, edits = {}, answers = 0, nulls = 0, errors = 0, partials = 0,
             partials_drawn = 0 }
    require('infilld')._hooks.on_partial = function(_, _, drawn)
      _G.t.partials = _G.t.partials + 1
      if drawn then
        _G.t.partials_drawn = _G.t.partials_drawn + 1
      end
    end
    require('infilld')._hooks.on_answer = function(_, err, result)
      _G.t.answers = _G.t.answers + 1
      if err then
        _G.t.errors = _G.t.errors + 1
        _G.t.last_error = err
      elseif result == nil or result == vim.NIL then
        _G.t.nulls = _G.t.nulls + 1
      end
    end
    local infilld = require('infilld')
    infilld._hooks.on_response = function(bufnr, result)
      table.insert(_G.t.responses, result)
    end
    infilld._hooks.on_apply_edit = function(params)
      table.insert(_G.t.edits, params)
    end
  ]])
  T.lua('require("infilld").setup(' .. setup_code .. ')')
end

-- Under tests/editors/nvim/run.sh: the embedded Neovim must be the series
-- asked for, and an unpacked one must run from its own tree (binary and
-- runtime), not from the system's 0.7.2 runtime.
function T.check_editor()
  local info = T.lua([[
    local v = vim.version()
    return { v.major, v.minor, v.patch, vim.v.progpath, vim.env.VIMRUNTIME or '' }
  ]])
  T.version = ('%d.%d.%d'):format(info[1], info[2], info[3])
  T.log(('Neovim %s: %s, VIMRUNTIME %s'):format(T.version, info[4], info[5]))
  local series = os.getenv('INFILLD_NVIM_SERIES') or ''
  if series == '' then
    return
  end
  T.eq(('%d.%d'):format(info[1], info[2]), series, 'Neovim series')
  local tree = os.getenv('INFILLD_NVIM_TREE') or ''
  if tree ~= '' then
    T.ok(vim.startswith(info[4], tree .. '/'), 'v:progpath inside ' .. tree .. ': ' .. info[4])
    T.ok(vim.startswith(info[5], tree .. '/'), '$VIMRUNTIME inside ' .. tree .. ': ' .. info[5])
  end
  if T.failures > 0 then
    T.finish()
  end
end

-- Runs Lua in the embedded Neovim and returns its result. Use `...` for args.
function T.lua(code, ...)
  return vim.fn.rpcrequest(chan, 'nvim_exec_lua', code, { ... })
end

function T.input(keys)
  vim.fn.rpcrequest(chan, 'nvim_input', keys)
end

-- Waits until `code` (Lua in the embedded Neovim) returns a truthy value.
function T.wait(code, timeout_ms, what)
  local ok = vim.wait(timeout_ms or 10000, function()
    local r = T.lua(code)
    return r ~= nil and r ~= false and r ~= vim.NIL
  end, 20)
  if not ok then
    fail('timed out waiting for ' .. (what or code))
  end
  return ok
end

-- Lets the embedded Neovim process typeahead and timers for `ms`.
function T.settle(ms)
  vim.wait(ms, function()
    return false
  end, 10)
end

function T.eq(got, want, what)
  T.checks = T.checks + 1
  if not vim.deep_equal(got, want) then
    fail(('%s: got %s, want %s'):format(what, vim.inspect(got), vim.inspect(want)))
    return false
  end
  return true
end

function T.ok(cond, what)
  T.checks = T.checks + 1
  if not cond then
    fail(what)
  end
  return cond
end

function T.buffer()
  return T.lua('return vim.api.nvim_buf_get_lines(0, 0, -1, false)')
end

function T.cursor()
  return T.lua('return vim.api.nvim_win_get_cursor(0)')
end

function T.shown()
  local s = T.lua('return require("infilld").shown(0)')
  return s ~= vim.NIL and s or nil
end

function T.mode()
  return T.lua('return vim.api.nvim_get_mode().mode')
end

-- Stops the daemon client and the embedded Neovim (T.start may follow).
function T.stop()
  if chan then
    pcall(T.lua, [[
      local c = require('infilld').client()
      if c then require('infilld')._call(c, 'stop') end
    ]])
    T.settle(100)
    pcall(vim.fn.jobstop, chan)
    chan = nil
  end
end

-- Exits the driver: 0 all checks passed, 1 a failure, 77 skipped.
function T.finish(code)
  T.stop()
  if code == nil then
    code = T.failures == 0 and 0 or 1
  end
  io.stderr:write(('%d checks, %d failed\n'):format(T.checks, T.failures))
  vim.cmd(code == 0 and 'qall!' or ('cquit ' .. code))
end

-- Skips (77), but under CI=true a test that cannot run is a failure.
function T.skip(why)
  if os.getenv('CI') == 'true' then
    fail('cannot run under CI=true: ' .. why)
    T.finish(1)
  end
  io.stderr:write('SKIP: ' .. why .. '\n')
  T.finish(77)
end

-- The daemon to test (INFILLD_BIN; skips without it) and the model folder
-- (INFILLD_TINY_MODEL; nil when unset or not a model: the embedded default).
function T.daemon()
  local bin = os.getenv('INFILLD_BIN')
  if not bin or vim.fn.executable(bin) ~= 1 then
    T.skip('INFILLD_BIN not set or not executable')
  end
  local model = os.getenv('INFILLD_TINY_MODEL')
  if model and vim.fn.filereadable(model .. '/config.json') ~= 1 then
    model = nil
  end
  return bin, model
end

return T
