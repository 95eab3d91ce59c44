import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli } from '../support/service-process.js';

const USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';

/** `ledgergate chains|tokens enable|disable` as an operator runs them. */
describe('CLI: chains and tokens enable/disable', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let orgId: string;

  beforeAll(async () => {
    database = await createTestDatabase('cli');
    env = await processEnvironment(database, 'cli');
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], env);
    orgId = (JSON.parse(bootstrap.stdout) as { organization: { id: string } }).organization.id;
  });
  afterAll(async () => {
    await fs.rm(env.DATA_DIR!, { recursive: true, force: true });
    await database.drop();
  });

  const switches = async () =>
    (await database.pool.query('select disabled_chain_ids, disabled_token_ids from organizations where id = $1', [orgId])).rows[0] as Record<string, string[]>;

  it('switches a chain off and on, printing the chain as the organization sees it', async () => {
    const off = await runCli(['chains', 'disable', '--org', orgId, '--chain', 'eip155:137'], env);
    expect(off).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(off.stdout)).toEqual({
      orgId,
      chain: {
        id: 'eip155:137',
        name: 'Polygon',
        namespace: 'eip155',
        reference: '137',
        enabled: false,
        isTestnet: false,
        properties: { nativeCurrency: 'POL', decimals: 18, confirmations: 64 },
      },
    });
    expect(await switches()).toEqual({ disabled_chain_ids: ['eip155:137'], disabled_token_ids: [] });

    const on = await runCli(['chains', 'enable', '--org', orgId, '--chain', 'eip155:137'], env);
    expect(on.code).toBe(0);
    expect((JSON.parse(on.stdout) as { chain: { enabled: boolean } }).chain.enabled).toBe(true);
    expect(await switches()).toEqual({ disabled_chain_ids: [], disabled_token_ids: [] });
  });

  it('switches a token off, printing it disabled', async () => {
    const off = await runCli(['tokens', 'disable', '--org', orgId, '--token', USDT], env);
    expect(off).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(off.stdout)).toMatchObject({ orgId, token: { id: USDT, symbol: 'USDT', enabled: false } });
    expect(await switches()).toEqual({ disabled_chain_ids: [], disabled_token_ids: [USDT] });
  });

  it('refuses an unsupported chain, an unknown token and an unknown organization, changing nothing', async () => {
    expect(await runCli(['chains', 'disable', '--org', orgId, '--chain', 'eip155:2'], env)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'ledgergate: chain eip155:2 is not supported\n',
    });
    expect(await runCli(['tokens', 'disable', '--org', orgId, '--token', 'eip155:1/erc20:0x01'], env)).toMatchObject({
      code: 1,
      stderr: 'ledgergate: token eip155:1/erc20:0x01 is not supported\n',
    });
    expect(await runCli(['chains', 'disable', '--org', '00000000-0000-0000-0000-000000000000', '--chain', 'eip155:1'], env)).toMatchObject({
      code: 1,
      stderr: 'ledgergate: No such organization\n',
    });
    expect(await switches()).toEqual({ disabled_chain_ids: [], disabled_token_ids: [USDT] });
  });
});
