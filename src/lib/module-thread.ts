import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module at `url`, the compiled JavaScript as it is or, in a checkout
 * run from its TypeScript sources (tests, bin/ledgergate.mjs before a build), the source through
 * tsx's loader, registered in the new thread before the module is imported.
 */
export const startModuleThread = (url: URL, options: WorkerOptions): Worker => {
  if (!url.pathname.endsWith('.ts')) return new Worker(fileURLToPath(url), options);
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${loader}).then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`, { ...options, eval: true });
};
