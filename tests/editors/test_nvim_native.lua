-- Neovim 0.12's own vim.lsp.inline_completion with the plugin in its default
-- `native = 'auto'` mode and the REAL daemon (tiny model): Neovim sends the
-- requests and draws the ghost text in its namespace
-- `nvim.lsp.inline_completion`; the plugin maps accept (get), word/line
-- accept (get{on_accept}), cycle (select) and dismiss onto it. Answers are
-- captured by wrapping the client's request method, so every check compares
-- against what the daemon actually sent.
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'harness.lua')

if vim.fn.has('nvim-0.12') ~= 1 then
  T.skip('needs Neovim 0.12 (vim.lsp.inline_completion)')
end
local bin, model = T.daemon()

T.start(([[{
  path = %q,
  model = %s,
  log_level = 'error',
  init_options = { validate = false, latencyBudgetMs = 0, seed = 11, candidates = 1, steps = 8 },
}]]):format(bin, model and ('%q'):format(model) or 'nil'))
T.eq(T.lua('return require("infilld").mode()'), 'native', 'setup picks native on 0.12')

T.lua('vim.cmd("edit " .. ...)', vim.fn.tempname() .. '.py')
T.wait('local c = require("infilld").client(); return c and vim.lsp.buf_is_attached(0, c.id)',
  20000, 'daemon attached')
-- Neovim attaches the capability in a scheduled step after on_attach; keys
-- typed before that would find no autocmds to ask on.
T.wait('return vim.lsp.inline_completion.is_enabled({ bufnr = 0 })', 10000, 'native enabled for the buffer')
T.settle(200)

-- Record every inlineCompletion answer and every executeCommand sent.
T.lua([[
  local c = require('infilld').client()
  local orig = c.request
  _G.t.answers_native = {}
  _G.t.commands = {}
  c.request = function(self, method, params, handler, bufnr)
    if method == 'textDocument/inlineCompletion' and handler then
      local h = handler
      handler = function(err, result, ctx, ...)
        table.insert(_G.t.answers_native, { err = err, result = result })
        return h(err, result, ctx, ...)
      end
    elseif method == 'workspace/executeCommand' then
      table.insert(_G.t.commands, params.command)
    end
    return orig(self, method, params, handler, bufnr)
  end
]])

-- The native ghost text: { text (virt_text .. "\n" .. virt_lines), pos } or nil.
local function native_shown()
  local r = T.lua([[
    local ns = vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
    if not ns then return nil end
    local m = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })[1]
    if not m then return nil end
    local d = m[4]
    local function join(chunks)
      local s = {}
      for _, c in ipairs(chunks or {}) do s[#s + 1] = c[1] end
      return table.concat(s)
    end
    local lines = { join(d.virt_text) }
    for _, vl in ipairs(d.virt_lines or {}) do lines[#lines + 1] = join(vl) end
    return { text = table.concat(lines, '\n'), pos = d.virt_text_pos, row = m[2], col = m[3] }
  ]])
  return r ~= vim.NIL and r or nil
end

local function buf_text()
  return table.concat(T.buffer(), '\n')
end

-- Waits for an answer after the first `n` with a non-empty first item and
-- for Neovim to show it; types one more character (at most 4 times) when the
-- random model's text was dropped whole. Returns that item's insertText.
local function wait_shown(n, what)
  for attempt = 1, 4 do
    local ok = T.wait(([[
      local a = _G.t.answers_native
      if #a <= %d then return false end
      local last = a[#a]
      if last.err then return 'err' end
      local items = last.result and (last.result.items or last.result) or {}
      return (#items > 0 and items[1].insertText ~= '') and 'item' or 'empty'
    ]]):format(n), 90000, what)
    if not ok then
      return nil
    end
    local last = T.lua('return _G.t.answers_native[#_G.t.answers_native]')
    if last.err ~= nil and last.err ~= vim.NIL then
      T.ok(false, what .. ': the daemon answered an error: ' .. vim.inspect(last.err))
      return nil
    end
    local items = last.result ~= vim.NIL and (last.result.items or last.result) or {}
    if #items > 0 and items[1].insertText ~= '' then
      local ins = items[1].insertText
      if type(ins) == 'table' then
        ins = ins.value
      end
      T.wait('return vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"] ~= nil and '
        .. '#vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"], 0, -1, {}) > 0',
        10000, what .. ': native ghost text drawn')
      return ins, items
    end
    T.log(('retry %d: the daemon answered without text'):format(attempt))
    n = T.lua('return #_G.t.answers_native')
    T.input('x')
  end
  T.ok(false, what .. ': no answer with text after 4 tries')
  return nil
end

-- 1. Typing: Neovim asks by itself and draws the daemon's text.
T.input('idef add(a, b):<CR>    # compute the sum of ')
local ins, items = wait_shown(0, 'a native answer')
if not ins then
  T.finish()
end
T.log('daemon answered: ' .. vim.inspect(ins))
local shown = native_shown()
T.ok(shown ~= nil, 'extmark in nvim.lsp.inline_completion')
if shown then
  T.eq(shown.text, ins, 'native ghost text equals the item insertText')
  T.eq(shown.row, 1, 'on the cursor line')
  T.eq(shown.pos, 'inline', 'inline virtual text')
end
T.eq(T.lua('return require("infilld").visible()'), true, 'visible() sees the native ghost text')
T.eq(T.lua('return require("infilld").shown(0)'), vim.NIL, 'the plugin draws nothing itself')

-- 2. Cycle: select() re-draws with the index hint (automatic answers carry
-- one candidate, so it stays on the same text).
local n_items = #items
T.input('<M-]>')
T.wait(('local s = %s; return s'):format([[(function()
  local ns = vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
    local all = {}
    for _, c in ipairs(m[4].virt_text or {}) do all[#all + 1] = c[1] end
    for _, vl in ipairs(m[4].virt_lines or {}) do for _, c in ipairs(vl) do all[#all + 1] = c[1] end end
    if table.concat(all):find('%(%d+/%d+%)$') then return true end
  end
end)()]]), 5000, 'cycle hint')
shown = native_shown()
T.ok(shown and shown.text:find(('(%d/%d)'):format(n_items > 1 and 2 or 1, n_items), 1, true) ~= nil,
  'cycle shows the index hint: ' .. vim.inspect(shown and shown.text))

-- 3. Word accept through get{on_accept}: the plugin inserts the first word.
local BEFORE = buf_text()
local w = T.lua('return require("infilld.text").next_word(...)', ins)
T.input('<M-w>')
T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(BEFORE .. w),
  10000, 'word accept')
T.eq(buf_text(), BEFORE .. w, 'word accept inserts the first word of insertText')

-- 4. Neovim asks again; full accept inserts exactly the new item and runs
-- its infilld.accepted command.
local n = T.lua('return #_G.t.answers_native')
local ins2 = wait_shown(n, 'an answer after word accept')
if ins2 then
  local before2 = buf_text()
  T.input('<M-l>')
  T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(
    before2 .. ins2), 10000, 'full accept')
  T.eq(buf_text(), before2 .. ins2, 'full accept inserts exactly insertText')
  T.wait('for _, c in ipairs(_G.t.commands) do if c == "infilld.accepted" then return true end end', 10000,
    'infilld.accepted sent after accept')
end

-- 5. Line accept, then dismiss of a fresh one.
T.input('<CR># the sum ')
n = T.lua('return #_G.t.answers_native')
local ins3 = wait_shown(n, 'an answer on a new line')
if ins3 then
  local before3 = buf_text()
  local l = T.lua('return require("infilld.text").next_line(...)', ins3)
  T.input('<M-j>')
  T.wait(('return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") == %q'):format(before3 .. l),
    10000, 'line accept')
  T.eq(buf_text(), before3 .. l, 'line accept inserts the first line of insertText')
end
T.input('<CR># more ')
n = T.lua('return #_G.t.answers_native')
if wait_shown(n, 'an answer to dismiss') then
  local before4 = buf_text()
  T.input('<C-]>')
  T.wait('local ns = vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"]; '
    .. 'return #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}) == 0', 5000, 'dismissed')
  T.eq(buf_text(), before4, 'dismiss leaves the buffer unchanged')
end

-- 6. :checkhealth names the native path.
T.input('<Esc>')
local health = T.lua([[
  vim.cmd('checkhealth infilld')
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
]])
T.ok(health:find("vim.lsp.inline_completion (0.12+)", 1, true) ~= nil, 'health: native rendering')
T.ok(health:find('OK:? server offers textDocument/inlineCompletion') ~= nil, 'health: capability')

T.finish()
