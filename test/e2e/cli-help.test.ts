import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/service-process.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The command line answers a person who asks for help, or mistypes, without touching any database. */
describe('CLI: help, version, unknown commands', () => {
  it('--help lists every command and exits 0; --version prints the version and exits 0', async () => {
    const help = await runCli(['--help'], {});
    expect(help.code).toBe(0);
    for (const command of ['serve', 'bootstrap', 'export', 'verify', 'history', 'withdrawals', 'projections', 'chains', 'tokens', 'user', 'migrate']) expect(help.stdout).toContain(command);
    const shown = await runCli(['--version'], {});
    expect(shown).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('<command> --help prints that command’s usage and exits 0, also for a two-word command', async () => {
    const exportHelp = await runCli(['export', '--help'], {});
    expect(exportHelp.code).toBe(0);
    expect(exportHelp.stdout).toContain('Usage: ledgergate export --org <orgId>');
    const resolveHelp = await runCli(['withdrawals', 'resolve', '--help'], {});
    expect(resolveHelp.code).toBe(0);
    expect(resolveHelp.stdout).toContain('--outcome completed|failed');
  });

  it('an unknown command is named, with a suggestion, and exits non-zero', async () => {
    const typo = await runCli(['exprot'], {});
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain("unknown command 'exprot'");
    expect(typo.stderr).toContain('Did you mean export?');
  });
});
