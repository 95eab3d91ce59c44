import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of src/, top to bottom. A module may import its own layer and any layer below it,
 * never one above: arrows point down. Composition (the entry points that wire everything) is on top;
 * leaves that anything may use (logging, error type, small helpers) at the bottom.
 */
const LAYERS: readonly { name: string; holds: readonly string[] }[] = [
  { name: 'composition', holds: ['server.ts', 'infrastructure.ts', 'cli', 'config'] },
  { name: 'http', holds: ['api', 'console'] },
  { name: 'processes', holds: ['processes'] },
  { name: 'audit', holds: ['audit'] },
  { name: 'projections', holds: ['projections'] },
  { name: 'webhooks', holds: ['webhooks'] },
  { name: 'application', holds: ['application'] },
  { name: 'chains', holds: ['chains'] },
  { name: 'eventstore', holds: ['eventstore'] },
  { name: 'db', holds: ['db'] },
  { name: 'security', holds: ['security'] },
  { name: 'domain', holds: ['domain'] },
  { name: 'catalog', holds: ['catalog'] },
  { name: 'leaves', holds: ['lib', 'log.ts', 'errors.ts', 'observability'] },
  // the typed HTTP client (ledgergate/client): stands alone, imports nothing of the service
  { name: 'client', holds: ['client'] },
];

const SRC = resolve(import.meta.dirname, '../../src');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });

/** The layer index of a file under src/, by its first path segment. */
const layerOf = (file: string): number => {
  const top = relative(SRC, file).split('/')[0]!;
  const index = LAYERS.findIndex((layer) => layer.holds.includes(top));
  if (index < 0) throw new Error(`src/${top} belongs to no layer: add it to LAYERS in ${relative(process.cwd(), import.meta.filename)}`);
  return index;
};

/** Relative imports of a file (static, dynamic and type-only), as absolute .ts paths. */
const importsOf = (file: string): string[] =>
  ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts'));

describe('the layout: imports point down the layers', () => {
  const files = sourceFiles(SRC);

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('every folder of src/ has a layer', () => {
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it('no module imports a layer above its own', () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(SRC + '/') && layerOf(target) < layerOf(file))
        .map((target) => `${relative(SRC, file)} (${LAYERS[layerOf(file)]!.name}) imports ${relative(SRC, target)} (${LAYERS[layerOf(target)]!.name})`),
    );
    expect(upward).toEqual([]);
  });

  it('no import cycle between files', () => {
    const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC + '/'))]));
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
