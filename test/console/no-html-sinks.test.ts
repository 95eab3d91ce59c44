import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const BROWSER = path.resolve(import.meta.dirname, '../../src/console/browser');
const SINKS = /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(/;

/** CONTRACT §10: user and integrator strings are text. The console's code has no HTML sink at all. */
describe('the console’s browser code', () => {
  const files = readdirSync(BROWSER, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));

  it('is found', () => {
    expect(files).toContain('dom.ts');
  });

  it('never parses a string as HTML or code', () => {
    const offending = files.flatMap((name) =>
      readFileSync(path.join(BROWSER, name), 'utf8')
        .split('\n')
        .flatMap((line, index) => (SINKS.test(line) && !line.trim().startsWith('*') && !line.trim().startsWith('//') ? [`${name}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(offending).toEqual([]);
  });
});
