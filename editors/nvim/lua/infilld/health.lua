-- :checkhealth infilld
-- Neovim 0.7-0.8 report through require('health').report_*; 0.9+ has
-- vim.health.start/ok/warn/error/info.
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then
    return h
  end
  local old = (h and h.report_start) and h or require('health')
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

function M.check()
  local h = reporter()
  local infilld = require('infilld')
  local cfg = infilld.config()
  local v = vim.version()

  h.start('infilld: editor')
  h.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  if not infilld.is_setup() then
    -- The rendering mode and the daemon command are only decided by setup().
    h.warn("require('infilld').setup() has not run", {
      "call require('infilld').setup({}) from init.lua (see :help infilld)",
    })
    return
  end
  local mode = infilld.mode()
  if mode == 'native' then
    h.ok('rendering: Neovim\'s vim.lsp.inline_completion (0.12+); set native = false for word/line accept and partials')
  elseif mode == 'inline' then
    h.ok('rendering: inline virtual text (0.10+)')
  else
    h.ok('rendering: overlay virtual text (Neovim before 0.10; inline needs 0.10)')
  end

  h.start('infilld: daemon')
  if cfg.tcp then
    h.info(('connecting over TCP to %s:%s'):format(cfg.tcp.host or '127.0.0.1', tostring(cfg.tcp.port)))
    if not vim.lsp.rpc.connect and vim.fn.executable('nc') ~= 1 then
      h.error('TCP on Neovim 0.7 needs `nc` on the PATH', { 'install netcat, or use stdio' })
    end
  else
    local cmd = require('infilld.config').command(cfg)
    local exe = cmd[1]
    if vim.fn.executable(exe) == 1 then
      h.ok(('daemon: %s'):format(vim.fn.exepath(exe)))
      local out = vim.fn.system({ exe, '--version' })
      if vim.v.shell_error == 0 then
        h.ok('version: ' .. vim.trim(out))
      else
        h.warn('`' .. exe .. ' --version` failed: ' .. vim.trim(out))
      end
    else
      h.error(('"%s" is not executable or not on the PATH'):format(exe), {
        'build it: cmake --workflow --preset default, then cmake --install build/default',
        "or point setup{ path = '/path/to/infilld' } at the binary",
      })
    end
  end

  local c = infilld.client()
  if not c then
    h.warn('no daemon running (open a file in a normal buffer, or check :LspLog)')
    return
  end
  h.ok(('client %d running, position encoding %s'):format(c.id, c.offset_encoding or 'utf-16'))
  local caps = c.server_capabilities or c.resolved_capabilities or {}
  if caps.inlineCompletionProvider then
    h.ok('server offers textDocument/inlineCompletion')
  else
    h.warn('server does not advertise inlineCompletionProvider')
  end
  local ok, bufs = pcall(vim.lsp.get_buffers_by_client_id, c.id)
  if ok and bufs and #bufs > 0 then
    h.ok(('attached to %d buffer(s)'):format(#bufs))
  else
    h.info('attached to no buffer yet (filetype excluded, or not a file buffer)')
  end
  local st = infilld.status()
  if st then
    h.info(infilld.format_status(st) .. (st.state and (' (' .. tostring(st.state) .. ')') or ''))
    if st.state == 'error' or st.state == 'none' then
      h.warn('the daemon has no usable model; see its log and `infilld doctor`')
    end
  else
    h.info('no infilld/status received yet')
  end
end

return M
