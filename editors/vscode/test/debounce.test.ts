import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cancellable, Debouncer } from '../src/debounce';
import { FakeTimers } from './fake_timers';

class Token implements Cancellable {
  isCancellationRequested = false;
  private listeners: (() => void)[] = [];
  onCancellationRequested(l: () => void): { dispose(): void } {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    this.listeners.forEach((l) => l());
  }
}

test('a lone request goes out after the delay, not before', async () => {
  const t = new FakeTimers();
  const d = new Debouncer(100, t);
  let done: boolean | undefined;
  const p = d.wait(new Token()).then((v) => (done = v));
  t.advance(99);
  await Promise.resolve();
  assert.equal(done, undefined);
  t.advance(1);
  await p;
  assert.equal(done, true);
});

test('a newer request supersedes the older one', async () => {
  const t = new FakeTimers();
  const d = new Debouncer(100, t);
  const first = d.wait(new Token());
  t.advance(50);
  const second = d.wait(new Token());
  assert.equal(await first, false);
  assert.equal(t.pending, 1);
  t.advance(100);
  assert.equal(await second, true);
});

test('cancellation during the wait resolves false and clears the timer', async () => {
  const t = new FakeTimers();
  const d = new Debouncer(100, t);
  const tok = new Token();
  const p = d.wait(tok);
  tok.cancel();
  assert.equal(await p, false);
  assert.equal(t.pending, 0);
});

test('invoked requests, zero delay and already-cancelled tokens', async () => {
  const t = new FakeTimers();
  const d = new Debouncer(100, t);
  assert.equal(await d.wait(new Token(), true), true);
  const tok = new Token();
  tok.cancel();
  assert.equal(await d.wait(tok), false);
  d.delayMs = 0;
  assert.equal(await d.wait(new Token()), true);
  assert.equal(t.pending, 0);
});

test('dispose releases a waiting request', async () => {
  const t = new FakeTimers();
  const d = new Debouncer(100, t);
  const p = d.wait(new Token());
  d.dispose();
  assert.equal(await p, false);
});
