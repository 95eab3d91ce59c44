/**
 * Progress of long work (an export, a rebuild) on stderr, at most once a second, so stdout stays
 * the command's answer. Shown on a terminal, as git does, or when LEDGERGATE_PROGRESS=1 asks for it
 * (a script that wants to log it); silent otherwise, so a pipeline's stderr holds only errors.
 */
export interface Progress {
  /** the work so far: written when a second has passed since the last line */
  update(text: () => string): void;
  /** the last line, always written when progress is shown */
  done(text: string): void;
}

const INTERVAL_MS = 1_000;

export const progressOnStderr = (label: string, now: () => number = Date.now): Progress => {
  const shown = process.stderr.isTTY === true || process.env.LEDGERGATE_PROGRESS === '1';
  let last = now();
  return {
    update: (text) => {
      if (!shown || now() - last < INTERVAL_MS) return;
      last = now();
      process.stderr.write(`${label}: ${text()}\n`);
    },
    done: (text) => {
      if (shown) process.stderr.write(`${label}: ${text}\n`);
    },
  };
};
