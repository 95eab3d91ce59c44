import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/security/totp.js';
import type { ServiceProcess } from '../support/service-process.js';
import { startTwoProcesses, type TwoProcesses } from '../support/two-processes.js';
import { waitUntil } from '../support/webhook-receiver.js';

/** how long the other process may keep accepting a rotated-away key: its notification takes milliseconds */
const PROPAGATION_BOUND_MS = 5_000;

interface Bootstrap {
  apiKey: string;
  users: { username: string; password: string; totpSecret: string }[];
}

/**
 * Two `serve` processes on one database keep organizations in memory. A key rotated through the
 * first is refused by the first from its answer on, and by the second as soon as the event store's
 * notification reaches it (polled for a bounded time: the test fails if the second keeps accepting
 * it); the new key works on both at once.
 */
describe('an API key rotated in one process, refused by another sharing the database', () => {
  let processes: TwoProcesses<Bootstrap> | undefined;
  let first: ServiceProcess;
  let second: ServiceProcess;
  let acme: Bootstrap;

  beforeAll(async () => {
    processes = await startTwoProcesses<Bootstrap>('key_rotation');
    ({ first, second } = processes);
    acme = processes.bootstrap;
  }, 90_000);
  afterAll(async () => {
    await processes?.stop();
  });

  const statusWithKey = async (service: ServiceProcess, apiKey: string) => (await fetch(`${service.url}/organisation`, { headers: { 'x-api-key': apiKey } })).status;

  it('the rotating process refuses the old key at once, the other within the bound; the new key works on both', async () => {
    // both processes have the organization in memory with the current key
    for (let n = 0; n < 5; n++) {
      expect(await statusWithKey(first, acme.apiKey)).toBe(200);
      expect(await statusWithKey(second, acme.apiKey)).toBe(200);
    }

    const alice = acme.users[0]!;
    const login = await fetch(`${first.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: alice.username, password: alice.password, totpCode: totpCode(alice.totpSecret, new Date()) }),
    });
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const rotation = await fetch(`${first.url}/organisation/api-key`, { method: 'PATCH', headers: { authorization: `Bearer ${accessToken}` } });
    expect(rotation.status).toBe(200);
    const rotatedAt = Date.now();
    const { apiKey: newKey } = (await rotation.json()) as { apiKey: string };

    // at once where it was rotated: the very next request
    expect(await statusWithKey(first, acme.apiKey)).toBe(401);
    // in the other process as soon as the notification arrives; never later than the bound
    await waitUntil(async () => (await statusWithKey(second, acme.apiKey)) === 401, PROPAGATION_BOUND_MS, 'the second process to refuse the rotated-away key');
    process.stdout.write(`the rotated-away key refused by the second process after ${Date.now() - rotatedAt} ms\n`);
    // and it stays refused
    for (let n = 0; n < 5; n++) expect(await statusWithKey(second, acme.apiKey)).toBe(401);

    expect(await statusWithKey(first, newKey)).toBe(200);
    expect(await statusWithKey(second, newKey)).toBe(200);
  });
});
