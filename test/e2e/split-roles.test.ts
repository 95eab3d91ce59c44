import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XRP_FEE_DROPS } from '../../src/chains/devnet/fees.js';
import { allProjections } from '../../src/projections/registry.js';
import { totpCode } from '../../src/security/totp.js';
import { externalAddress } from '../support/chain-workers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callWithKey } from '../support/service-calls.js';
import { processEnvironment, runCli, startServiceProcess, waitUntilReady, type ServiceProcess } from '../support/service-process.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from '../support/webhook-receiver.js';

const XRP = 'xrpl:mainnet'; // 1 confirmation
const XRP_NATIVE = `${XRP}/slip44:144`;
const DEPOSIT = 50_000_000n;
const WITHDRAWAL = 1_000_000n;

interface Bootstrap {
  apiKey: string;
  users: { username: string; password: string; totpSecret: string }[];
}

/** log lines that say a background worker became active in a process */
const WORKER_ACTIVE = new Set(['projection: active', 'chain watcher: active', 'sweeper: active', 'withdrawal-processor: active']);
const activeWorkers = (service: ServiceProcess) => service.logs.filter((record) => WORKER_ACTIVE.has(String(record.msg)));

const readiness = async (service: ServiceProcess) => {
  const response = await fetch(`${service.url}/readyz`);
  return { status: response.status, body: (await response.json()) as { details?: { waitingFor?: string[] } } };
};
const depositAddress = async (service: ServiceProcess, apiKey: string, userId: string) => {
  const query = new URLSearchParams({ chainId: XRP, tokenId: XRP_NATIVE, userId });
  const { address } = (await callWithKey(service, apiKey, 'GET', `/payments/deposit-address?${query}`)) as { address: { properties: { address: string; destinationTag: string } } };
  return address.properties;
};
const stopped = async (service: ServiceProcess) => {
  service.child.kill('SIGTERM');
  expect(await service.exited).toBe(0);
  await service.closed;
};

/** a deposit through `api` credited, then a withdrawal through it completed and posted, all of it seen through it */
const depositThenWithdraw = async (api: ServiceProcess, apiKey: string, target: { address: string; destinationTag: string }, reference: string) => {
  const call = (method: 'GET' | 'POST', url: string, body?: unknown) => callWithKey(api, apiKey, method, url, body);
  await call('POST', '/devnet/deposits', { chainId: XRP, tokenId: XRP_NATIVE, toAddress: target.address, amount: DEPOSIT.toString(), destinationTag: Number(target.destinationTag) });
  const available = async () => {
    const { balances } = (await call('GET', '/portfolio')) as { balances: { tokenId: string; available: string }[] };
    return BigInt(balances.find((entry) => entry.tokenId === XRP_NATIVE)?.available ?? '0');
  };
  await waitUntil(async () => (await available()) === DEPOSIT, 30_000, 'the deposit credited');
  const { withdrawal } = (await call('POST', '/withdrawals', { chainId: XRP, tokenId: XRP_NATIVE, amount: WITHDRAWAL.toString(), recipient: externalAddress(XRP), reference })) as { withdrawal: { id: string } };
  const statusOf = async () => ((await call('GET', `/withdrawals/${withdrawal.id}`)) as { status: string }).status;
  await waitUntil(async () => (await statusOf()) === 'Completed', 30_000, 'the withdrawal completed');
  await waitUntil(async () => (await available()) === DEPOSIT - WITHDRAWAL - XRP_FEE_DROPS, 30_000, 'the withdrawal posted on the ledger');
};

/**
 * SERVE_ROLE: one `api` process and one `workers` process on one database make one service. The
 * api process runs no background work and is ready only once the projections (run by the workers
 * process) have applied what the store held at its start; a deposit made through it is credited
 * and a withdrawal made through it completes, all of it visible through it; a key it rotates is
 * refused by it at once; each stops cleanly on SIGTERM.
 */
describe('an api process and a workers process on one database', () => {
  let database: TestDatabase;
  let env: Awaited<ReturnType<typeof processEnvironment>>;
  let acme: Bootstrap;
  let apiKey: string;
  let api: ServiceProcess | undefined;
  let workers: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase('split_roles');
    env = await processEnvironment(database, 'split', { DEVNET_BLOCK_TIME_MS: '300', RATE_LIMIT_PER_MINUTE: '1000000' });
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], env);
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    acme = JSON.parse(bootstrap.stdout) as Bootstrap;
    apiKey = acme.apiKey;
  }, 60_000);
  afterAll(async () => {
    for (const service of [api, workers]) service?.child.kill('SIGKILL');
    await fs.rm(env.DATA_DIR, { recursive: true, force: true });
    await database?.drop();
  });

  it('the api process is ready once the workers process caught the projections up, then serves a withdrawal end to end; each stops cleanly', async () => {
    // an api process alone: it answers, but nothing projects what it appends
    const firstApi = await startServiceProcess({ ...env, SERVE_ROLE: 'api' }, { waitReady: false });
    const target = await depositAddress(firstApi, apiKey, 'user-1');
    await stopped(firstApi);
    expect(activeWorkers(firstApi)).toEqual([]);
    expect(firstApi.logs.find((record) => record.msg === 'ledgergate listening')).toMatchObject({ role: 'api' });

    // a new api process started on that store: not ready while no process runs the projections
    api = await startServiceProcess({ ...env, SERVE_ROLE: 'api' }, { waitReady: false });
    const before = await readiness(api);
    expect(before.status).toBe(503);
    expect(before.body.details?.waitingFor).toContain('projection accounts');

    // the workers process runs every projection and chain worker, and answers only the operator's paths
    workers = await startServiceProcess({ ...env, SERVE_ROLE: 'workers' }, { waitReady: false });
    await waitUntilReady(api.url);
    expect((await readiness(api)).status).toBe(200);
    expect((await fetch(`${workers.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${workers.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${workers.url}/withdrawals`, { headers: { 'x-api-key': apiKey } })).status).toBe(404);
    expect(workers.logs.find((record) => record.msg === 'ledgergate listening')).toMatchObject({ role: 'workers' });

    // a deposit through the api process: mined by the workers' block producer, detected, credited, visible through the api;
    // then a withdrawal through the api process: signed, sent and confirmed by the workers process
    await depositThenWithdraw(api, apiKey, target, 'split-1');

    // a key rotated through the api process: refused by it from the answer on
    const alice = acme.users[0]!;
    const login = await fetch(`${api.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: alice.username, password: alice.password, totpCode: totpCode(alice.totpSecret, new Date()) }),
    });
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const rotation = await fetch(`${api.url}/organisation/api-key`, { method: 'PATCH', headers: { authorization: `Bearer ${accessToken}` } });
    expect(rotation.status).toBe(200);
    const { apiKey: newKey } = (await rotation.json()) as { apiKey: string };
    expect((await fetch(`${api.url}/organisation`, { headers: { 'x-api-key': apiKey } })).status).toBe(401);
    expect((await fetch(`${api.url}/organisation`, { headers: { 'x-api-key': newKey } })).status).toBe(200);

    // the api process ran no background work; the workers process ran all of it
    expect(activeWorkers(api)).toEqual([]);
    const projectionsActive = activeWorkers(workers).filter((record) => record.msg === 'projection: active').map((record) => String(record.projection));
    expect(projectionsActive.sort()).toEqual(allProjections().map((projection) => projection.name).sort());
    expect(activeWorkers(workers).some((record) => record.msg === 'withdrawal-processor: active' && record.withdrawalProcessor === XRP)).toBe(true);

    await stopped(api);
    await stopped(workers);
  }, 150_000);
});

/**
 * SERVE_ROLE as a list of parts: the background work on two processes, the projections in one and
 * the webhooks and the chains in the other, beside an api process. Each runs only its parts; the
 * api process is ready once the projections process caught them up; a deposit is credited, a
 * withdrawal completes and their webhooks are delivered (by the other process); each stops cleanly.
 */
describe('the projections in one process, the webhooks and the chains in another', () => {
  let database: TestDatabase;
  let env: Awaited<ReturnType<typeof processEnvironment>>;
  let receiver: WebhookReceiver;
  let apiKey: string;
  const started: ServiceProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('split_parts');
    receiver = await startWebhookReceiver();
    env = await processEnvironment(database, 'split-parts', { DEVNET_BLOCK_TIME_MS: '300', RATE_LIMIT_PER_MINUTE: '1000000' });
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--webhook-url', receiver.url, '--json'], env);
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    apiKey = (JSON.parse(bootstrap.stdout) as Bootstrap).apiKey;
  }, 60_000);
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    await receiver?.close();
    await fs.rm(env.DATA_DIR, { recursive: true, force: true });
    await database?.drop();
  });

  it('each process runs its parts, and together they serve a deposit and a withdrawal with their webhooks', async () => {
    const start = async (role: string) => {
      const service = await startServiceProcess({ ...env, SERVE_ROLE: role }, { waitReady: false });
      started.push(service);
      return service;
    };
    const api = await start('api');
    // the chains (and the webhooks) without the projections: the api process is still not ready
    const chains = await start('webhooks,chains');
    expect((await readiness(api)).status).toBe(503);
    const projections = await start('projections');
    await waitUntilReady(api.url);
    for (const service of [projections, chains]) {
      expect((await fetch(`${service.url}/metrics`)).status).toBe(200);
      expect((await fetch(`${service.url}/withdrawals`, { headers: { 'x-api-key': apiKey } })).status).toBe(404);
    }
    expect(projections.logs.find((record) => record.msg === 'ledgergate listening')).toMatchObject({ role: 'projections' });
    expect(chains.logs.find((record) => record.msg === 'ledgergate listening')).toMatchObject({ role: 'webhooks,chains' });

    const target = await depositAddress(api, apiKey, 'user-1');
    await depositThenWithdraw(api, apiKey, target, 'parts-1');
    // the deposit's and the withdrawal's webhooks: queued by the projections process, sent by the other
    await waitUntil(() => receiver.received.some((request) => (JSON.parse(request.body.toString()) as { type?: string }).type === 'withdrawal.completed'), 30_000, 'the completed withdrawal\'s webhook');

    expect(activeWorkers(api)).toEqual([]);
    const activeIn = (service: ServiceProcess) => new Set(activeWorkers(service).map((record) => String(record.msg)));
    expect([...activeIn(projections)]).toEqual(['projection: active']);
    expect(activeIn(chains).has('projection: active')).toBe(false);
    expect(activeWorkers(chains).some((record) => record.msg === 'withdrawal-processor: active' && record.withdrawalProcessor === XRP)).toBe(true);
    const projectionsActive = activeWorkers(projections).map((record) => String(record.projection));
    expect(projectionsActive.sort()).toEqual(allProjections().map((projection) => projection.name).sort());

    for (const service of started) await stopped(service);
  }, 150_000);
});
