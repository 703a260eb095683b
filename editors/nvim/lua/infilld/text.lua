-- Pure text helpers: no editor state, so they run (and are tested) anywhere.
-- Byte offsets are 0-based unless a name says otherwise; LSP positions are
-- counted in the session's encoding ('utf-8', 'utf-16' or 'utf-32').
local M = {}

-- Length in bytes of the UTF-8 sequence that starts with byte b.
local function seq_len(b)
  if b < 0x80 then
    return 1
  elseif b >= 0xF0 then
    return 4
  elseif b >= 0xE0 then
    return 3
  elseif b >= 0xC0 then
    return 2
  end
  return 1 -- a stray continuation byte counts as one unit on its own
end

-- Code units of one character of `n` UTF-8 bytes in `encoding`.
local function units(n, encoding)
  if encoding == 'utf-8' then
    return n
  elseif encoding == 'utf-32' then
    return 1
  end
  return n == 4 and 2 or 1
end

-- Byte offset of LSP character `character` on `line`. Past the end clamps to #line;
-- inside a multi-unit character it rounds down to the character start.
function M.byte_col(line, character, encoding)
  local i, u = 1, 0
  while i <= #line do
    local n = seq_len(line:byte(i))
    local w = units(n, encoding)
    if u + w > character then
      return i - 1
    end
    u = u + w
    i = i + n
  end
  return #line
end

-- LSP character of byte offset `col` on `line` (col clamps to #line).
function M.lsp_col(line, col, encoding)
  if col > #line then
    col = #line
  end
  local i, u = 1, 0
  while i <= col do
    local n = seq_len(line:byte(i))
    u = u + units(n, encoding)
    i = i + n
  end
  return u
end

-- Length of `s` in UTF-16 code units (what LSP's acceptedLength counts).
function M.utf16_len(s)
  return M.lsp_col(s, #s, 'utf-16')
end

-- Splits on "\n" keeping empty pieces: "a\n" -> {"a", ""}. A "\r" before each
-- "\n" is dropped so CRLF text from a server never shows as ^M.
function M.split_lines(s)
  local out = {}
  local start = 1
  while true do
    local nl = s:find('\n', start, true)
    if not nl then
      out[#out + 1] = s:sub(start)
      break
    end
    local piece = s:sub(start, nl - 1)
    if piece:sub(-1) == '\r' then
      piece = piece:sub(1, -2)
    end
    out[#out + 1] = piece
    start = nl + 1
  end
  return out
end

local WORD = '[%w_\128-\255]'

-- The next "word" of ghost text s, as editors' accept-next-word does it: leading
-- blanks plus one run of word characters, or plus one run of punctuation. A
-- leading line break is taken together with the next line's indentation.
function M.next_word(s)
  if s == '' then
    return ''
  end
  local nl = s:match('^\r?\n[ \t]*')
  if nl then
    return nl
  end
  local w = s:match('^[ \t]*' .. WORD .. '+')
  if w then
    return w
  end
  w = s:match('^[ \t]*[^%w_\128-\255%s]+')
  if w then
    return w
  end
  return s:match('^[ \t]+') or s:sub(1, 1)
end

-- The next line of ghost text s: everything up to (not including) the next line
-- break; when s starts with a line break, that break plus the following line.
function M.next_line(s)
  if s == '' then
    return ''
  end
  local lead = s:match('^\r?\n') or ''
  local rest = s:sub(#lead + 1)
  local nl = rest:find('\n', 1, true)
  if not nl then
    return s
  end
  local body = rest:sub(1, nl - 1)
  return lead .. body
end

-- Replaces tabs with spaces for display in virtual text (Neovim shows a raw
-- tab there as a single cell on some versions).
function M.expand_tabs(s, tabstop)
  if not s:find('\t', 1, true) then
    return s
  end
  return (s:gsub('\t', string.rep(' ', tabstop or 8)))
end

-- Is `prefix` a prefix of `s`?
function M.starts_with(s, prefix)
  return s:sub(1, #prefix) == prefix
end

return M
