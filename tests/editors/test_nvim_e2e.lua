-- End to end: a real Neovim (0.7.2: overlay rendering; 0.10/0.12: inline
-- virtual text; the plugin's own renderer, native = false) with the plugin
-- and the REAL daemon running the tiny random-weight model.
-- The model writes random text, so every assertion compares against the text
-- the daemon actually answered (captured by the plugin's test hook).
-- Environment: INFILLD_BIN (the daemon), INFILLD_TINY_MODEL (optional model
-- folder; without it the daemon's embedded default is used).
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')

local bin, model = T.daemon()

T.start(([[{
  path = %q,
  model = %s,
  debounce_ms = 30,
  native = false,
  partial = true,
  log_level = 'error',
  -- the tiny model's text rarely parses: no syntax validation, fixed seed
  -- and no latency budget (a loaded machine would answer null)
  init_options = { validate = false, seed = 7, candidates = 1, steps = 8, latencyBudgetMs = 0 },
}]]):format(bin, model and ('%q'):format(model) or 'nil'))

local file = vim.fn.tempname() .. '.py'
T.lua('vim.cmd("edit " .. ...)', file)
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)',
  20000, 'daemon attached')

-- Waits for an answer (after `n` earlier ones) with at least one non-empty item.
-- The random model's text can be dropped whole by post-processing, which gives
-- an empty (or null, when superseded) answer; only then is one more character
-- typed (into the comment) and the wait repeated, at most 4 times, each retry
-- logged. An error answer fails at once: no retry may hide a daemon bug.
local function wait_items(n, what)
  for attempt = 1, 4 do
    local ok = T.wait(([[
      local r = _G.t.responses
      for i = %d + 1, #r do
        local items = r[i].items or r[i]
        if #items > 0 and items[1].insertText ~= '' then
          _G.t.item = items[1]
          return 'item'
        end
      end
      return _G.t.answers > _G.t.seen and 'other' or false
    ]]):format(n), 90000, what)
    if not ok then
      return false
    end
    if T.lua('return _G.t.errors') > 0 then
      T.ok(false, what .. ': the daemon answered an error: '
        .. vim.inspect(T.lua('return _G.t.last_error')))
      return false
    end
    if T.lua('return _G.t.item ~= nil') then
      return true
    end
    T.log(('retry %d: the daemon answered without text'):format(attempt))
    n = T.lua('return #_G.t.responses')
    T.lua('_G.t.seen = _G.t.answers')
    T.input('x')
  end
  T.ok(false, what .. ': no answer with text after 4 tries')
  return false
end

-- What the ghost text should read for insertText: the plugin shows tabs as
-- spaces and drops CR before LF.
local function displayed(s)
  return (s:gsub('\r\n', '\n'):gsub('\t', string.rep(' ', 8)))
end

T.lua('_G.t.seen = 0; _G.t.item = nil')

-- 1. Typing in a comment triggers an automatic request; ghost text appears.
T.input('idef add(a, b):<CR>    # compute the sum of ')
if not wait_items(0, 'a non-empty answer from the daemon') then
  T.log('responses: ' .. vim.inspect(T.lua('return _G.t.responses')))
  T.finish()
end
T.lua('require("infilld").config().debounce_ms = 600000') -- no new requests from here
local item = T.lua('return _G.t.item')
-- the buffer as it was when the answer came (retries may have typed more)
local BEFORE = table.concat(T.buffer(), '\n')
local ins = item.insertText
if type(ins) == 'table' then
  ins = ins.value
end
T.log('daemon answered: ' .. vim.inspect(ins))
T.wait('return require("infilld").shown(0) ~= nil', 10000, 'ghost text shown')
local shown = T.shown()
T.ok(shown ~= nil, 'ghost text extmark present')
if shown then
  T.eq(shown.ghost, displayed(ins), 'ghost text equals the item insertText')
  T.eq(shown.row, 1, 'ghost on the cursor line')
  T.eq(shown.pos, vim.fn.has('nvim-0.10') == 1 and 'inline' or 'overlay', 'render path')
end
T.ok(T.lua('return _G.t.partials_drawn') > 0, 'infilld/partial texts were drawn while denoising')
T.ok(vim.startswith(BEFORE, 'def add(a, b):\n    # compute the sum of '),
  'buffer holds only what was typed while the ghost text shows')

-- 2. Word then line accept insert the leading parts of insertText.
local function buf_text()
  return table.concat(T.buffer(), '\n')
end
local w = T.lua('return require("infilld.text").next_word(...)', ins)
T.input('<M-w>')
T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(
  BEFORE .. w:gsub('\r\n', '\n')), 10000, 'word accept')
T.eq(buf_text(), BEFORE .. w:gsub('\r\n', '\n'), 'word accept inserts the first word of insertText')
local rest = ins:sub(#w + 1)
if rest ~= '' then
  local l = T.lua('return require("infilld.text").next_line(...)', rest)
  T.input('<M-j>')
  T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(
    (BEFORE .. w .. l):gsub('\r\n', '\n')), 10000, 'line accept')
  T.eq(buf_text(), (BEFORE .. w .. l):gsub('\r\n', '\n'), 'line accept inserts the next line part')
  rest = rest:sub(#l + 1)
end

-- 3. Full accept inserts exactly the rest of insertText.
if rest ~= '' then
  T.input('<M-l>')
end
T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(
  (BEFORE .. ins):gsub('\r\n', '\n')), 10000, 'full accept')
T.eq(buf_text(), (BEFORE .. ins):gsub('\r\n', '\n'), 'accept inserts exactly insertText')
T.wait('return require("infilld").shown(0) == nil', 5000, 'ghost gone after accept')

-- 4. Dismiss clears a fresh suggestion and leaves the buffer alone.
T.lua('require("infilld").config().debounce_ms = 30')
local n = T.lua('return #_G.t.responses')
T.lua('_G.t.seen = _G.t.answers; _G.t.item = nil')
T.input('<CR># the sum ')
wait_items(n, 'an automatic answer')
T.lua('require("infilld").config().debounce_ms = 600000')
T.wait('return require("infilld").shown(0) ~= nil', 10000, 'ghost before dismiss')
local before_dismiss = buf_text()
T.input('<C-]>')
T.wait('return require("infilld").shown(0) == nil', 5000, 'dismissed')
T.eq(buf_text(), before_dismiss, 'dismiss leaves the buffer unchanged')

-- 5. Regenerate the visual selection: the daemon's workspace/applyEdit
-- replaces exactly the selected range.
T.input('<Esc>')
T.wait('return vim.api.nvim_get_mode().mode == "n"', 5000, 'normal mode')
T.lua('vim.api.nvim_buf_set_lines(0, 0, -1, false, { "def add(a, b):", "    return a + b", "" })')
T.lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
local original = T.buffer()
T.input('0wwvee<Bslash>ir') -- selects "a + b"
T.wait('return #_G.t.edits >= 1', 90000, 'workspace/applyEdit from infilld.regenerate')
local edit = T.lua('return _G.t.edits[1]')
local changes = edit and edit.edit and (edit.edit.changes or {}) or {}
local text_edit
for _, list in pairs(changes) do
  text_edit = list[1]
end
if not text_edit and edit and edit.edit and edit.edit.documentChanges then
  text_edit = edit.edit.documentChanges[1].edits[1]
end
T.ok(text_edit ~= nil, 'applyEdit carries a text edit')
if text_edit then
  T.eq(text_edit.range, { start = { line = 1, character = 11 }, ['end'] = { line = 1, character = 16 } },
    'the edit replaces the selection')
  local want = table.concat(original, '\n')
  want = 'def add(a, b):\n    return ' .. text_edit.newText .. '\n'
  T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(want),
    10000, 'buffer after regenerate')
  T.eq(table.concat(T.buffer(), '\n'), want, 'selection replaced by the regenerated text')
end

-- 6. Cycle: with one automatic candidate shown, <M-]> asks again as Invoked
-- (several candidates) and shows the next one with its index.
T.lua('require("infilld").config().debounce_ms = 30')
n = T.lua('return #_G.t.responses')
T.lua('_G.t.seen = _G.t.answers; _G.t.item = nil')
T.input('o# total of ')
if wait_items(n, 'an answer before cycling') then
  T.lua('require("infilld").config().debounce_ms = 600000')
  T.wait('return require("infilld").shown(0) ~= nil', 10000, 'ghost before cycle')
  n = T.lua('return #_G.t.responses')
  T.input('<M-]>')
  T.wait(('return #_G.t.responses > %d'):format(n), 90000, 'the Invoked answer')
  local res = T.lua('return _G.t.responses[#_G.t.responses]')
  local got = res.items or res
  local st = T.lua('local s = require("infilld").state(0); return { index = s.index, n = #s.items }')
  T.log(('invoked answer: %d items, %d kept'):format(#got, st.n))
  T.ok(#got >= 1, 'the Invoked request was answered with items')
  if st.n > 1 then
    T.eq(st.index, 2, 'cycle moved to the second candidate')
    local s2 = T.shown()
    T.ok(s2 ~= nil and s2.ghost:find(('(2/%d)'):format(st.n), 1, true) == nil, 'index hint is not ghost text')
    T.ok(s2 ~= nil and (s2.first .. table.concat(s2.lines, '')):find(('(2/%d)'):format(st.n), 1, true) ~= nil,
      'cycle shows the index hint')
    local want = T.lua('local s = require("infilld").state(0); return s.items[2].text')
    T.ok(s2 ~= nil and vim.startswith(displayed(want), s2.ghost), 'the second candidate is shown')
    T.input('<M-[>')
    T.wait('return require("infilld").state(0).index == 1', 5000, 'cycle back')
  end
  T.input('<C-]>')
end
T.input('<Esc>')

-- 7. infilld/status reached the status line.
T.ok(T.lua('return require("infilld").statusline()'):find('^infilld: ') ~= nil, 'status line')

-- 8. :checkhealth infilld sees the real daemon and this Neovim.
local health = T.lua([[
  vim.cmd('checkhealth infilld')
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
]])
T.ok(health:find('Neovim ' .. T.version, 1, true) ~= nil, 'health: Neovim version ' .. T.version)
T.ok(health:find('daemon: ' .. vim.fn.exepath(bin), 1, true) ~= nil, 'health: the daemon binary')
T.ok(health:find('OK:? server offers textDocument/inlineCompletion') ~= nil, 'health: capability')
T.ok(health:find('rendering: ' .. (vim.fn.has('nvim-0.10') == 1 and 'inline' or 'overlay'), 1, true) ~= nil,
  'health: rendering path')

T.finish()
