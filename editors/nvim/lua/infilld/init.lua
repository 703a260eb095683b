-- infilld for Neovim: ghost-text code infilling from the infilld LSP daemon.
--
-- Works on Neovim 0.7+. The daemon is an ordinary LSP server; this module
-- starts (or connects to) it, asks textDocument/inlineCompletion while you
-- type, and draws the answer as ghost text (see ghost.lua). On 0.12+ it hands
-- requests and rendering to Neovim's own vim.lsp.inline_completion unless
-- `native = false` (see native.lua).
--
-- Per buffer it keeps at most one request in flight: every keystroke cancels
-- it, and a new one goes out after `debounce_ms` of quiet. Meanwhile the
-- current suggestion stays on screen as long as what you typed matches it
-- (typing-through), so the ghost text never blinks while you type along it.
local config = require('infilld.config')
local ghost = require('infilld.ghost')
local text = require('infilld.text')
local native = require('infilld.native')

local api = vim.api
local uv = vim.uv or vim.loop

-- Client methods: called as functions before 0.11 (client.request(...)), as
-- methods from 0.11 on (client:request(...)), where the old form is deprecated.
local METHOD_CALLS = vim.fn.has('nvim-0.11') == 1
local function call(c, name, ...)
  if METHOD_CALLS then
    return c[name](c, ...)
  end
  return c[name](...)
end

local M = {}

local ns = api.nvim_create_namespace('infilld')
local cfg = config.resolve(nil)
local did_setup = false
local client_id = nil
local use_native = false
-- Latest infilld/status params, for M.statusline().
local last_status = nil
-- Per-buffer state, see new_state().
local states = {}
-- Said once that the daemon binary is missing.
local warned_missing = false

-- Test hooks (tests/editors): on_response(bufnr, result) for answers with items,
-- on_answer(bufnr, err, result) for every answer (also null and errors),
-- on_partial(bufnr, params, drawn) for every infilld/partial it draws,
-- on_apply_edit(params).
M._hooks = {}

local LEVELS = { error = 4, warn = 3, info = 2, debug = 1 }

local function log(level, msg)
  if (LEVELS[level] or 1) >= (LEVELS[cfg.log_level] or 3) then
    local vl = ({ error = vim.log.levels.ERROR, warn = vim.log.levels.WARN })[level]
      or vim.log.levels.INFO
    vim.schedule(function()
      vim.notify('infilld: ' .. msg, vl)
    end)
  end
end

local function new_state(bufnr)
  return {
    bufnr = bufnr,
    -- Candidates of the last answer. Each: { text, row, head, keep_len,
    -- command, request_id } where head is the line's bytes before the
    -- item's start and keep_len the number of bytes at the end of the line that
    -- stay after the insertion (both taken at request time).
    items = {},
    index = 1,
    show_index = false,
    -- Progressive text for the pending request (same shape as an item).
    partial = nil,
    mark = nil,
    timer = nil,
    pending = nil, -- LSP request id in flight
    pending_seq = 0, -- bumps with every request, so late answers are dropped
    pending_tick = nil, -- b:changedtick when the request in flight was sent
    last_rid = 0, -- highest server requestId answered (older partials are stale)
    accepted_bytes = 0, -- of items[index].text accepted by word/line so far
    dismissed_tick = nil,
    last_result = nil,
  }
end

local function state(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local st = states[bufnr]
  if not st then
    st = new_state(bufnr)
    states[bufnr] = st
  end
  return st
end

local function get_client()
  if not client_id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(client_id)
  if c == nil or (c.is_stopped and call(c, 'is_stopped')) then
    return nil
  end
  return c
end

local function encoding(client)
  return (client and client.offset_encoding) or 'utf-16'
end

local function in_insert()
  return api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

local function cursor()
  local pos = api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function get_line(bufnr, row)
  return api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

-- ---------------------------------------------------------------------------
-- Rendering

-- What of `item` remains to be shown given the buffer now, or nil when the
-- buffer no longer agrees with it (cursor moved away, typed text diverged).
-- Returns ghost text, cursor column, column where the kept rest of line starts.
local function remaining(st, item)
  if not item or api.nvim_get_current_buf() ~= st.bufnr then
    return nil
  end
  local row, col = cursor()
  if row ~= item.row then
    return nil
  end
  local line = get_line(st.bufnr, row)
  local start = #item.head
  local keep_from = #line - item.keep_len
  if line:sub(1, start) ~= item.head or col < start or col > keep_from then
    return nil
  end
  local typed = line:sub(start + 1, col)
  if not text.starts_with(item.text, typed) then
    return nil
  end
  return item.text:sub(#typed + 1), col, keep_from, line
end

local function inline_ok()
  if cfg.inline == false then
    return false
  end
  return ghost.supports_inline(vim.fn.has)
end

local function current_item(st)
  return st.items[st.index]
end

local function clear(st)
  ghost.clear(api, st.bufnr, ns, st.mark)
  st.mark = nil
end

-- Redraws the buffer's ghost text from its state: the current item while
-- the buffer still agrees with it (typing-through: it stays until the next
-- answer replaces it), else the partial text of the pending request, if any.
-- Drops what the buffer no longer agrees with.
local function render(st)
  if not in_insert() or (cfg.hide_during_pum and vim.fn.pumvisible() == 1) then
    clear(st)
    return
  end
  local hl = 'InfilldGhost'
  local item = current_item(st)
  local rest, col, keep_from, line = remaining(st, item)
  if item and (not rest or rest == '') then
    st.items, st.index, st.accepted_bytes = {}, 1, 0
    item = nil
  end
  if not item and st.partial then
    rest, col, keep_from, line = remaining(st, st.partial)
    if rest then
      item, hl = st.partial, 'InfilldGhostPartial'
    else
      st.partial = nil
    end
  end
  if not item then
    clear(st)
    return
  end
  local hint = nil
  if st.show_index and hl == 'InfilldGhost' and #st.items > 1 then
    hint = (' (%d/%d)'):format(st.index, #st.items)
  end
  local lay = ghost.layout({
    line = line,
    col = col,
    ghost = rest,
    keep_from = keep_from,
    inline = inline_ok(),
    width = vim.fn.strdisplaywidth,
    tabstop = vim.bo[st.bufnr].tabstop,
    hl = hl,
    hint = hint,
  })
  st.mark = ghost.show(api, st.bufnr, ns, st.mark, item.row, lay)
end

-- ---------------------------------------------------------------------------
-- Requests

local function stop_timer(st)
  if st.timer then
    st.timer:stop()
    if not st.timer:is_closing() then
      st.timer:close()
    end
    st.timer = nil
  end
end

local function cancel_pending(st)
  if st.pending then
    local c = get_client()
    if c then
      pcall(call, c, 'cancel_request', st.pending)
    end
    st.pending = nil
  end
  st.pending_seq = st.pending_seq + 1
  st.partial = nil
end

-- requestId of an answer, from its infilld.accepted command when present.
local function command_request_id(command)
  if type(command) == 'table' and command.command == 'infilld.accepted' then
    local a = command.arguments and command.arguments[1]
    if type(a) == 'table' and tonumber(a.requestId) then
      return tonumber(a.requestId)
    end
  end
  return nil
end

-- Turns an LSP item into the state's form, against `line` (the cursor line
-- when the request was sent) and the request's cursor column.
local function convert_item(raw, row, col, line, enc)
  local ins = raw.insertText
  if type(ins) == 'table' then
    ins = ins.value -- a snippet: shown and inserted as its plain text
  end
  if type(ins) ~= 'string' then
    return nil
  end
  local scol, ecol = col, col
  if type(raw.range) == 'table' and raw.range.start and raw.range['end'] then
    if raw.range.start.line ~= row or raw.range['end'].line ~= row then
      return nil -- LSP requires one-line ranges; anything else is not ours to guess
    end
    scol = text.byte_col(line, raw.range.start.character, enc)
    ecol = text.byte_col(line, raw.range['end'].character, enc)
    if ecol < scol or scol > col then
      return nil
    end
    ecol = math.max(ecol, col)
  end
  return {
    text = ins,
    row = row,
    head = line:sub(1, scol),
    keep_len = #line - ecol,
    command = raw.command,
    request_id = command_request_id(raw.command),
  }
end

-- Sends textDocument/inlineCompletion for the cursor position. kind: 1 Invoked
-- (user gesture: the server returns several candidates), 2 Automatic.
local function request(st, kind, then_fn)
  local c = get_client()
  if not c or api.nvim_get_current_buf() ~= st.bufnr then
    return false
  end
  stop_timer(st)
  cancel_pending(st)
  local row, col = cursor()
  local line = get_line(st.bufnr, row)
  local enc = encoding(c)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(st.bufnr) },
    position = { line = row, character = text.lsp_col(line, col, enc) },
    context = { triggerKind = kind },
  }
  st.pending_seq = st.pending_seq + 1
  local seq = st.pending_seq
  st.pending_tick = api.nvim_buf_get_changedtick(st.bufnr)
  local ok, id = call(c, 'request', 'textDocument/inlineCompletion', params, function(err, result)
    if seq ~= st.pending_seq then
      return -- superseded
    end
    st.pending = nil
    st.partial = nil
    if M._hooks.on_answer then
      M._hooks.on_answer(st.bufnr, err, result)
    end
    if err then
      log('warn', 'inlineCompletion: ' .. tostring(err.message or err))
      return
    end
    if result == nil or result == vim.NIL then
      render(st) -- cancelled on the server: keep what is shown
      return
    end
    st.last_result = result
    local items = {}
    for _, raw in ipairs(result.items or result) do
      local it = convert_item(raw, row, col, line, enc)
      if it and it.text ~= '' then
        items[#items + 1] = it
        if it.request_id and it.request_id > st.last_rid then
          st.last_rid = it.request_id
        end
      end
    end
    st.items, st.index, st.accepted_bytes = items, 1, 0
    st.show_index = kind == 1 and #items > 1
    render(st)
    if M._hooks.on_response then
      M._hooks.on_response(st.bufnr, result)
    end
    if then_fn then
      then_fn(st)
    end
  end, st.bufnr)
  if ok then
    st.pending = id
  end
  return ok
end

local function schedule_request(st)
  stop_timer(st)
  if not cfg.auto_trigger then
    return
  end
  st.timer = uv.new_timer()
  st.timer:start(
    cfg.debounce_ms,
    0,
    vim.schedule_wrap(function()
      stop_timer(st)
      if in_insert() and api.nvim_get_current_buf() == st.bufnr then
        request(st, 2)
      end
    end)
  )
end

-- infilld/partial {requestId, uri, range, text, step, steps}
local function on_partial(_, params)
  if not cfg.partial or type(params) ~= 'table' then
    return
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  local st = states[bufnr]
  if not st or not st.pending or (tonumber(params.requestId) or 0) <= st.last_rid then
    return
  end
  if api.nvim_get_current_buf() ~= bufnr or type(params.range) ~= 'table' then
    return
  end
  local row, col = cursor()
  if params.range.start.line ~= row then
    return
  end
  local line = get_line(bufnr, row)
  local raw = { insertText = params.text, range = params.range }
  local it = convert_item(raw, row, col, line, encoding(get_client()))
  if not it then
    return
  end
  st.partial = it
  render(st)
  if M._hooks.on_partial then
    M._hooks.on_partial(bufnr, params, st.mark ~= nil)
  end
end

local function on_status(_, params)
  if type(params) == 'table' then
    last_status = params
  end
end

-- ---------------------------------------------------------------------------
-- Accepting

-- Tells the server how much of an answer was taken (infilld.accepted), or
-- runs the item's own command after a full accept (LSP: command runs after
-- insertion).
local function report_accept(item, accepted_text, full)
  local c = get_client()
  if not c then
    return
  end
  local cmd = item.command
  if type(cmd) == 'table' and cmd.command and cmd.command ~= 'infilld.accepted' then
    if full then
      call(c, 'request', 'workspace/executeCommand', cmd, function() end, 0)
    end
    return
  end
  if not item.request_id then
    return
  end
  call(c, 'request', 'workspace/executeCommand', {
    command = 'infilld.accepted',
    arguments = {
      { requestId = item.request_id, acceptedLength = text.utf16_len(accepted_text) },
    },
  }, function() end, 0)
end

-- Inserts `piece` at the cursor and moves the cursor after it.
local function insert_at_cursor(bufnr, piece, replace_to)
  local row, col = cursor()
  local lines = text.split_lines(piece)
  api.nvim_buf_set_text(bufnr, row, col, row, replace_to or col, lines)
  local last_row = row + #lines - 1
  local last_col = (#lines == 1 and col or 0) + #lines[#lines]
  api.nvim_win_set_cursor(0, { last_row + 1, last_col })
end

-- how: 'all' | 'word' | 'line'. Returns true when something was inserted.
local function accept(how)
  local st = state(0)
  if use_native then
    return native.accept(vim.lsp.inline_completion, how, function(item, taken, full)
      local c = get_client()
      if c and item.client_id == c.id then
        report_accept({
          command = item.command,
          request_id = command_request_id(item.command),
        }, taken, full)
      end
    end)
  end
  local item = current_item(st)
  local rest, col, keep_from = remaining(st, item)
  if not rest or rest == '' then
    return false
  end
  local piece = rest
  if how == 'word' then
    piece = text.next_word(rest)
  elseif how == 'line' then
    piece = text.next_line(rest)
  end
  local full = #piece == #rest
  stop_timer(st)
  cancel_pending(st)
  -- A full accept also replaces what the item covers after the cursor.
  insert_at_cursor(st.bufnr, piece, full and keep_from or col)
  local taken = item.text:sub(1, #item.text - #rest + #piece)
  report_accept(item, taken, full)
  if full then
    st.items, st.index, st.accepted_bytes = {}, 1, 0
    clear(st)
  else
    st.accepted_bytes = #taken
    render(st)
  end
  return true
end

local function feed(key)
  api.nvim_feedkeys(api.nvim_replace_termcodes(key, true, false, true), 'n', false)
end

-- ---------------------------------------------------------------------------
-- Public API

function M.accept()
  return accept('all')
end

function M.accept_word()
  return accept('word')
end

function M.accept_line()
  return accept('line')
end

-- Is a suggestion shown in the current buffer?
function M.visible()
  if use_native then
    return native.visible(0)
  end
  local st = states[api.nvim_get_current_buf()]
  return st ~= nil and st.mark ~= nil
end

function M.dismiss()
  if use_native then
    return native.dismiss(vim.lsp.inline_completion, 0)
  end
  local st = state(0)
  local had = st.mark ~= nil
  stop_timer(st)
  cancel_pending(st)
  st.items, st.index, st.accepted_bytes = {}, 1, 0
  st.dismissed_tick = api.nvim_buf_get_changedtick(st.bufnr)
  clear(st)
  return had
end

-- Moves to the next (count > 0) or previous candidate. With a single one
-- from an automatic request, asks again as Invoked to get alternatives.
function M.cycle(count)
  if use_native then
    vim.lsp.inline_completion.select({ count = count })
    return true
  end
  local st = state(0)
  if #st.items > 1 then
    st.index = (st.index - 1 + count) % #st.items + 1
    st.show_index = true
    st.accepted_bytes = 0
    render(st)
    return true
  end
  return request(st, 1, function(s)
    if #s.items > 1 then
      s.index = (count > 0) and 2 or #s.items
      s.show_index = true
      render(s)
    end
  end)
end

function M.next()
  return M.cycle(1)
end

function M.prev()
  return M.cycle(-1)
end

-- Asks now, as a user gesture (Invoked).
function M.trigger()
  if use_native then
    -- Neovim asks by itself while typing; with something shown there is
    -- nothing more to ask for.
    return native.visible(0) or vim.lsp.inline_completion.get()
  end
  return request(state(0), 1)
end

-- Regenerates the text between (srow, scol) and (erow, ecol), 0-based bytes,
-- end exclusive, through workspace/executeCommand infilld.regenerate; the
-- daemon applies the new text with workspace/applyEdit.
function M.regenerate_range(bufnr, srow, scol, erow, ecol, on_done)
  local c = get_client()
  if not c then
    log('warn', 'no daemon attached to this buffer')
    return false
  end
  bufnr = (bufnr == 0 or bufnr == nil) and api.nvim_get_current_buf() or bufnr
  local enc = encoding(c)
  local range = {
    start = { line = srow, character = text.lsp_col(get_line(bufnr, srow), scol, enc) },
    ['end'] = { line = erow, character = text.lsp_col(get_line(bufnr, erow), ecol, enc) },
  }
  return call(c, 'request', 'workspace/executeCommand', {
    command = 'infilld.regenerate',
    arguments = { { uri = vim.uri_from_bufnr(bufnr), range = range } },
  }, function(err, result)
    if err then
      log('warn', 'regenerate: ' .. tostring(err.message or err))
    end
    if on_done then
      on_done(err, result)
    end
  end, bufnr)
end

-- Regenerates the last visual selection ('< and '> marks).
function M.regenerate(on_done)
  local bufnr = api.nvim_get_current_buf()
  local s = api.nvim_buf_get_mark(bufnr, '<')
  local e = api.nvim_buf_get_mark(bufnr, '>')
  if s[1] == 0 or e[1] == 0 then
    log('warn', 'no visual selection')
    return false
  end
  local srow, scol, erow, ecol = s[1] - 1, s[2], e[1] - 1, e[2]
  local vmode = vim.fn.visualmode()
  local eline = get_line(bufnr, erow)
  if vmode == 'V' then
    scol, ecol = 0, #eline
  else
    -- '> marks the last selected character; the range end is after it.
    local ch = eline:sub(ecol + 1):match('^[%z\1-\127\194-\244][\128-\191]*') or ''
    ecol = math.min(#eline, ecol + math.max(#ch, 1))
  end
  return M.regenerate_range(bufnr, srow, scol, erow, ecol, on_done)
end

-- "infilld: <model> · <device> · <ms> ms" for a statusline, '' before the
-- daemon has said anything.
function M.statusline()
  return M.format_status(last_status)
end

function M.format_status(s)
  if type(s) ~= 'table' then
    return ''
  end
  local parts = {}
  local function str(v)
    return type(v) == 'string' and v ~= '' and v or nil
  end
  parts[#parts + 1] = str(s.model) and vim.fn.fnamemodify(s.model, ':t') or 'no model'
  if str(s.device) then
    parts[#parts + 1] = s.device
  end
  if str(s.state) and s.state ~= 'ready' then
    parts[#parts + 1] = s.state
  end
  if type(s.lastLatencyMs) == 'number' then
    parts[#parts + 1] = ('%d ms'):format(math.floor(s.lastLatencyMs + 0.5))
  end
  return 'infilld: ' .. table.concat(parts, ' · ')
end

function M.status()
  return last_status
end

-- The ghost text currently shown in bufnr (tests, health): see ghost.read.
function M.shown(bufnr)
  local st = states[(bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr]
  return st and ghost.read(api, st.bufnr, ns, st.mark) or nil
end

function M.state(bufnr)
  return state(bufnr)
end

function M.client()
  return get_client()
end

function M.config()
  return cfg
end

M.namespace = ns
M._call = call

-- ---------------------------------------------------------------------------
-- Daemon and buffers

local function wants_buffer(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local ft = vim.bo[bufnr].filetype
  for _, x in ipairs(cfg.exclude_filetypes or {}) do
    if x == ft then
      return false
    end
  end
  if cfg.filetypes then
    for _, x in ipairs(cfg.filetypes) do
      if x == ft then
        return true
      end
    end
    return false
  end
  return true
end

local function on_text_changed(bufnr)
  local st = state(bufnr)
  if st.dismissed_tick and st.dismissed_tick == api.nvim_buf_get_changedtick(bufnr) then
    return
  end
  st.dismissed_tick = nil
  -- A keystroke makes the answer in flight stale; the shown item stays while
  -- it still matches (render drops it otherwise). TextChangedI only fires once
  -- typeahead is empty, so a request sent by a mapping typed right after the
  -- text already saw this change: keep that one.
  if st.pending and st.pending_tick == api.nvim_buf_get_changedtick(bufnr) then
    render(st)
    return
  end
  cancel_pending(st)
  render(st)
  schedule_request(st)
end

-- infilld/didChangeCursor after cursor_debounce_ms of quiet. The version is
-- the one Neovim's LSP client sent last (0 at didOpen on 0.7, the
-- changedtick after): a notification that overtakes a debounced didChange is
-- dropped by the daemon (the didChange schedules the same work at the edit's
-- end).
local cursor_timer = nil
local function stop_cursor_timer()
  if cursor_timer then
    cursor_timer:stop()
    cursor_timer:close()
    cursor_timer = nil
  end
end

local function doc_version(bufnr)
  local v = vim.lsp.util.buf_versions
  v = v and v[bufnr]
  if type(v) ~= 'number' then
    v = api.nvim_buf_get_changedtick(bufnr)
  end
  return v
end

local function send_cursor(bufnr)
  local c = get_client()
  if not c or api.nvim_get_current_buf() ~= bufnr or not vim.lsp.buf_is_attached(bufnr, c.id) then
    return
  end
  local row, col = cursor()
  local line = get_line(bufnr, row)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr), version = doc_version(bufnr) },
    position = { line = row, character = text.lsp_col(line, col, encoding(c)) },
  }
  call(c, 'notify', 'infilld/didChangeCursor', params)
  if M._hooks.on_cursor then
    M._hooks.on_cursor(params)
  end
end

local function schedule_cursor(bufnr)
  if not cfg.cursor_notify then
    return
  end
  stop_cursor_timer()
  cursor_timer = uv.new_timer()
  cursor_timer:start(
    cfg.cursor_debounce_ms or 100,
    0,
    vim.schedule_wrap(function()
      stop_cursor_timer()
      if api.nvim_buf_is_valid(bufnr) then
        send_cursor(bufnr)
      end
    end)
  )
end

local function attach_cursor_autocmds(bufnr)
  local group = api.nvim_create_augroup('infilld_cursor_' .. bufnr, { clear = true })
  api.nvim_create_autocmd({ 'CursorMovedI', 'InsertEnter', 'BufEnter' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      schedule_cursor(bufnr)
    end,
  })
  api.nvim_create_autocmd('BufUnload', {
    group = group,
    buffer = bufnr,
    callback = function()
      pcall(api.nvim_del_augroup_by_id, group)
    end,
  })
end

local function attach_autocmds(bufnr)
  local group = api.nvim_create_augroup('infilld_buf_' .. bufnr, { clear = true })
  api.nvim_create_autocmd('TextChangedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      on_text_changed(bufnr)
    end,
  })
  api.nvim_create_autocmd('TextChangedP', {
    group = group,
    buffer = bufnr,
    callback = function()
      render(state(bufnr))
    end,
  })
  api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      -- Typing fires this too; render() keeps an item that still matches.
      local st = state(bufnr)
      render(st)
      if not st.mark and not st.timer and not st.pending then
        schedule_request(st)
      end
    end,
  })
  api.nvim_create_autocmd('InsertEnter', {
    group = group,
    buffer = bufnr,
    callback = function()
      schedule_request(state(bufnr))
    end,
  })
  api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      local st = state(bufnr)
      stop_timer(st)
      cancel_pending(st)
      st.items, st.index, st.accepted_bytes = {}, 1, 0
      clear(st)
    end,
  })
  api.nvim_create_autocmd('BufUnload', {
    group = group,
    buffer = bufnr,
    callback = function()
      local st = states[bufnr]
      if st then
        stop_timer(st)
      end
      states[bufnr] = nil
      pcall(api.nvim_del_augroup_by_id, group)
    end,
  })
end

local function on_attach(client, bufnr)
  client_id = client.id
  state(bufnr)
  if use_native then
    native.attach(vim.lsp.inline_completion, bufnr)
  else
    attach_autocmds(bufnr)
  end
  -- the document is open on the daemon now: say where the cursor is
  attach_cursor_autocmds(bufnr)
  schedule_cursor(bufnr)
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.textDocument = caps.textDocument or {}
  caps.textDocument.inlineCompletion = { dynamicRegistration = false }
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  return caps
end

local function handlers()
  local default_apply = vim.lsp.handlers['workspace/applyEdit']
  return {
    ['infilld/partial'] = on_partial,
    ['infilld/status'] = on_status,
    ['workspace/applyEdit'] = function(err, params, ctx, conf)
      if M._hooks.on_apply_edit then
        M._hooks.on_apply_edit(params)
      end
      return default_apply(err, params, ctx, conf)
    end,
  }
end

-- The client configuration shared by vim.lsp.start / start_client.
function M.client_config()
  local cmd
  if cfg.tcp then
    local host, port = cfg.tcp.host or '127.0.0.1', tonumber(cfg.tcp.port)
    if vim.lsp.rpc.connect then
      cmd = vim.lsp.rpc.connect(host, port)
    elseif vim.fn.executable('nc') == 1 then
      -- Neovim 0.7 can only spawn servers; netcat bridges stdio to the socket.
      cmd = { 'nc', host, tostring(port) }
    else
      log('error', 'tcp needs Neovim 0.8+ (vim.lsp.rpc.connect) or `nc` on the PATH')
      return nil
    end
  else
    cmd = config.command(cfg)
    if vim.fn.executable(cmd[1]) ~= 1 then
      if not warned_missing then
        warned_missing = true
        log('error', ('"%s" not found or not executable; set setup{ path = ... } (see :checkhealth infilld)')
          :format(cmd[1]))
      end
      return nil
    end
  end
  return {
    name = 'infilld',
    cmd = cmd,
    root_dir = vim.fn.getcwd(),
    init_options = config.init_options(cfg),
    capabilities = capabilities(),
    handlers = handlers(),
    on_attach = on_attach,
    on_exit = function(code, signal)
      if code ~= 0 and signal == 0 then
        log('warn', ('daemon exited with code %d (see :checkhealth infilld)'):format(code))
      end
      client_id = nil
    end,
    flags = { debounce_text_changes = 50 },
  }
end

-- Starts the daemon if needed and attaches bufnr to it.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not wants_buffer(bufnr) then
    return false
  end
  if vim.lsp.start then
    local conf = M.client_config()
    if not conf then
      return false
    end
    local id = vim.lsp.start(conf, { bufnr = bufnr })
    if id then
      client_id = id
    end
    return id ~= nil
  end
  if not get_client() then
    local conf = M.client_config()
    if not conf then
      return false
    end
    client_id = vim.lsp.start_client(conf)
    if not client_id then
      return false
    end
  end
  return vim.lsp.buf_attach_client(bufnr, client_id)
end

local function map_keys()
  local k = cfg.keymaps or {}
  local function imap(lhs, fn, desc)
    if not lhs then
      return
    end
    vim.keymap.set('i', lhs, function()
      if not fn() then
        feed(lhs)
      end
    end, { desc = desc, silent = true })
  end
  imap(k.accept, M.accept, 'infilld: accept suggestion')
  imap(k.accept_word, M.accept_word, 'infilld: accept next word')
  imap(k.accept_line, M.accept_line, 'infilld: accept next line')
  imap(k.next, M.next, 'infilld: next candidate')
  imap(k.prev, M.prev, 'infilld: previous candidate')
  imap(k.dismiss, M.dismiss, 'infilld: dismiss suggestion')
  imap(k.trigger, M.trigger, 'infilld: suggest now')
  if k.regenerate then
    vim.keymap.set(
      'x',
      k.regenerate,
      ':<C-u>InfilldRegenerate<CR>',
      { desc = 'infilld: regenerate selection', silent = true }
    )
  end
end

local function define_highlights()
  api.nvim_set_hl(0, 'InfilldGhost', { link = 'Comment', default = true })
  api.nvim_set_hl(0, 'InfilldGhostPartial', { link = 'NonText', default = true })
  api.nvim_set_hl(0, 'InfilldGhostInfo', { link = 'Comment', default = true })
end

function M.setup(user)
  cfg = config.resolve(user)
  if cfg.native == true then
    use_native = native.available(vim.lsp)
    if not use_native then
      log('warn', 'native = true needs Neovim 0.12+ (vim.lsp.inline_completion)')
    end
  elseif cfg.native == 'auto' then
    use_native = native.available(vim.lsp)
  else
    use_native = false
  end
  define_highlights()
  if did_setup then
    return
  end
  did_setup = true
  map_keys()
  api.nvim_create_user_command('InfilldRegenerate', function(o)
    -- From visual mode ('<,'> is the range) regenerate the exact selection;
    -- with any other range, those whole lines.
    local bufnr = api.nvim_get_current_buf()
    local s, e = api.nvim_buf_get_mark(bufnr, '<'), api.nvim_buf_get_mark(bufnr, '>')
    if o.range > 0 and (s[1] ~= o.line1 or e[1] ~= o.line2) then
      local last = get_line(bufnr, o.line2 - 1)
      M.regenerate_range(bufnr, o.line1 - 1, 0, o.line2 - 1, #last)
    else
      M.regenerate()
    end
  end, { range = true, desc = 'Regenerate the selection with infilld' })
  api.nvim_create_user_command('InfilldAccept', function()
    M.accept()
  end, {})
  api.nvim_create_user_command('InfilldDismiss', function()
    M.dismiss()
  end, {})
  api.nvim_create_user_command('InfilldStatus', function()
    print(M.statusline() ~= '' and M.statusline() or 'infilld: no status yet')
  end, {})
  local group = api.nvim_create_augroup('infilld', { clear = true })
  api.nvim_create_autocmd({ 'FileType', 'BufEnter' }, {
    group = group,
    callback = function(args)
      local c = get_client()
      if c and vim.lsp.buf_is_attached(args.buf, c.id) then
        return
      end
      M.attach(args.buf)
    end,
  })
  api.nvim_create_autocmd('ColorScheme', { group = group, callback = define_highlights })
  M.attach(api.nvim_get_current_buf())
end

-- Whether setup() has run (health reports no mode before it).
function M.is_setup()
  return did_setup
end

-- Which rendering path is active: 'native' | 'inline' | 'overlay'.
function M.mode()
  if use_native then
    return 'native'
  end
  return inline_ok() and 'inline' or 'overlay'
end

return M
