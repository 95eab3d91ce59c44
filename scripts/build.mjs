// `npm install` runs this (the `prepare` script): src/ compiled once to dist/, file by file, so a
// `ledgergate` call starts without compiling TypeScript (bin/ledgergate.mjs runs dist/ while it is
// as new as src/, and src/ through tsx otherwise). It also writes the typed client's declarations
// (dist/client/*.d.ts) for the package's `ledgergate/client` export.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUILD_INFO, newestSourceMs } from '../bin/build-info.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

const filesUnder = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(file) : [file];
  });

if (!fs.existsSync(src)) {
  // an image installing its dependencies before it copies the sources: it runs this again after
  console.error('ledgergate: no src/ yet, nothing to compile');
  process.exit(0);
}
const started = Date.now();
const sourcesNewestMs = newestSourceMs(src);
fs.rmSync(dist, { recursive: true, force: true });
const all = filesUnder(src).filter((file) => !file.endsWith('.test.ts'));
const typescript = all.filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'));
await build({
  entryPoints: typescript,
  outdir: dist,
  outbase: src,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: path.join(root, 'tsconfig.json'),
  logLevel: 'warning',
});
// what the code reads beside itself (pages, styles) goes along
for (const file of all.filter((file) => !typescript.includes(file))) {
  const target = path.join(dist, path.relative(src, file));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(file, target);
}
// declarations need TypeScript, a dev dependency: an install without dev tools (an image) has no use for them
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
if (fs.existsSync(tsc)) execFileSync(
  process.execPath,
  [
    tsc,
    path.join(src, 'client/index.ts'),
    ...['--declaration', '--emitDeclarationOnly', '--outDir', path.join(dist, 'client')],
    ...['--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--strict', '--skipLibCheck', '--types', 'node'],
  ],
  { stdio: 'inherit', cwd: root },
);
fs.writeFileSync(path.join(dist, BUILD_INFO), JSON.stringify({ sourcesNewestMs }) + '\n');
console.error(`ledgergate: src/ compiled to dist/ (${typescript.length} files) in ${Date.now() - started} ms`);
