-- Ghost-text rendering with one extmark per buffer.
--
-- layout() is pure: it turns (line text, cursor column, remaining ghost text,
-- kept suffix) into extmark options. show() applies them through an `api`
-- table (vim.api), always reusing the
-- same extmark id so an update replaces the mark in place (no flicker: the old
-- text is never cleared before the new text is drawn).
--
-- Two paths:
--  * inline (Neovim 0.10+): virt_text_pos='inline' pushes the rest of the line
--    to the right, so a one-line suggestion in the middle of a line reads as it
--    will after accepting; following lines go into virt_lines.
--  * overlay (0.7-0.9, or when the suggestion replaces text after the cursor):
--    the first line is drawn over the rest of the current line, padded with
--    spaces so nothing of the real text shows through, and that real rest of
--    line is re-drawn after the suggestion's last line, where it will be after
--    accepting. At the end of a line overlay and eol look the same.
local text = require('infilld.text')

local M = {}

-- Does this Neovim draw inline virtual text? (0.10+.) `has` is vim.fn.has.
function M.supports_inline(has)
  return has('nvim-0.10') == 1
end

-- opts:
--   line      the current line (bytes)
--   col       cursor byte column (0-based) where the ghost text starts
--   ghost     remaining suggestion text (may contain "\n")
--   keep_from byte column where the real text that stays after the insertion
--             starts (>= col; > col when the item replaces text after the cursor)
--   inline    use inline virtual text when possible
--   width     display width function (strdisplaywidth)
--   tabstop   for tabs in virtual text
--   hl, hl_rest, hl_hint, hint   highlight of ghost text, of re-drawn real
--             text, of the hint, and an optional trailing hint such as " (2/3)"
-- Returns { col = byte column of the mark, opts = extmark options }, or nil
-- when there is nothing to show.
function M.layout(o)
  if o.ghost == nil or o.ghost == '' then
    return nil
  end
  local hl = o.hl or 'InfilldGhost'
  local hl_rest = o.hl_rest or 'Normal'
  local hl_hint = o.hl_hint or 'InfilldGhostInfo'
  local width = o.width or function(s)
    return #s
  end
  local lines = text.split_lines(o.ghost)
  for i, l in ipairs(lines) do
    lines[i] = text.expand_tabs(l, o.tabstop)
  end
  local keep_from = math.max(o.keep_from or o.col, o.col)
  local replaced = o.line:sub(o.col + 1, keep_from)
  local kept = text.expand_tabs(o.line:sub(keep_from + 1), o.tabstop)
  local n = #lines

  local virt_lines = {}
  for i = 2, n do
    virt_lines[#virt_lines + 1] = { { lines[i], hl } }
  end

  local res = { col = o.col, opts = { hl_mode = 'combine' } }
  if o.inline and replaced == '' and (n == 1 or kept == '') then
    local first = { { lines[1], hl } }
    if o.hint then
      if n == 1 then
        first[#first + 1] = { o.hint, hl_hint }
      else
        virt_lines[#virt_lines][#virt_lines[#virt_lines] + 1] = { o.hint, hl_hint }
      end
    end
    res.opts.virt_text = first
    res.opts.virt_text_pos = 'inline'
  else
    local first = { { lines[1], hl } }
    local shown = lines[1]
    if n == 1 then
      if kept ~= '' then
        first[#first + 1] = { kept, hl_rest }
        shown = shown .. kept
      end
      if o.hint then
        first[#first + 1] = { o.hint, hl_hint }
        shown = shown .. o.hint
      end
    else
      local last = virt_lines[#virt_lines]
      if kept ~= '' then
        last[#last + 1] = { kept, hl_rest }
      end
      if o.hint then
        last[#last + 1] = { o.hint, hl_hint }
      end
    end
    -- Cover every cell of the real rest of the line.
    local cover = width(text.expand_tabs(o.line:sub(o.col + 1), o.tabstop))
    local pad = cover - width(shown)
    if pad > 0 then
      first[#first + 1] = { string.rep(' ', pad), hl_rest }
    end
    res.opts.virt_text = first
    res.opts.virt_text_pos = 'overlay'
  end
  if #virt_lines > 0 then
    res.opts.virt_lines = virt_lines
  end
  return res
end

-- Draws (or moves) the buffer's ghost mark. `mark` is the previous id or nil;
-- returns the id in use. layout == nil clears.
function M.show(api, bufnr, ns, mark, row, layout)
  if not layout then
    M.clear(api, bufnr, ns, mark)
    return nil
  end
  local opts = {}
  for k, v in pairs(layout.opts) do
    opts[k] = v
  end
  opts.id = mark
  opts.priority = 1000
  local ok, id = pcall(api.nvim_buf_set_extmark, bufnr, ns, row, layout.col, opts)
  if not ok then
    -- The position went stale between computing and drawing (e.g. a buffer
    -- change by another plugin): draw nothing rather than raise in a callback.
    M.clear(api, bufnr, ns, mark)
    return nil
  end
  return id
end

function M.clear(api, bufnr, ns, mark)
  if mark then
    pcall(api.nvim_buf_del_extmark, bufnr, ns, mark)
  end
  pcall(api.nvim_buf_clear_namespace, bufnr, ns, 0, -1)
end

-- The text a mark currently shows, as (first line, following lines joined by
-- "\n"), for tests and :checkhealth; nil without a mark.
function M.read(api, bufnr, ns, mark)
  if not mark then
    return nil
  end
  local ok, m = pcall(api.nvim_buf_get_extmark_by_id, bufnr, ns, mark, { details = true })
  if not ok or not m or #m < 3 then
    return nil
  end
  local d = m[3]
  -- only_hl: keep only chunks of these highlight groups (the suggestion itself,
  -- without re-drawn real text or padding).
  local function join(chunks, only_hl)
    local s = {}
    for _, c in ipairs(chunks or {}) do
      if not only_hl or only_hl[c[2]] then
        s[#s + 1] = c[1]
      end
    end
    return table.concat(s)
  end
  local ghost_hl = { InfilldGhost = true, InfilldGhostPartial = true }
  local rest, ghost = {}, { join(d.virt_text, ghost_hl) }
  for _, vl in ipairs(d.virt_lines or {}) do
    rest[#rest + 1] = join(vl)
    ghost[#ghost + 1] = join(vl, ghost_hl)
  end
  return {
    row = m[1],
    col = m[2],
    pos = d.virt_text_pos,
    first = join(d.virt_text),
    lines = rest,
    -- the suggestion text as shown, lines joined with "\n"
    ghost = table.concat(ghost, '\n'),
  }
end

return M
