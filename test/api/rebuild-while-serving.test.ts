import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmDeposit, recordDeposit, type DepositServices } from '../../src/application/deposits.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { allProjections } from '../../src/projections/registry.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { observed, ownerOf } from '../support/deposits.js';
import { tableHash } from '../support/stream-totals-projection.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const XRP = 'xrpl:mainnet';

/**
 * ISSUE 7: `projections rebuild` while the API serves. Every projection is rebuilt from position 0
 * while clients read every list endpoint: no request fails, no answer shows a half-built table, and
 * the rebuilt tables hash the same as the live ones.
 */
describe('rebuilding every projection while the API serves', () => {
  let service: TestService;
  let apiKey: string;
  let orgId: string;

  /** every projection holds every event of its filter appended so far */
  const settle = async () => {
    const { store, db } = service.infrastructure;
    for (const projection of allProjections()) {
      for (let tries = 0; ; tries++) {
        const checkpoint = BigInt((await db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection.name).executeTakeFirst())?.position ?? '0');
        if ((await store.readAll({ afterPosition: checkpoint, filter: projection.filter, maxCount: 1 })).length === 0) break;
        if (tries > 3000) throw new Error(`projection ${projection.name} did not catch up`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  const hashes = async () => {
    const tables = allProjections().flatMap((projection) => projection.tables);
    return Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await tableHash(service.infrastructure.db, table)] as const)));
  };

  beforeAll(async () => {
    // the chain workers stay idle: no block is mined, so nothing but this test writes
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000', RATE_LIMIT_PER_MINUTE: '100000' });
    const acme = await service.bootstrap('Acme', ['alice', 'bob']);
    apiKey = acme.apiKey;
    orgId = acme.organization.id;
    const services: DepositServices = { store: service.infrastructure.store, clock: service.now };
    for (let user = 0; user < 30; user++) {
      const chainId = user % 2 === 0 ? BITCOIN : XRP;
      const response = await service.request('GET', `/payments/deposit-address?${new URLSearchParams({ chainId, tokenId: `${chainId}/slip44:${chainId === XRP ? 144 : 0}`, userId: `user-${user}` })}`, { apiKey });
      expect(response.status).toBe(200);
      const { address, destinationTag } = (response.body!.address as { properties: { address: string; destinationTag?: string } }).properties;
      const transfer = observed(user, {
        chainId,
        txHash: `${user.toString(16).padStart(64, 'a')}`,
        to: address,
        destinationTag: destinationTag === undefined ? null : Number(destinationTag),
        amount: 5_000_000n + BigInt(user),
      });
      await recordDeposit(services, transfer, ownerOf(orgId, `user-${user}`, chainId), { actor: 'test' });
      if (user % 3 !== 0) await confirmDeposit(services, transfer, 6, { actor: 'test' });
    }
    await settle();
  });
  afterAll(async () => service.stop());

  it('answers every request in full while rebuilding, and ends with identical tables', async () => {
    const live = await hashes();
    const paths = ['/accounts?limit=1000', '/payments?limit=1000', '/portfolio', '/withdrawals?limit=1000', '/organisation', '/webhooks/deliveries?limit=1000'];
    const sizeOf = (body: Record<string, unknown> | null) =>
      JSON.stringify(Object.fromEntries(Object.entries(body ?? {}).map(([key, value]) => [key, Array.isArray(value) ? value.length : typeof value])));
    const before = await Promise.all(paths.map(async (path) => sizeOf((await service.request('GET', path, { apiKey })).body)));

    let rebuilding = true;
    const answers: { path: string; status: number; size: string }[] = [];
    const clients = Array.from({ length: 4 }, async () => {
      while (rebuilding) {
        for (const path of paths) {
          const response = await service.request('GET', path, { apiKey });
          answers.push({ path, status: response.status, size: sizeOf(response.body) });
        }
      }
    });
    for (const projection of allProjections()) await rebuildProjection(service.infrastructure.db, service.infrastructure.store, projection);
    rebuilding = false;
    await Promise.all(clients);

    expect(answers.length).toBeGreaterThan(paths.length);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    // every answer is a whole table: the same list sizes as before the rebuild
    for (const [index, path] of paths.entries()) {
      expect(new Set(answers.filter((answer) => answer.path === path).map((answer) => answer.size)), path).toEqual(new Set([before[index]]));
    }
    await settle();
    expect(await hashes()).toEqual(live);
  });
});
