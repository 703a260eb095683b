-- Runs inside a headless Neovim that has loaded a user's init.lua built from
-- the README's snippets (see readme.py). Writes what it found as JSON to
-- $README_RESULT and quits. Modes ($README_MODE):
--   before  the plugin is installed but setup() has not run: :checkhealth text
--   plugin  after setup(): config, the daemon attached to a Python buffer,
--           :checkhealth text
--   native  Neovim 0.12's own client (vim.lsp.config/enable), no plugin
local mode = os.getenv('README_MODE')
local out = { mode = mode, errmsg = vim.v.errmsg }
local file = os.getenv('README_FILE')

local function health()
  local ok, err = pcall(vim.cmd, 'checkhealth infilld')
  if not ok then
    return 'checkhealth failed: ' .. tostring(err)
  end
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end

local function attached(pred)
  return vim.wait(30000, pred, 50)
end

if mode == 'before' then
  out.loaded = pcall(require, 'infilld')
  out.health = health()
elseif mode == 'plugin' then
  local ok, infilld = pcall(require, 'infilld')
  out.loaded = ok
  if ok then
    out.is_setup = infilld.is_setup()
    local cfg = infilld.config()
    out.path = cfg.path
    out.debounce_ms = cfg.debounce_ms
    out.keymap_accept = cfg.keymaps and cfg.keymaps.accept
    vim.cmd('edit ' .. vim.fn.fnameescape(file))
    out.attached = attached(function()
      local c = infilld.client()
      return c ~= nil and vim.lsp.buf_is_attached(0, c.id)
    end)
    local c = infilld.client()
    out.client_name = c and c.name
    out.health = health()
  end
elseif mode == 'native' then
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  out.attached = attached(function()
    for _, c in ipairs(vim.lsp.get_clients({ name = 'infilld', bufnr = 0 })) do
      if c.initialized then
        out.inline = c.server_capabilities.inlineCompletionProvider and true or false
        return true
      end
    end
    return false
  end)
  out.inline_enabled = vim.lsp.inline_completion.is_enabled()
  out.mapped = vim.fn.maparg('<M-l>', 'i') ~= '' or #vim.api.nvim_get_keymap('i') > 0
end
out.errmsg_end = vim.v.errmsg
local f = assert(io.open(os.getenv('README_RESULT'), 'w'))
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd('qall!')
