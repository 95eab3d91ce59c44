import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

// the TypeScript sources, or (running from dist/, compiled at install) their JavaScript beside this file
const ENTRY = ['main.ts', 'main.js'].map((name) => path.join(import.meta.dirname, 'browser', name)).find((file) => existsSync(file)) ?? path.join(import.meta.dirname, 'browser', 'main.ts');

/**
 * The console's browser client, bundled in memory by esbuild from its TypeScript sources: no
 * build step beyond `npm install`, nothing written to disk, nothing fetched from elsewhere.
 */
export const bundleConsoleClient = async (): Promise<string> => {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('esbuild produced no console bundle');
  return output.text;
};
