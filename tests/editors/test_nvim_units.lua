-- Unit tests of the Neovim plugin's pure parts (positions, word/line split,
-- ghost-text layout, config), run in each real Neovim series. The rendering
-- paths, TCP and the 0.12 native path run for real in test_nvim_e2e.lua,
-- test_nvim_tcp.lua and test_nvim_native.lua; the only stub left is for a
-- Neovim before 0.10 (no real 0.8/0.9 here): supports_inline's answer.
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

-- native.item_rest against 0.12's vim.Range (0-based bytes, end exclusive)
if vim.range then
  local r = vim.range(0, 0, 10, 0, 12)
  eq({ native.item_rest({ insert_text = T, range = r }, 0, 12, '# compute al') },
    { 'pha_beta(gamma) + delta\n    return omega', 12, 'al' }, 'item_rest skips what was typed')
  eq(native.item_rest({ insert_text = 'xyz', range = vim.range(0, 0, 0, 0, 0) }, 0, 1, 'q'), nil,
    'item no longer matching typed text')
end
eq(native.available(vim.lsp), vim.fn.has('nvim-0.12') == 1, 'native available exactly on 0.12+')

local infilld = require('infilld')
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

io.stderr:write(('%d checks, %d failed\n'):format(checks, failures))
vim.cmd(failures == 0 and 'qall!' or 'cquit 1')
