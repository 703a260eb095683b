// infilld/didChangeCursor (docs/PROTOCOL.md): tells the daemon where the
// cursor is, so that it works ahead there (idle prefill) — LSP itself sends
// no cursor moves, so without it a newly opened file is never prefilled.
// Debounced: the notification goes out `delayMs` after the last move, and
// not again for the same document version and position. Pure (timers and
// the sender injectable): unit-tested with node --test.
import { Timers, realTimers } from './debounce';

export interface CursorParams {
  textDocument: { uri: string; version: number };
  position: { line: number; character: number };
}

export class CursorNotifier {
  private handle: unknown;
  private due: CursorParams | undefined;
  private lastKey = '';

  constructor(
    private readonly send: (p: CursorParams) => void,
    public delayMs = 100,
    private readonly timers: Timers = realTimers,
  ) {}

  // The cursor is at (line, character) of uri at version; a newer call
  // replaces a pending one.
  moved(uri: string, version: number, line: number, character: number): void {
    this.cancel();
    this.due = { textDocument: { uri, version }, position: { line, character } };
    this.handle = this.timers.set(() => this.fire(), this.delayMs);
  }

  // Forget what was sent (a new daemon knows nothing yet).
  reset(): void {
    this.cancel();
    this.lastKey = '';
  }

  cancel(): void {
    if (this.handle !== undefined) {
      this.timers.clear(this.handle);
      this.handle = undefined;
    }
    this.due = undefined;
  }

  dispose(): void {
    this.cancel();
  }

  private fire(): void {
    this.handle = undefined;
    const p = this.due;
    this.due = undefined;
    if (!p) {
      return;
    }
    const key = `${p.textDocument.uri}\n${p.textDocument.version}\n${p.position.line}:${p.position.character}`;
    if (key === this.lastKey) {
      return;
    }
    this.lastKey = key;
    this.send(p);
  }
}
