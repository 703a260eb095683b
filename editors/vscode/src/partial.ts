// Partial accept: how much of a suggestion "next word" and "next line" take,
// the same rules as the Neovim plugin (editors/nvim/lua/infilld/text.lua), and
// the acceptedLength reported with infilld.accepted (UTF-16 code units from
// the start of insertText; a JS string's length already counts those).
// Pure: unit-tested with node --test.

const WORD = /^[ \t]*[\p{L}\p{N}_]+/u;
const PUNCT = /^[ \t]*[^\p{L}\p{N}_\s]+/u;

export function nextWord(s: string): string {
  if (s === '') {
    return '';
  }
  const nl = /^\r?\n[ \t]*/.exec(s);
  if (nl) {
    return nl[0];
  }
  const w = WORD.exec(s) ?? PUNCT.exec(s) ?? /^[ \t]+/.exec(s);
  return w ? w[0] : s.slice(0, 1);
}

export function nextLine(s: string): string {
  if (s === '') {
    return '';
  }
  const lead = /^\r?\n/.exec(s)?.[0] ?? '';
  const nl = s.indexOf('\n', lead.length);
  return nl < 0 ? s : s.slice(0, nl);
}

export type AcceptKind = 'word' | 'line' | 'all';

// Splits the not-yet-accepted rest of a suggestion into (taken, left).
export function splitAccept(rest: string, kind: AcceptKind): { taken: string; left: string } {
  const taken = kind === 'all' ? rest : kind === 'word' ? nextWord(rest) : nextLine(rest);
  return { taken, left: rest.slice(taken.length) };
}

export function acceptedLength(insertText: string, rest: string, taken: string): number {
  return insertText.length - rest.length + taken.length;
}

// Typing-through: if the user typed `typed` since the suggestion was shown and
// it is a prefix of the suggestion's rest, what remains; else undefined.
export function typeThrough(rest: string, typed: string): string | undefined {
  return rest.startsWith(typed) ? rest.slice(typed.length) : undefined;
}
