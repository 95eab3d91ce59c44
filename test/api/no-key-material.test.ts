import fs from 'node:fs/promises';
import path from 'node:path';
import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { CHAINS } from '../../src/catalog/registry.js';
import { ACCOUNTS_PROJECTION } from '../../src/projections/accounts.js';
import { startTestService, type TestService } from '../support/api-harness.js';

const bip32 = BIP32Factory(ecc);
const ACCOUNT_PATHS = ["m/44'/60'/0'", "m/84'/0'/0'", "m/84'/1'/0'", "m/44'/195'/0'", "m/44'/144'/0'"];
const NATIVE_SLIP44: Record<string, number> = { evm: 60, bitcoin: 0, tron: 195, xrp: 144 };

/**
 * The signer's mnemonic and every private key derived from it, in the encodings a leak would take
 * (hex, WIF, xprv), computed here independently of the code under test.
 */
const keyMaterial = (mnemonic: string): string[] => {
  const seed = mnemonicToSeedSync(mnemonic);
  const root = bip32.fromSeed(seed);
  const secrets = [mnemonic, mnemonic.split(' ').slice(0, 4).join(' '), seed.toString('hex'), root.toBase58()];
  for (const accountPath of ACCOUNT_PATHS) {
    const account = root.derivePath(accountPath);
    secrets.push(account.toBase58(), Buffer.from(account.privateKey!).toString('hex'));
    for (const branch of [0, 1]) {
      for (let index = 0; index < 8; index++) {
        const child = account.derive(branch).derive(index);
        secrets.push(Buffer.from(child.privateKey!).toString('hex'), child.toWIF());
      }
    }
  }
  return secrets;
};

describe('no private key or mnemonic in the logs, the events or the read models (ARCHITECTURE invariant 10)', () => {
  let service: TestService;
  let bootstrapped: Awaited<ReturnType<TestService['bootstrap']>>;

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' }, { captureLogs: true });
    bootstrapped = await service.bootstrap('Acme', ['alice', 'bob']);
    for (const chain of CHAINS) {
      for (const userId of ['user-1', 'user-2', 'user-3']) {
        const tokenId = `${chain.id}/slip44:${NATIVE_SLIP44[chain.family]}`;
        const response = await service.request('GET', `/payments/deposit-address?${new URLSearchParams({ chainId: chain.id, tokenId, userId })}`, {
          apiKey: bootstrapped.apiKey,
        });
        expect(response.status, `${chain.id}: ${JSON.stringify(response.body)}`).toBe(200);
      }
    }
    await service.login(bootstrapped.users[0]!);
    const accountEvents = await service.infrastructure.store.readAll({ filter: { categories: ['account'] }, maxCount: 1_000 });
    await waitForProjection(service.infrastructure.db, ACCOUNTS_PROJECTION, accountEvents[accountEvents.length - 1]!.position);
  });
  afterAll(async () => service.stop());

  const everythingWritten = async (): Promise<string> => {
    const events = await service.infrastructure.store.readAll({ maxCount: 100_000 });
    const tables = await sql<{ table_schema: string; table_name: string }>`
      select table_schema, table_name from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(service.infrastructure.db);
    const rows: string[] = [];
    for (const { table_schema, table_name } of tables.rows) {
      const result = await sql<{ row: string }>`select row_to_json(t)::text as row from ${sql.table(`${table_schema}.${table_name}`)} t`.execute(service.infrastructure.db);
      rows.push(...result.rows.map((row) => row.row));
    }
    expect(service.logLines.length).toBeGreaterThan(0);
    expect(tables.rows.map((table) => table.table_name)).toEqual(expect.arrayContaining(['accounts', 'events']));
    return [...service.logLines, ...events.map((event) => JSON.stringify(event, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))), ...rows].join('\n');
  };

  it('writes none of the signer’s key material anywhere', async () => {
    const mnemonic = (await fs.readFile(path.join(service.dataDir, 'secrets', 'signer.mnemonic'), 'utf8')).trim();
    const written = await everythingWritten();
    expect(written).toContain('"user-3"'); // the accounts are in what is searched
    const leaked = keyMaterial(mnemonic).filter((secret) => written.includes(secret) || written.toLowerCase().includes(secret.toLowerCase()));
    expect(leaked).toEqual([]);
  });

  it('writes none of the people’s and the organization’s secrets as given out', async () => {
    const written = await everythingWritten();
    const given = [bootstrapped.apiKey, bootstrapped.webhookSigningSecret, ...bootstrapped.users.flatMap((user) => [user.password, user.totpSecret])];
    expect(given.filter((secret) => written.includes(secret))).toEqual([]);
  });
});
