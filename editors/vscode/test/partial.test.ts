import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acceptedLength, nextLine, nextWord, splitAccept, typeThrough } from '../src/partial';

const TEXT = 'alpha_beta(gamma) + delta\n    return omega';

test('next word: identifier run, punctuation run, line break with indentation', () => {
  assert.equal(nextWord(TEXT), 'alpha_beta');
  assert.equal(nextWord('(gamma) + delta'), '(');
  assert.equal(nextWord(') + delta'), ')');
  assert.equal(nextWord(' + delta'), ' +');
  assert.equal(nextWord(' delta\n'), ' delta');
  assert.equal(nextWord('\n    return omega'), '\n    ');
  assert.equal(nextWord('\r\n\treturn'), '\r\n\t');
  assert.equal(nextWord('   '), '   ');
  assert.equal(nextWord('héllo wörld'), 'héllo');
  assert.equal(nextWord(''), '');
});

test('next line: up to the break, or the break plus the next line', () => {
  assert.equal(nextLine(TEXT), 'alpha_beta(gamma) + delta');
  assert.equal(nextLine('\n    return omega'), '\n    return omega');
  assert.equal(nextLine('\na\nb'), '\na');
  assert.equal(nextLine('tail'), 'tail');
  assert.equal(nextLine(''), '');
});

test('word, word, line, all takes the whole text with cumulative lengths', () => {
  let rest = TEXT;
  const lengths: number[] = [];
  for (const kind of ['word', 'word', 'line', 'all'] as const) {
    const { taken, left } = splitAccept(rest, kind);
    assert.equal(taken + left, rest);
    lengths.push(acceptedLength(TEXT, rest, taken));
    rest = left;
  }
  assert.equal(rest, '');
  assert.deepEqual(lengths, [10, 11, 25, 42]);
});

test('acceptedLength counts UTF-16 units (astral characters are 2)', () => {
  const text = '😀x';
  const { taken } = splitAccept(text, 'all');
  assert.equal(acceptedLength(text, text, taken), 3);
});

test('typing-through keeps the rest while typed text matches', () => {
  assert.equal(typeThrough(TEXT, 'alp'), 'ha_beta(gamma) + delta\n    return omega');
  assert.equal(typeThrough(TEXT, ''), TEXT);
  assert.equal(typeThrough(TEXT, 'alX'), undefined);
});
