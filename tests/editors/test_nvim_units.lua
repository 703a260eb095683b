-- Unit tests of the Neovim plugin's pure parts and of the paths this machine's
-- Neovim (0.7) cannot run for real: the 0.10+ inline rendering and the 0.12
-- native vim.lsp.inline_completion path are exercised against stubs of
-- vim.api / vim.fn.has / vim.lsp.inline_completion. They have NOT been run in
-- a real 0.10+ or 0.12 Neovim here.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local repo = vim.fn.fnamemodify(here .. '../..', ':p'):gsub('/$', '')
vim.opt.rtp:prepend(repo .. '/editors/nvim')

local checks, failures = 0, 0
local function eq(got, want, what)
  checks = checks + 1
  if not vim.deep_equal(got, want) then
    failures = failures + 1
    io.stderr:write(('FAIL: %s: got %s, want %s\n'):format(what, vim.inspect(got), vim.inspect(want)))
  end
end

local text = require('infilld.text')
local ghost = require('infilld.ghost')
local native = require('infilld.native')

-- text: positions in every encoding ------------------------------------------
local line = 'aé😀b' -- bytes: a(1) é(2) 😀(4) b(1)
eq(text.lsp_col(line, 0, 'utf-16'), 0, 'lsp_col start')
eq(text.lsp_col(line, 3, 'utf-16'), 2, 'lsp_col after é (utf-16)')
eq(text.lsp_col(line, 7, 'utf-16'), 4, 'lsp_col after emoji (utf-16)')
eq(text.lsp_col(line, 7, 'utf-32'), 3, 'lsp_col after emoji (utf-32)')
eq(text.lsp_col(line, 7, 'utf-8'), 7, 'lsp_col after emoji (utf-8)')
eq(text.lsp_col(line, 99, 'utf-16'), 5, 'lsp_col clamps')
eq(text.byte_col(line, 4, 'utf-16'), 7, 'byte_col after emoji (utf-16)')
eq(text.byte_col(line, 3, 'utf-16'), 3, 'byte_col inside a surrogate pair rounds down')
eq(text.byte_col(line, 3, 'utf-32'), 7, 'byte_col utf-32')
eq(text.byte_col(line, 50, 'utf-16'), #line, 'byte_col clamps')
eq(text.utf16_len('😀x'), 3, 'utf16_len')
eq(text.split_lines('a\r\nb\n'), { 'a', 'b', '' }, 'split_lines drops CR, keeps trailing empty')

-- text: word / line accept ----------------------------------------------------
local T = 'alpha_beta(gamma) + delta\n    return omega'
eq(text.next_word(T), 'alpha_beta', 'next_word identifier')
eq(text.next_word('(gamma)'), '(', 'next_word punctuation')
eq(text.next_word(' + delta'), ' +', 'next_word blanks + punctuation')
eq(text.next_word('\n    return'), '\n    ', 'next_word line break + indent')
eq(text.next_word('héllo wörld'), 'héllo', 'next_word multibyte')
eq(text.next_line(T), 'alpha_beta(gamma) + delta', 'next_line')
eq(text.next_line('\n    return omega'), '\n    return omega', 'next_line from a break')
eq(text.next_line('\na\nb'), '\na', 'next_line stops at the following break')

-- ghost.layout: the 0.10+ inline path -----------------------------------------
local function width(s)
  return vim.fn.strdisplaywidth(s)
end
local lay = ghost.layout({ line = 'x = )', col = 4, ghost = 'f(1', inline = true, width = width })
eq(lay.col, 4, 'inline: mark at the cursor')
eq(lay.opts.virt_text_pos, 'inline', 'inline: one line mid-line is inline')
eq(lay.opts.virt_text, { { 'f(1', 'InfilldGhost' } }, 'inline: only the suggestion, rest of line shifts')
eq(lay.opts.virt_lines, nil, 'inline: no virt_lines for one line')

lay = ghost.layout({ line = 'def f():', col = 8, ghost = '\n    return 1', inline = true, width = width })
eq(lay.opts.virt_text_pos, 'inline', 'inline at end of line, multi-line')
eq(lay.opts.virt_text, { { '', 'InfilldGhost' } }, 'inline: empty first line')
eq(lay.opts.virt_lines, { { { '    return 1', 'InfilldGhost' } } }, 'inline: following lines')

-- multi-line in the middle of a line: the real rest must move below, so overlay
lay = ghost.layout({ line = 'f(x)', col = 2, ghost = 'a,\n  b', keep_from = 2, inline = true, width = width })
eq(lay.opts.virt_text_pos, 'overlay', 'multi-line mid-line falls back to overlay')
eq(lay.opts.virt_text, { { 'a,', 'InfilldGhost' } }, 'overlay: first line covers "x)"')
eq(lay.opts.virt_lines, { { { '  b', 'InfilldGhost' }, { 'x)', 'Normal' } } }, 'rest of line after last line')

-- the item replaces text after the cursor: overlay even with inline support
lay = ghost.layout({ line = 'foo(bar)', col = 4, ghost = 'baz', keep_from = 7, inline = true, width = width })
eq(lay.opts.virt_text_pos, 'overlay', 'replacement uses overlay')
eq(lay.opts.virt_text, { { 'baz', 'InfilldGhost' }, { ')', 'Normal' } }, 'replacement: kept ")" re-drawn')
eq(ghost.layout({ line = 'foo(barbaz)', col = 4, ghost = 'q', keep_from = 10, width = width }).opts.virt_text,
  { { 'q', 'InfilldGhost' }, { ')', 'Normal' }, { string.rep(' ', 5), 'Normal' } },
  'overlay pads to cover replaced text')

-- the 0.7-0.9 path: one line mid-line overlays suggestion + the rest of line
lay = ghost.layout({ line = 'x = )', col = 4, ghost = 'f(1', inline = false, width = width })
eq(lay.opts.virt_text_pos, 'overlay', 'pre-0.10 overlay')
eq(lay.opts.virt_text, { { 'f(1', 'InfilldGhost' }, { ')', 'Normal' } }, 'pre-0.10 re-draws the rest')
eq(ghost.layout({ line = 'a', col = 1, ghost = '', width = width }), nil, 'nothing to show')
eq(ghost.layout({ line = '', col = 0, ghost = '\tx', tabstop = 4, width = width }).opts.virt_text,
  { { '    x', 'InfilldGhost' } }, 'tabs expanded in virtual text')
eq(ghost.layout({ line = '', col = 0, ghost = 'a\nb', hint = ' (2/3)', inline = true, width = width })
  .opts.virt_lines, { { { 'b', 'InfilldGhost' }, { ' (2/3)', 'InfilldGhostInfo' } } }, 'hint after last line')

-- ghost.supports_inline from vim.fn.has
eq(ghost.supports_inline(function(f) return f == 'nvim-0.10' and 1 or 0 end), true, '0.10 has inline')
eq(ghost.supports_inline(function() return 0 end), false, '0.9 has no inline')

-- ghost.show against a stub api: the same mark id is reused (update in place)
local calls = {}
local stub_api = {
  nvim_buf_set_extmark = function(buf, ns, row, col, opts)
    calls[#calls + 1] = { 'set', buf, ns, row, col, opts.id, opts.virt_text_pos }
    return opts.id or 41
  end,
  nvim_buf_del_extmark = function(_, _, id)
    calls[#calls + 1] = { 'del', id }
  end,
  nvim_buf_clear_namespace = function(buf)
    calls[#calls + 1] = { 'clear', buf }
  end,
}
lay = ghost.layout({ line = 'x', col = 1, ghost = 'yz', inline = true, width = width })
local id = ghost.show(stub_api, 3, 7, nil, 0, lay)
id = ghost.show(stub_api, 3, 7, id, 0, lay)
ghost.show(stub_api, 3, 7, id, 0, nil)
eq(calls, {
  { 'set', 3, 7, 0, 1, nil, 'inline' },
  { 'set', 3, 7, 0, 1, 41, 'inline' },
  { 'del', 41 },
  { 'clear', 3 },
}, 'show/update/clear through the api')

-- config: merge, command line, initializationOptions ---------------------------
local config = require('infilld.config')
local cfg = config.resolve({ keymaps = { accept = '<Tab>', dismiss = false }, args = { '--device', 'cpu' },
  model = '/m', init_options = { seed = 3 }, exclude_filetypes = { 'markdown' } })
eq(cfg.keymaps.accept, '<Tab>', 'config: keymap overridden')
eq(cfg.keymaps.dismiss, false, 'config: keymap disabled')
eq(cfg.keymaps.accept_word, '<M-w>', 'config: other keymaps keep defaults')
eq(cfg.exclude_filetypes, { 'markdown' }, 'config: lists replace, not merge')
eq(cfg.debounce_ms, 150, 'config: default debounce')
eq(config.command(cfg), { 'infilld', '--log-level', 'warn', '--device', 'cpu' }, 'config: daemon command')
eq(config.command(config.resolve({ cmd = { 'x', 'y' } })), { 'x', 'y' }, 'config: cmd wins')
eq(config.init_options(cfg), { model = '/m', seed = 3, partial = true, status = true },
  'config: initializationOptions')
eq(config.defaults.keymaps.accept, '<M-l>', 'config: defaults untouched by resolve')
-- setup({}) (README) and setup() keep every default; an empty table is no list.
for _, user in ipairs({ {}, false }) do
  local c = config.resolve(user or nil)
  eq(c.path, 'infilld', 'config: setup(' .. (user and '{}' or '') .. ') keeps path')
  eq(c.keymaps.accept, '<M-l>', 'config: setup(' .. (user and '{}' or '') .. ') keeps keymaps')
end
eq(config.resolve({ keymaps = {} }).keymaps.accept, '<M-l>', 'config: keymaps = {} keeps the keymaps')
eq(config.resolve({ exclude_filetypes = {} }).exclude_filetypes, {}, 'config: an empty list replaces a list')
eq(config.resolve({ args = { '-v' } }).args, { '-v' }, 'config: a list replaces an empty default')
eq(config.resolve({ tcp = { port = 7 } }).tcp, { port = 7 }, 'config: a table replaces a nil default')

-- native (0.12) path against a stub vim.lsp.inline_completion ------------------
local ic_calls = {}
local pending_accept = nil
local ic = {
  enable = function(on, filter)
    ic_calls[#ic_calls + 1] = { 'enable', on, filter }
  end,
  get = function(opts)
    ic_calls[#ic_calls + 1] = { 'get', opts and opts.on_accept and 'on_accept' or 'default' }
    pending_accept = opts and opts.on_accept
    return true
  end,
  select = function(opts)
    ic_calls[#ic_calls + 1] = { 'select', opts.count }
  end,
}
eq(native.available({ inline_completion = ic }), true, 'native available with the 0.12 module')
eq(native.available({}), false, 'native unavailable before 0.12')
native.attach(ic, 5, 9)
eq(ic_calls[1], { 'enable', true, { bufnr = 5, client_id = 9 } }, 'attach enables per buffer and client')
eq(native.accept(ic, 'all'), true, 'full accept delegates to get()')
eq(ic_calls[2], { 'get', 'default' }, 'full accept uses the native insertion (runs item.command)')

-- word accept through on_accept, with a buffer stub
local buf = { '# compute al' }
local cursor = { 1, #buf[1] }
local set_text
local napi = {
  nvim_win_get_cursor = function()
    return cursor
  end,
  nvim_buf_get_lines = function(_, s, e)
    return { unpack(buf, s + 1, e) }
  end,
  nvim_buf_set_text = function(_, sr, sc, er, ec, lines)
    set_text = { sr, sc, er, ec, lines }
  end,
  nvim_win_set_cursor = function(_, pos)
    cursor = pos
  end,
}
local reported
eq(native.accept(ic, 'word', function(item, taken, full)
  reported = { item.client_id, taken, full }
end, napi), true, 'word accept asks get{on_accept}')
pending_accept({
  client_id = 9,
  insert_text = T,
  -- the item starts where "al" was typed (vim.Range shape)
  range = { start = { row = 0, col = 10 }, end_ = { row = 0, col = 12 } },
})
eq(set_text, { 0, 12, 0, 12, { 'pha_beta' } }, 'word accept inserts the rest of the word')
eq(cursor, { 1, 20 }, 'cursor after the word')
eq(reported, { 9, 'alpha_beta', false }, 'accepted text counted from the item start')

eq(native.accept(ic, 'line', nil, napi), true, 'line accept')
cursor = { 1, 0 }
buf = { '' }
pending_accept({ client_id = 9, insert_text = { kind = 'snippet', value = 'a\nb' } })
eq(set_text, { 0, 0, 0, 0, { 'a' } }, 'line accept of a snippet item takes its first line')
eq(native.item_rest({ insert_text = 'xyz', range = { start = { row = 0, col = 0 }, end_ = { row = 0, col = 0 } } },
  0, 1, 'q'), nil, 'item no longer matching typed text')

-- dismiss: disable + enable clears Neovim's mark
local dapi = {
  nvim_get_current_buf = function() return 5 end,
  nvim_get_namespaces = function() return { ['nvim.lsp.inline_completion'] = 12 } end,
  nvim_buf_get_extmarks = function() return { { 1, 0, 0 } } end,
}
ic_calls = {}
eq(native.dismiss(ic, 0, dapi), true, 'dismiss with a visible item')
eq(ic_calls, { { 'enable', false, { bufnr = 5 } }, { 'enable', true, { bufnr = 5 } } }, 'dismiss toggles')

-- setup() picks the native path when vim.lsp.inline_completion exists ----------
vim.lsp.inline_completion = ic
ic_calls = {}
local infilld = require('infilld')
infilld.setup({ cmd = { '/usr/bin/python3', here .. 'fake_server.py' }, keymaps = { regenerate = false } })
eq(infilld.mode(), 'native', 'setup selects native on 0.12')
vim.cmd('edit ' .. vim.fn.tempname() .. '.py')
vim.wait(5000, function()
  return #ic_calls > 0
end, 20)
local c = infilld.client()
eq(ic_calls[1], { 'enable', true, { bufnr = vim.api.nvim_get_current_buf(), client_id = c and c.id } },
  'on_attach enables native inline completion for the buffer')
infilld.cycle(1)
eq(ic_calls[#ic_calls], { 'select', 1 }, 'cycle maps to select{count}')
infilld.setup({ native = false })
-- 0.8+: TCP through vim.lsp.rpc.connect, buffers through vim.lsp.start (stubs)
local saved_connect, saved_start = vim.lsp.rpc.connect, vim.lsp.start
vim.lsp.rpc.connect = function(host, port)
  return 'connect ' .. host .. ':' .. port
end
local started
vim.lsp.start = function(conf, opts)
  started = { conf.name, conf.cmd, conf.root_dir, opts.bufnr, conf.init_options.status }
  return 77
end
infilld.setup({ native = false, tcp = { host = '127.0.0.1', port = 7777 } })
eq(infilld.client_config().cmd, 'connect 127.0.0.1:7777', 'tcp uses vim.lsp.rpc.connect on 0.8+')
local b = vim.api.nvim_get_current_buf()
eq(infilld.attach(b), true, 'attach through vim.lsp.start on 0.8+')
eq(started, { 'infilld', 'connect 127.0.0.1:7777', vim.fn.getcwd(), b, true }, 'vim.lsp.start config')
vim.lsp.rpc.connect, vim.lsp.start = saved_connect, saved_start

-- a missing binary is reported once, clearly, and nothing is started
local notes = {}
local orig_notify = vim.notify
vim.notify = function(msg)
  notes[#notes + 1] = msg
end
infilld.setup({ native = false, path = '/nonexistent/infilld' })
eq(infilld.client_config(), nil, 'no client config without a binary')
eq(infilld.client_config(), nil, 'still none')
vim.wait(100, function() return #notes > 0 end)
vim.notify = orig_notify
eq(#notes, 1, 'missing binary reported once')
eq(notes[1] and notes[1]:find('/nonexistent/infilld', 1, true) ~= nil, true, 'message names the path')
eq(infilld.mode(), vim.fn.has('nvim-0.10') == 1 and 'inline' or 'overlay', 'native = false uses the plugin renderer')
if c then
  c.stop()
end
vim.wait(200, function() return false end)

io.stderr:write(('%d checks, %d failed\n'):format(checks, failures))
vim.cmd(failures == 0 and 'qall!' or 'cquit 1')
