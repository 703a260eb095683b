import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CursorNotifier, CursorParams } from '../src/cursor';
import { FakeTimers } from './fake_timers';

function setup(): { n: CursorNotifier; t: FakeTimers; sent: CursorParams[] } {
  const t = new FakeTimers();
  const sent: CursorParams[] = [];
  return { n: new CursorNotifier((p) => sent.push(p), 100, t), t, sent };
}

test('a cursor move is sent after the quiet delay, with uri, version and position', () => {
  const { n, t, sent } = setup();
  n.moved('file:///a.py', 3, 4, 8);
  t.advance(99);
  assert.equal(sent.length, 0);
  t.advance(1);
  assert.deepEqual(sent, [{ textDocument: { uri: 'file:///a.py', version: 3 }, position: { line: 4, character: 8 } }]);
});

test('moves within the delay send only the last one', () => {
  const { n, t, sent } = setup();
  n.moved('file:///a.py', 1, 0, 0);
  t.advance(50);
  n.moved('file:///a.py', 1, 0, 1);
  t.advance(50);
  n.moved('file:///a.py', 2, 0, 2);
  t.advance(100);
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].position, { line: 0, character: 2 });
  assert.equal(sent[0].textDocument.version, 2);
  assert.equal(t.pending, 0);
});

test('the same document version and position is not sent twice; reset forgets it', () => {
  const { n, t, sent } = setup();
  n.moved('file:///a.py', 1, 2, 3);
  t.advance(100);
  n.moved('file:///a.py', 1, 2, 3);
  t.advance(100);
  assert.equal(sent.length, 1);
  n.moved('file:///a.py', 2, 2, 3); // an edit: a new version
  t.advance(100);
  assert.equal(sent.length, 2);
  n.moved('file:///b.py', 2, 2, 3); // another document
  t.advance(100);
  assert.equal(sent.length, 3);
  n.reset();
  n.moved('file:///b.py', 2, 2, 3);
  t.advance(100);
  assert.equal(sent.length, 4);
});

test('cancel and dispose drop a pending notification', () => {
  const { n, t, sent } = setup();
  n.moved('file:///a.py', 1, 0, 0);
  n.cancel();
  t.advance(200);
  n.moved('file:///a.py', 1, 0, 1);
  n.dispose();
  t.advance(200);
  assert.equal(sent.length, 0);
  assert.equal(t.pending, 0);
});
