#!/usr/bin/env bash
# The ghost text as a user sees it: a real Neovim in a real terminal (tmux),
# the plugin and the real daemon. Types into a Python file, waits until the
# plugin shows the daemon's answer, captures the pane with its colours
# (`capture-pane -e`), checks the first line of the ghost text is on screen
# next to what was typed, and renders the capture to PNG (ANSI -> HTML with
# aha -> headless chromium --screenshot).
#
#   tmux_ghost.sh NVIM INFILLD MODEL_DIR OUT_DIR
# Writes OUT_DIR/nvim-ghost.{ans,txt,html,png}. Exit 77 when tmux, aha or
# chromium is missing, except under CI=true (then 1).
set -euo pipefail
nvim=$1 bin=$2 model=$3 out=$4
repo=$(cd "$(dirname "$0")/../../.." && pwd)

missing=()
for t in tmux aha chromium; do command -v "$t" >/dev/null || missing+=("$t"); done
[ -x "$nvim" ] || missing+=("$nvim")
if [ ${#missing[@]} -gt 0 ]; then
  echo "tmux_ghost: missing ${missing[*]} (bootstrap.sh installs them)" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi

mkdir -p "$out"
work=$(mktemp -d)
sock="$work/tmux.sock"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The plugin writes the ghost text it shows, once it shows it.
cat >"$work/init.lua" <<EOF
vim.opt.rtp:prepend('$repo/editors/nvim')
vim.o.number = true
vim.o.swapfile = false
vim.cmd('filetype indent off')
-- the comment typed and the ghost text apart, as a colour scheme would
vim.cmd('highlight Comment ctermfg=108')
vim.cmd('highlight InfilldGhost ctermfg=244 cterm=italic')
local infilld = require('infilld')
-- Every answer (also null): once drawn, its ghost text is either usable
-- (needle.txt) or not (unusable.txt holds the line it answered; the script
-- then types one more character instead of waiting out its timeout).
infilld._hooks.on_answer = function()
  vim.schedule(function()
    local s = infilld.shown(0)
    if s and s.ghost ~= '' then
      -- what the screen must show: the end of the typed line, then the
      -- ghost text's leading printable ASCII (other bytes may draw as '?')
      local typed = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
      local head = s.ghost:match('^[ -~]*'):sub(1, 24)
      -- a ghost text that starts with other bytes cannot be found on the
      -- screen: wait for the next one (the script types on)
      if #head >= 3 then
        -- ghost.txt first: the script waits for needle.txt, then reads both
        vim.fn.writefile(vim.split(s.ghost, '\n', { plain = true }), '$work/ghost.txt')
        vim.fn.writefile({ typed:sub(-20) .. head, head }, '$work/needle.txt')
        return
      end
    end
    vim.fn.writefile({ vim.api.nvim_get_current_line() }, '$work/unusable.txt')
  end)
end
-- attached.txt once the daemon serves this buffer: text typed earlier asks
-- before the client exists, and nothing asks again until the next key.
local function mark_attached()
  local c = infilld.client()
  if c and vim.lsp.buf_is_attached(0, c.id) then
    vim.fn.writefile({ 'attached' }, '$work/attached.txt')
  else
    vim.defer_fn(mark_attached, 50)
  end
end
vim.defer_fn(mark_attached, 50)
infilld.setup({
  path = '$bin',
  model = '$model',
  debounce_ms = 100,
  native = false,
  log_level = 'error',
  init_options = { validate = false, latencyBudgetMs = 0, seed = 7, candidates = 1, steps = 8 },
})
EOF

tmux -S "$sock" -f /dev/null new-session -d -s ghost -x 96 -y 14 \
  "env TERM=tmux-256color $nvim -u $work/init.lua -i NONE -n $work/demo.py"
tmux -S "$sock" set-option -g default-terminal tmux-256color >/dev/null
for _ in $(seq 1 600); do
  [ -s "$work/attached.txt" ] && break
  sleep 0.1
done
[ -s "$work/attached.txt" ] || echo "tmux_ghost: the daemon has not attached after 60 s; typing anyway" >&2
tmux -S "$sock" send-keys -t ghost i
tmux -S "$sock" send-keys -t ghost -l 'def add(a, b):'
tmux -S "$sock" send-keys -t ghost Enter
tmux -S "$sock" send-keys -t ghost -l '    # compute the sum of a and b: '

# Wait for the ghost text; the random tiny model may answer nothing usable,
# then one more character is typed (at most 4 times): as soon as the answer
# for the line as typed is drawn unusable, else after 60 s.
line='    # compute the sum of a and b: '
for attempt in 1 2 3 4; do
  for _ in $(seq 1 600); do
    [ -s "$work/needle.txt" ] && break 2
    [ "$(cat "$work/unusable.txt" 2>/dev/null)" = "$line" ] && break
    sleep 0.1
  done
  echo "tmux_ghost: retry $attempt: no usable ghost text yet" >&2
  tmux -S "$sock" send-keys -t ghost -l 'x'
  line="${line}x"
done
if [ ! -s "$work/ghost.txt" ]; then
  echo "FAIL: no ghost text shown in the terminal" >&2
  tmux -S "$sock" capture-pane -p -t ghost >&2
  exit 1
fi
sleep 0.5 # let the terminal draw it
tmux -S "$sock" capture-pane -e -p -t ghost >"$out/nvim-ghost.ans"
tmux -S "$sock" capture-pane -p -t ghost >"$out/nvim-ghost.txt"

# The ghost text's start follows the typed text on screen.
needle=$(head -n 1 "$work/needle.txt")
first=$(sed -n 2p "$work/needle.txt")
if [ -z "$first" ] || ! grep -qF -- "$needle" "$out/nvim-ghost.txt"; then
  echo "FAIL: the screen does not show '$needle' (ghost text starts '$first')" >&2
  cat "$out/nvim-ghost.txt" >&2
  exit 1
fi
echo "tmux_ghost: screen shows the ghost text: ${first}"

aha --black --title 'infilld in Neovim' <"$out/nvim-ghost.ans" |
  sed 's|<pre>|<pre style="font: 15px/1.25 monospace; margin: 8px">|' >"$out/nvim-ghost.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --user-data-dir="$work/chrome" --hide-scrollbars \
  --window-size=900,300 --screenshot="$out/nvim-ghost.png" "file://$out/nvim-ghost.html" \
  >"$work/chromium.log" 2>&1 || {
  cat "$work/chromium.log" >&2
  echo "FAIL: chromium could not render the capture" >&2
  exit 1
}
[ -s "$out/nvim-ghost.png" ] || {
  echo "FAIL: no PNG written" >&2
  exit 1
}
echo "tmux_ghost: wrote $out/nvim-ghost.png"
