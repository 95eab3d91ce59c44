/**
 * Teardown for benchmarks: steps run once, last registered first, each even if an earlier one
 * fails; SIGINT/SIGTERM abort the run (`signal`) so the main flow unwinds through its `finally`,
 * and a second signal exits at once.
 */
export interface Lifecycle {
  /** aborted on SIGINT or SIGTERM */
  signal: AbortSignal;
  /** throws if interrupted: call between phases */
  checkpoint(): void;
  onTeardown(label: string, step: () => Promise<unknown>): void;
  teardown(): Promise<void>;
}

export class InterruptedError extends Error {
  constructor(signalName: string) {
    super(`interrupted by ${signalName}`);
    this.name = 'InterruptedError';
  }
}

export const createLifecycle = (log: (message: string) => void = (message) => console.error(message)): Lifecycle => {
  const controller = new AbortController();
  const steps: { label: string; step: () => Promise<unknown> }[] = [];
  let tearingDown: Promise<void> | null = null;

  const onSignal = (signalName: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      log(`${signalName} again: exiting without cleanup (${steps.map((s) => s.label).join(', ') || 'nothing'} left)`);
      process.exit(130);
    }
    log(`${signalName}: stopping and cleaning up (again to force)`);
    controller.abort(new InterruptedError(signalName));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const teardown = () =>
    (tearingDown ??= (async () => {
      while (steps.length > 0) {
        const { label, step } = steps.pop()!;
        try {
          await step();
        } catch (error) {
          log(`cleanup: ${label} failed: ${(error as Error).message}`);
        }
      }
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    })());

  return {
    signal: controller.signal,
    checkpoint: () => controller.signal.throwIfAborted(),
    onTeardown: (label, step) => void steps.push({ label, step }),
    teardown,
  };
};

/** Runs a benchmark's main under a lifecycle, tears down whatever it started, and exits: 0, 1 on an error, 130 when interrupted. */
export const runBenchmark = async (main: (lifecycle: Lifecycle) => Promise<void>): Promise<never> => {
  const lifecycle = createLifecycle();
  let exitCode = 0;
  try {
    await main(lifecycle);
  } catch (error) {
    exitCode = error instanceof InterruptedError ? 130 : 1;
    console.error(error instanceof InterruptedError ? error.message : error);
  } finally {
    await lifecycle.teardown();
  }
  process.exit(exitCode);
};
