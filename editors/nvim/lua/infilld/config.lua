-- Defaults for require('infilld').setup{...}; see :help infilld-config.
local M = {}

M.defaults = {
  -- How to reach the daemon. `cmd` wins when set; otherwise `path` (a name
  -- looked up on $PATH, or a file path) plus `args`. With `tcp` set, the plugin
  -- connects to an already running `infilld --listen HOST:PORT` instead.
  cmd = nil,
  path = 'infilld',
  args = {},
  tcp = nil, -- { host = '127.0.0.1', port = 7777 }

  -- Sent as initializationOptions (docs/PROTOCOL.md lists every key).
  model = nil, -- model folder; nil = the daemon's default
  device = nil, -- 'auto' | 'cpu' | 'cuda'
  init_options = {}, -- anything else: seed, candidates, validate, steps, alg, ...

  -- Behaviour.
  auto_trigger = true, -- ask while typing (after debounce_ms of quiet)
  debounce_ms = 150,
  -- Tell the daemon where the cursor is (infilld/didChangeCursor) after
  -- cursor_debounce_ms of quiet, on insert-mode moves and when a buffer is
  -- opened or entered, so that it works ahead there (idle prefill).
  cursor_notify = true,
  cursor_debounce_ms = 100,
  partial = true, -- progressive rendering from infilld/partial
  hide_during_pum = true, -- no ghost text while the completion menu is open
  filetypes = nil, -- list of filetypes to attach to; nil = every normal buffer
  exclude_filetypes = { 'help', 'qf', 'TelescopePrompt', 'NvimTree', 'neo-tree', 'lazy', 'mason' },
  -- 'auto': use Neovim's own vim.lsp.inline_completion when it exists (0.12+);
  -- false: always use this plugin's renderer (word/line accept, partials,
  -- typing-through); true: require the native one.
  native = 'auto',
  -- 'auto': inline virtual text on 0.10+, overlay before; false: always overlay.
  inline = 'auto',

  -- Insert-mode keys (false disables one). When nothing is shown, a key falls
  -- through to its normal meaning.
  keymaps = {
    accept = '<M-l>',
    accept_word = '<M-w>',
    accept_line = '<M-j>',
    next = '<M-]>',
    prev = '<M-[>',
    dismiss = '<C-]>',
    trigger = '<M-\\>',
    -- visual mode: regenerate the selection in place
    regenerate = '<leader>ir',
  },

  -- Log level of the daemon (passed as --log-level), and of this plugin's
  -- messages ('error' | 'warn' | 'info' | 'debug').
  log_level = 'warn',
}

local function is_list(t)
  if type(t) ~= 'table' then
    return false
  end
  local n = 0
  for _ in pairs(t) do
    n = n + 1
  end
  return n == #t and (n > 0 or next(t) == nil)
end

-- A table with at least one key that is not a list. An empty table is both a
-- list and a dict, so it cannot decide alone; the side it merges into does.
local function is_dict(t)
  return type(t) == 'table' and next(t) ~= nil and not is_list(t)
end

-- Deep merge: dicts merge key by key (an empty `over` such as setup({})
-- keeps every default), lists and scalars replace.
local function merge(base, over)
  if over == nil then
    return base
  end
  if not is_dict(base) or type(over) ~= 'table' or (next(over) ~= nil and is_list(over)) then
    return over
  end
  local out = {}
  for k, v in pairs(base) do
    out[k] = v
  end
  for k, v in pairs(over) do
    out[k] = merge(base[k], v)
  end
  return out
end

function M.resolve(user)
  return merge(M.defaults, user or {})
end

-- The daemon command line for a resolved config (no TCP).
function M.command(cfg)
  if cfg.cmd then
    return cfg.cmd
  end
  local cmd = { cfg.path }
  if cfg.log_level then
    cmd[#cmd + 1] = '--log-level'
    cmd[#cmd + 1] = cfg.log_level
  end
  for _, a in ipairs(cfg.args or {}) do
    cmd[#cmd + 1] = a
  end
  return cmd
end

-- initializationOptions for a resolved config.
function M.init_options(cfg)
  local o = {}
  for k, v in pairs(cfg.init_options or {}) do
    o[k] = v
  end
  if cfg.model then
    o.model = cfg.model
  end
  if cfg.device then
    o.device = cfg.device
  end
  o.partial = cfg.partial and true or false
  o.status = true
  return o
end

return M
