// When the server process dies: restart it a few times, then stop and say so (no endless loop).
// Pure, with the clock passed in.

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly maxRestarts = 3,
    private readonly windowMs = 3 * 60 * 1000,
  ) {}

  /** Records a crash at `now`; true when one more restart is allowed. */
  shouldRestart(now: number): boolean {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    return this.crashes.length <= this.maxRestarts;
  }

  /** Crashes counted in the current window. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  reset(): void {
    this.crashes = [];
  }
}
