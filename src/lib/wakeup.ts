/**
 * A wake-up a loop can wait on. A wake that arrives while the loop is busy is remembered, so the
 * loop's next wait returns at once: nothing signalled between `reset()` and `wait()` is lost.
 */
export class Wakeup {
  private signalled = false;
  private release: (() => void) | null = null;

  wake(): void {
    this.signalled = true;
    this.release?.();
  }

  /** forget earlier wakes: call before reading the state a wake would announce */
  reset(): void {
    this.signalled = false;
  }

  wait(timeoutMs: number): Promise<void> {
    if (this.signalled) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.release = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      this.release = done;
    });
  }
}
