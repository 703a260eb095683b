#!/bin/sh
# run.sh NVIM SERIES SCRIPT: runs one editor test script in the Neovim NVIM,
# which must be of SERIES (0.7, 0.10, 0.12). A missing Neovim skips (77)
# except under CI=true, where it fails: a green CI must have run the editor.
nvim=$1 series=$2 script=$3
if [ ! -x "$nvim" ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: no Neovim $series at $nvim (CI=true: a missing editor is a failure;" \
      "0.10/0.12 come from tests/editors/nvim/fetch.sh)" >&2
    exit 1
  fi
  echo "SKIP: no Neovim $series at $nvim" >&2
  exit 77
fi
# The harness checks the embedded Neovim is this version and, for the
# unpacked ones, that its v:progpath and $VIMRUNTIME lie in its own tree.
INFILLD_NVIM_SERIES=$series
INFILLD_NVIM_TREE=
case "$series" in
0.7) ;;
*) INFILLD_NVIM_TREE=$(cd "$(dirname "$(readlink -f "$nvim")")/../.." && pwd) ;;
esac
export INFILLD_NVIM_SERIES INFILLD_NVIM_TREE
# A VIMRUNTIME from the caller's environment would hide which runtime runs.
unset VIMRUNTIME VIM
# A Lua error in a headless `luafile` waits for a key forever: catch it.
exec "$nvim" --headless -u NONE -i NONE -n -c "lua local ok, e = pcall(dofile, '$script')
if not ok then io.stderr:write('ERROR: ' .. tostring(e) .. '\\n'); vim.cmd('cquit 1') end"
