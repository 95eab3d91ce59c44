import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SKIPPED_FOLDERS = new Set(['node_modules', '.git', '.data', 'dist', 'coverage']);

const markdownFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED_FOLDERS.has(name) ? [] : markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });

/** Links in markdown text, outside fenced code blocks: [text](target) */
const linksOf = (text: string): string[] =>
  text
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .flatMap((prose) => [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsIn = (file: string): Set<string> =>
  new Set(
    readFileSync(file, 'utf8')
      .split(/^```.*$/m)
      .filter((_, index) => index % 2 === 0)
      .flatMap((prose) => [...prose.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => anchorOf(match[1]!))),
  );

describe('documentation links', () => {
  const files = markdownFiles(ROOT);

  it('finds the docs', () => {
    expect(files.map((file) => relative(ROOT, file))).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md']));
  });

  it('every relative link resolves to a file (and heading) inside the repository', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const link of linksOf(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: …
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : resolve(dirname(file), path);
        const where = `${relative(ROOT, file)} → ${link}`;
        if (relative(ROOT, target).startsWith('..')) broken.push(`${where}: leaves the repository`);
        else if (!existsSync(target)) broken.push(`${where}: no such file`);
        else if (anchor && target.endsWith('.md') && !anchorsIn(target).has(anchor)) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });
});
