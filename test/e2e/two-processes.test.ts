import ecc from '@bitcoinerlab/secp256k1';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChain } from '../../src/catalog/registry.js';
import { addressCodecs } from '../../src/chains/families.js';
import { createDevnet } from '../../src/chains/devnet/index.js';
import { XRP_FEE_DROPS } from '../../src/chains/devnet/fees.js';
import { createDatabase } from '../../src/db/database.js';
import { createLogger } from '../../src/log.js';
import { allProjections } from '../../src/projections/registry.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { callWithKey } from '../support/service-calls.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from '../support/webhook-receiver.js';

const XRP = 'xrpl:mainnet'; // 1 confirmation
const XRP_NATIVE = `${XRP}/slip44:144`;
const DEPOSITS = 12;
const DEPOSIT = 50_000_000n;
const WITHDRAWALS = 8;
const WITHDRAWAL = 1_000_000n;
/** CONTRACT §11: within seconds; the bound this test holds the survivor to */
const TAKEOVER_BOUND_MS = 15_000;

const externalXrpAddress = () => {
  const chain = findChain(XRP)!;
  let publicKey: Uint8Array | null = null;
  while (!publicKey) publicKey = ecc.pointFromScalar(randomBytes(32), true);
  return addressCodecs[chain.family].addressFromPublicKey(publicKey, chain.network);
};

/** The worker a log line says became active in its process, as `kind:name`; null for other lines. */
const activeWorker = (record: Record<string, unknown>): string | null => {
  if (record.msg === 'projection: active') return `projection:${String(record.projection)}`;
  if (record.msg === 'chain watcher: active') return `watcher:${String(record.watcher)}`;
  if (record.msg === 'sweeper: active') return `sweeper:${String(record.sweeper)}`;
  if (record.msg === 'withdrawal-processor: active') return `withdrawal-processor:${String(record.withdrawalProcessor)}`;
  return null;
};
const activeIn = (service: ServiceProcess, afterMs = 0) =>
  new Map(service.logs.flatMap((record) => {
    const worker = activeWorker(record);
    const at = Date.parse(String(record.time));
    return worker && at >= afterMs ? [[worker, at] as const] : [];
  }));

/**
 * CONTRACT §11, several processes: two `serve` processes on one DATABASE_URL share deposits,
 * withdrawals and webhooks; one is killed (SIGKILL) mid-load, and the survivor takes every
 * projection, watcher, sweeper and processor over, with nothing lost or done twice.
 */
describe('two processes on one database, one killed mid-load', () => {
  let database: TestDatabase;
  let env: Awaited<ReturnType<typeof processEnvironment>>;
  let receiver: WebhookReceiver;
  let first: ServiceProcess;
  let second: ServiceProcess;
  let apiKey: string;

  beforeAll(async () => {
    database = await createTestDatabase('two_processes');
    receiver = await startWebhookReceiver(() => 200);
    env = await processEnvironment(database, 'two', { DEVNET_BLOCK_TIME_MS: '300', WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200', RATE_LIMIT_PER_MINUTE: '1000000' });
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--webhook-url', receiver.url, '--json'], env);
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    apiKey = (JSON.parse(bootstrap.stdout) as { apiKey: string }).apiKey;
    first = await startServiceProcess(env);
    second = await startServiceProcess(env);
  }, 90_000);
  afterAll(async () => {
    first?.child.kill('SIGKILL');
    second?.child.kill('SIGTERM');
    await second?.exited;
    await receiver?.close();
    await fs.rm(env.DATA_DIR, { recursive: true, force: true });
    await database?.drop();
  });

  const call = (service: ServiceProcess, method: 'GET' | 'POST', url: string, body?: unknown) => callWithKey(service, apiKey, method, url, body);
  const available = async (service: ServiceProcess) => {
    const { balances } = (await call(service, 'GET', '/portfolio')) as { balances: { tokenId: string; available: string; pending: string }[] };
    return BigInt(balances.find((entry) => entry.tokenId === XRP_NATIVE)?.available ?? '0');
  };

  it('the survivor takes every worker over within the bound; nothing lost, nothing twice; the ledger equals the chain', async () => {
    const workers = allProjections().map((projection) => `projection:${projection.name}`);
    // before the kill: the first process, started first, runs the workers
    await waitUntil(() => workers.every((worker) => activeIn(first).has(worker)) && activeIn(first).has(`watcher:${XRP}`) && activeIn(first).has(`withdrawal-processor:${XRP}`), 20_000, 'the first process active');
    // each worker is active in one process at a time: the second stands by for what the first runs
    const running = [...activeIn(first).keys()];
    expect(running.filter((worker) => activeIn(second).has(worker))).toEqual([]);

    const services = [first, second];
    const { address } = (await call(first, 'GET', `/payments/deposit-address?${new URLSearchParams({ chainId: XRP, tokenId: XRP_NATIVE, userId: 'user-0' })}`)) as { address: { properties: { address: string } } };
    const orgAddress = address.properties.address;
    const deposit = async (index: number) => {
      const service = services[index % 2]!.child.exitCode === null && services[index % 2]!.child.signalCode === null ? services[index % 2]! : second;
      const user = `user-${index}`;
      const { address: target } = (await call(service, 'GET', `/payments/deposit-address?${new URLSearchParams({ chainId: XRP, tokenId: XRP_NATIVE, userId: user })}`)) as { address: { properties: { address: string; destinationTag: string } } };
      await call(service, 'POST', '/devnet/deposits', { chainId: XRP, tokenId: XRP_NATIVE, toAddress: target.properties.address, amount: DEPOSIT.toString(), destinationTag: Number(target.properties.destinationTag) });
    };
    const recipients: string[] = [];
    const withdrawalIds: string[] = [];
    const withdraw = async (service: ServiceProcess, index: number) => {
      const recipient = externalXrpAddress();
      recipients.push(recipient);
      const { withdrawal } = (await call(service, 'POST', '/withdrawals', { chainId: XRP, tokenId: XRP_NATIVE, amount: WITHDRAWAL.toString(), recipient, reference: `ref-${index}` })) as { withdrawal: { id: string } };
      withdrawalIds.push(withdrawal.id);
    };

    // load through both: deposits, then withdrawals once there is something to pay them from
    for (let index = 0; index < DEPOSITS / 2; index++) await deposit(index);
    await waitUntil(async () => (await available(second)) > WITHDRAWAL * BigInt(WITHDRAWALS) * 2n, 30_000, 'the first deposits credited');
    for (let index = 0; index < WITHDRAWALS / 2; index++) await withdraw(services[index % 2]!, index);

    // mid-load: deposits unconfirmed, withdrawals queued, webhooks in the outbox
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await first.exited;
    for (let index = DEPOSITS / 2; index < DEPOSITS; index++) await deposit(index);
    for (let index = WITHDRAWALS / 2; index < WITHDRAWALS; index++) await withdraw(second, index);

    // every worker the first ran is active in the second within the bound
    await waitUntil(() => running.every((worker) => activeIn(second, killedAt).has(worker)), TAKEOVER_BOUND_MS + 5_000, 'the second process to take every worker over');
    const takenOver = activeIn(second, killedAt);
    const takeoverMs = Math.max(...running.map((worker) => takenOver.get(worker)! - killedAt));
    process.stdout.write(`takeover after SIGKILL: ${takeoverMs} ms for ${running.length} workers (${running.join(', ')})\n`);
    expect(takeoverMs).toBeLessThan(TAKEOVER_BOUND_MS);

    // every withdrawal in exactly one terminal state, every deposit credited once
    const db = createDatabase(database.pool);
    await waitUntil(
      async () => (await db.selectFrom('withdrawals').select('status').execute()).filter((row) => row.status === 'Completed').length === WITHDRAWALS,
      40_000,
      'every withdrawal completed',
    );
    const expectedAvailable = DEPOSIT * BigInt(DEPOSITS) - (WITHDRAWAL + XRP_FEE_DROPS) * BigInt(WITHDRAWALS);
    await waitUntil(async () => (await available(second)) === expectedAvailable, 30_000, `available ${expectedAvailable}`);
    const terminal = await sql<{ stream_id: string; n: string }>`
      select stream_id, count(*) as n from eventstore.events
       where type in ('WithdrawalCompleted', 'WithdrawalFailed', 'WithdrawalCancelled') group by stream_id`.execute(db);
    expect(terminal.rows.map((row) => Number(row.n))).toEqual(Array.from({ length: WITHDRAWALS }, () => 1));
    const credited = await sql<{ n: string }>`select count(*) as n from eventstore.events where type = 'DepositCredited'`.execute(db);
    expect(Number(credited.rows[0]!.n)).toBe(DEPOSITS);
    expect(await db.selectFrom('deposits').select('status').execute()).toEqual(Array.from({ length: DEPOSITS }, () => ({ status: 'confirmed' })));

    // the ledger equals the chain: the organization's address holds what the ledger says; each recipient its amount
    const chain = createDevnet({ db, clock: () => new Date(), blockTimeMs: 3_600_000, logger: createLogger('silent') }).gateway(XRP);
    expect(await chain.balance(orgAddress, 'native')).toBe(expectedAvailable);
    for (const recipient of recipients) expect(await chain.balance(recipient, 'native')).toBe(WITHDRAWAL);

    // every webhook delivered at least once, under its one stable id
    await waitUntil(async () => (await db.selectFrom('webhook_deliveries').select('status').where('status', '!=', 'delivered').execute()).length === 0, 50_000, 'every webhook delivered');
    const deliveries = await db.selectFrom('webhook_deliveries').select(['id', 'body']).execute();
    expect(deliveries.length).toBeGreaterThanOrEqual(DEPOSITS + 3 * WITHDRAWALS);
    const received = new Map<string, Set<string>>();
    for (const request of receiver.received) {
      const id = String(request.headers['x-webhook-id']);
      received.set(id, (received.get(id) ?? new Set()).add(request.body.toString('utf8')));
    }
    for (const { id, body } of deliveries) expect(received.get(id), `delivery ${id}`).toEqual(new Set([body]));
    const withdrawalHooks = deliveries.map(({ body }) => JSON.parse(body) as { type: string; payload: { id?: string } }).filter((hook) => hook.type.startsWith('withdrawal.'));
    for (const id of withdrawalIds)
      expect(withdrawalHooks.filter((hook) => hook.payload.id === id).map((hook) => hook.type).sort()).toEqual(['withdrawal.completed', 'withdrawal.created', 'withdrawal.processing']);

    // the survivor's own account of it: every projection caught up
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    for (const projection of allProjections()) expect(metrics).toContain(`ledgergate_projection_lag_events{projection="${projection.name}"} 0`);
  }, 170_000);
});
