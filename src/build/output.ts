// Build output as deploy events (API.md "Building from source"): one event per line up to 2,000, then a
// single event saying how much was cut; the last lines are kept for the failure message either way.

export const MAX_BUILD_LINES = 2000;
const TAIL = 20;

export class OutputCap {
  private count = 0;
  private readonly last: string[] = [];

  constructor(private readonly emit: (line: string) => void, private readonly max = MAX_BUILD_LINES) {}

  push(line: string): void {
    this.count++;
    this.last.push(line);
    if (this.last.length > TAIL) this.last.shift();
    if (this.count <= this.max) this.emit(line);
  }

  /** Emits the "cut" event when lines were dropped; call once when the output ends. */
  end(): void {
    if (this.count > this.max) this.emit(`output cut: ${this.count - this.max} more lines not shown (${this.count} in all)`);
    this.count = Math.min(this.count, this.max);
  }

  /** The last lines seen (at most 20). */
  tail(): string[] {
    return [...this.last];
  }
}
