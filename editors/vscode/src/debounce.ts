// Debounce for automatic inline-completion requests: a request waits
// `delayMs` and goes out only if nothing newer arrived and it was not
// cancelled meanwhile. Invoked (explicit) requests skip the wait.
// Pure (timers injectable): unit-tested with node --test.

export interface Cancellable {
  isCancellationRequested: boolean;
  onCancellationRequested?: (listener: () => void) => { dispose(): void };
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class Debouncer {
  private generation = 0;
  private pending: { handle: unknown; resolve: (go: boolean) => void } | undefined;

  constructor(
    public delayMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  // Resolves true when the caller should send its request now; false when a
  // newer call superseded it or the token was cancelled during the wait.
  wait(token?: Cancellable, immediate = false): Promise<boolean> {
    this.supersede();
    const gen = ++this.generation;
    if (token?.isCancellationRequested) {
      return Promise.resolve(false);
    }
    if (immediate || this.delayMs <= 0) {
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const sub = token?.onCancellationRequested?.(() => {
        if (this.pending && gen === this.generation) {
          this.timers.clear(this.pending.handle);
          this.pending = undefined;
        }
        resolve(false);
      });
      const handle = this.timers.set(() => {
        sub?.dispose();
        if (this.pending?.handle === handle) {
          this.pending = undefined;
        }
        resolve(gen === this.generation && !token?.isCancellationRequested);
      }, this.delayMs);
      this.pending = { handle, resolve };
    });
  }

  private supersede(): void {
    if (this.pending) {
      this.timers.clear(this.pending.handle);
      const r = this.pending.resolve;
      this.pending = undefined;
      r(false);
    }
  }

  dispose(): void {
    this.supersede();
  }
}
