#!/usr/bin/env node
// The ledgergate command. TypeScript sources run through tsx's loader (a runtime dependency),
// so `npx ledgergate …` and `npm start` need no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
