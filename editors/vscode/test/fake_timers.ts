import { Timers } from '../src/debounce';

// A manual clock: timers fire only when advance() passes their due time.
export class FakeTimers implements Timers {
  now = 0;
  private next = 1;
  private due = new Map<number, { at: number; fn: () => void }>();
  set(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.due.set(id, { at: this.now + ms, fn });
    return id;
  }
  clear(h: unknown): void {
    this.due.delete(h as number);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const [id, t] of [...this.due].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at <= this.now) {
        this.due.delete(id);
        t.fn();
      }
    }
  }
  get pending(): number {
    return this.due.size;
  }
}
