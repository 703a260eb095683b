-- The Neovim plugin against a scripted server (fake_server.py) whose answers
-- are fixed, so every assertion is on exact text. Runs on Neovim 0.7+ and
-- exercises the plugin's own renderer (overlay path before 0.10).
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')

local AUTO = 'alpha_beta(gamma) + delta\n    return omega'

local server = T.dir .. 'fake_server.py'
T.start(([[{
  cmd = { '/usr/bin/python3', %q },
  debounce_ms = 30,
  native = false,
  partial = true,
  model = '/models/fake-model',
}]]):format(server))

local file = vim.fn.tempname() .. '.py'
T.lua('vim.cmd("edit " .. ...)', file)
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)',
  10000, 'client attached')
T.eq(T.lua('return require("infilld").mode()'), vim.fn.has('nvim-0.10') == 1 and 'inline' or 'overlay',
  'render mode')

-- Counts ghost-text clears, to prove typing-through never blanks the text.
T.lua([[
  local g = require('infilld.ghost')
  _G.t.clears = 0
  local orig = g.clear
  g.clear = function(...) _G.t.clears = _G.t.clears + 1; return orig(...) end
]])

local function server_log()
  return T.lua([[
    local c = require('infilld').client()
    local r = c.request_sync('fake/log', {}, 2000, 0)
    return r and r.result or {}
  ]])
end

-- 1. Automatic request while typing: ghost text equals the item's insertText.
T.input('i# compute ')
T.wait('return #_G.t.responses >= 1', 10000, 'first inlineCompletion answer')
T.wait('local s = require("infilld").shown(0); return s and s.ghost ~= ""', 5000, 'ghost text')
local resp = T.lua('return _G.t.responses[#_G.t.responses]')
T.eq(resp.items[1].insertText, AUTO, 'server insertText')
local shown = T.shown()
T.eq(shown.ghost, AUTO, 'ghost text equals insertText')
T.eq(shown.row, 0, 'ghost row')
T.eq(shown.col, #'# compute ', 'ghost column')
T.eq(shown.lines, { '    return omega' }, 'virt_lines carry the second line')
if vim.fn.has('nvim-0.10') == 0 then
  T.eq(shown.pos, 'overlay', 'overlay rendering before 0.10')
end
T.eq(T.buffer(), { '# compute ' }, 'buffer untouched while showing')

-- 2. Typing along the suggestion keeps it on screen, shortened, with no clear.
T.lua('require("infilld").config().debounce_ms = 60000')
T.lua('_G.t.clears = 0')
T.input('alpha')
T.wait('return vim.api.nvim_get_current_line() == "# compute alpha"', 5000, 'typed alpha')
T.eq(T.shown().ghost, AUTO:sub(6), 'typing-through shows the rest')
T.eq(T.lua('return _G.t.clears'), 0, 'no clear while typing along')

-- 3. A diverging keystroke drops it.
T.input('X')
T.wait('return require("infilld").shown(0) == nil', 5000, 'ghost dropped on mismatch')
T.input('<BS>')
T.wait('return vim.api.nvim_get_current_line() == "# compute alpha"', 5000, 'backspace')

-- 4. Dismiss clears; Invoked request returns candidates to cycle.
T.lua('require("infilld").config().debounce_ms = 30')
T.input('<C-\\><C-o>:<Esc>') -- no-op that keeps insert mode
T.input('<M-\\>')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == ' .. vim.inspect(AUTO), 5000,
  'invoked answer shown')
T.eq(#T.lua('return _G.t.responses[#_G.t.responses].items'), 3, 'invoked returns 3 candidates')
T.ok(T.shown().lines[1]:find('(1/3)', 1, true) ~= nil, 'candidate hint 1/3')
T.input('<M-]>')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == "second_choice()"', 5000,
  'next candidate')
T.ok(T.shown().first:find('(2/3)', 1, true) ~= nil, 'candidate hint 2/3')
T.input('<M-[>')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == ' .. vim.inspect(AUTO), 5000,
  'previous candidate')
T.input('<C-]>')
T.wait('return require("infilld").shown(0) == nil', 5000, 'dismissed')
T.eq(T.buffer(), { '# compute alpha' }, 'dismiss leaves the buffer')
T.settle(200)
T.eq(T.shown(), nil, 'no new request after dismiss without typing')

-- 5. Word, word, line, full accept insert exactly the parts of the item.
T.lua('require("infilld").config().debounce_ms = 60000')
T.input('<C-w>') -- delete "alpha" so the item starts at the cursor again
T.wait('return vim.api.nvim_get_current_line() == "# compute "', 5000, 'deleted word')
T.input('<M-\\>')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == ' .. vim.inspect(AUTO), 5000,
  'suggestion for accepting')
T.input('<M-w>')
T.wait('return vim.api.nvim_get_current_line() == "# compute alpha_beta"', 5000, 'accept word')
T.eq(T.shown().ghost, '(gamma) + delta\n    return omega', 'rest after word accept')
T.input('<M-w>')
T.wait('return vim.api.nvim_get_current_line() == "# compute alpha_beta("', 5000,
  'accept punctuation word')
T.input('<M-j>')
T.wait('return vim.api.nvim_get_current_line() == "# compute alpha_beta(gamma) + delta"', 5000,
  'accept line')
T.eq(T.shown().ghost, '\n    return omega', 'rest after line accept')
T.input('<M-l>')
T.wait('return #vim.api.nvim_buf_get_lines(0, 0, -1, false) == 2', 5000, 'accept all')
T.eq(T.buffer(), { '# compute alpha_beta(gamma) + delta', '    return omega' }, 'accepted text')
T.eq(T.cursor(), { 2, #'    return omega' }, 'cursor after accepted text')
T.eq(T.shown(), nil, 'ghost gone after full accept')
T.settle(100)
local accepted = {}
for _, e in ipairs(server_log()) do
  if e.executeCommand and e.executeCommand.command == 'infilld.accepted' then
    accepted[#accepted + 1] = e.executeCommand.arguments[1].acceptedLength
  end
end
T.eq(accepted, { 10, 11, 25, 42 }, 'infilld.accepted lengths (UTF-16, cumulative)')

local n
-- 6. Positions are sent in the negotiated encoding (UTF-16 here).
n = T.lua('return #_G.t.responses')
T.input('<CR># 😀 ')
T.wait('return vim.api.nvim_get_current_line() == "# 😀 "', 5000, 'typed emoji line')
T.input('<M-\\>')
T.wait('return #_G.t.responses > ' .. n, 5000, 'answer after emoji')
local last_pos
for _, e in ipairs(server_log()) do
  if e.inlineCompletion then
    last_pos = e.inlineCompletion.position
  end
end
T.eq(last_pos, { line = 2, character = 5 }, 'UTF-16 position after an astral character')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == ' .. vim.inspect(AUTO), 5000,
  'ghost after emoji')
T.eq(T.shown().col, #'# 😀 ', 'ghost byte column after emoji')

-- 7. Progressive rendering: partial text shows while the answer is held and
-- nothing else is shown (a shown item that still matches is kept instead).
T.input('<C-]>')
T.wait('return require("infilld").shown(0) == nil', 5000, 'dismissed before partials')
T.lua([[
  local c = require('infilld').client()
  c.request_sync('fake/hold', {}, 2000, 0)
]])
n = T.lua('return #_G.t.responses')
T.input('<M-\\>')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == "alpha_b___"', 5000,
  'partial text shown')
T.lua('local c = require("infilld").client(); c.request("fake/release", {}, function() end, 0)')
T.wait('return #_G.t.responses > ' .. n, 5000, 'held answer')
T.wait('local s = require("infilld").shown(0); return s and s.ghost == ' .. vim.inspect(AUTO), 5000,
  'final text replaces partial')

-- 7b. With a matching item on screen, partials of the next request do not
-- replace it (no churn while typing along); the final answer does.
T.lua([[
  local c = require('infilld').client()
  c.request_sync('fake/hold', {}, 2000, 0)
  _G.t.partials = 0
]])
n = T.lua('return #_G.t.responses')
T.input('<M-\\>')
T.wait('return _G.t.partials >= 2', 5000, 'partials for the held request')
T.eq(T.shown().ghost, AUTO, 'shown item kept while partials arrive')
T.lua('local c = require("infilld").client(); c.request("fake/release", {}, function() end, 0)')
T.wait('return #_G.t.responses > ' .. n, 5000, 'second held answer')

-- 8. Leaving insert mode clears the ghost text.
T.input('<Esc>')
T.wait('return require("infilld").shown(0) == nil', 5000, 'cleared on InsertLeave')

-- 9. Status line from infilld/status.
T.eq(T.lua('return require("infilld").statusline()'), 'infilld: fake-model · cpu · 12 ms',
  'statusline')

-- 10. Regenerate the visual selection: the server's workspace/applyEdit lands.
T.input('gg0wve<Bslash>ir')
T.wait('return #_G.t.edits == 1', 5000, 'applyEdit from regenerate')
T.wait('return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == "# regenerated alpha_beta(gamma) + delta"',
  5000, 'selection replaced')
local regen
for _, e in ipairs(server_log()) do
  if e.executeCommand and e.executeCommand.command == 'infilld.regenerate' then
    regen = e.executeCommand.arguments[1].range
  end
end
T.eq(regen, { start = { line = 0, character = 2 }, ['end'] = { line = 0, character = 9 } },
  'regenerate range')

-- 10b. :{range}InfilldRegenerate regenerates whole lines.
T.lua('vim.api.nvim_buf_set_lines(0, 0, -1, false, { "one", "two", "three" })')
T.input(':2InfilldRegenerate<CR>')
T.wait('return #_G.t.edits == 2', 5000, 'applyEdit for a line range')
T.eq(T.buffer(), { 'one', 'regenerated', 'three' }, 'line range replaced')

-- 11. initializationOptions carry the settings.
local init = server_log()[1].initializationOptions
T.eq({ init.model, init.partial, init.status }, { '/models/fake-model', true, true },
  'initializationOptions')

-- 12. :checkhealth infilld sees the running daemon.
local health = T.lua([[
  vim.cmd('checkhealth infilld')
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
]])
T.ok(health:find('OK:? server offers textDocument/inlineCompletion') ~= nil, 'health: capability')
T.ok(health:find('attached to 1 buffer', 1, true) ~= nil, 'health: attached buffer')
T.ok(health:find('infilld: fake-model · cpu · 12 ms', 1, true) ~= nil, 'health: status')

T.finish()
