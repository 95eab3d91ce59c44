#!/usr/bin/env node
// The ledgergate command. It runs dist/ (src/ compiled once at `npm install`, see scripts/build.mjs)
// while that is as new as src/; otherwise, in a checkout being edited, it runs the TypeScript
// sources through tsx's loader (a runtime dependency). Either way no build step is needed.
import { fileURLToPath } from 'node:url';
import { builtIsFresh } from './build-info.mjs';

if (builtIsFresh(fileURLToPath(new URL('..', import.meta.url)))) {
  await import('../dist/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
