import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChain } from '../../src/catalog/registry.js';
import { streams } from '../../src/domain/streams.js';
import type { ServiceProcess } from '../support/service-process.js';
import { startTwoProcesses, type TwoProcesses } from '../support/two-processes.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const BTC = `${BITCOIN}/slip44:0`;
/** Bitcoin's own key space (the deposit addresses of every organization) */
const BITCOIN_KEY_SPACE = findChain(BITCOIN)!.keySpace;
const USERS_PER_PROCESS = 40;

/**
 * Two `serve` processes on one database hand out derivation indexes of one key space at once: each
 * allocation is decided on the counter's last event and appended at its revision, so whichever
 * process loses a race reads again. No index is given twice, none is skipped, and every user keeps
 * the address first given.
 */
describe('derivation indexes allocated by two processes at once', () => {
  let processes: TwoProcesses<{ apiKey: string }> | undefined;
  let first: ServiceProcess;
  let second: ServiceProcess;
  let apiKey: string;

  beforeAll(async () => {
    processes = await startTwoProcesses<{ apiKey: string }>('derivation_race');
    ({ first, second } = processes);
    apiKey = processes.bootstrap.apiKey;
  }, 90_000);
  afterAll(async () => {
    await processes?.stop();
  });

  const addressOf = async (service: ServiceProcess, userId: string): Promise<string> => {
    const query = new URLSearchParams({ chainId: BITCOIN, tokenId: BTC, userId });
    const response = await fetch(`${service.url}/payments/deposit-address?${query}`, { headers: { 'x-api-key': apiKey } });
    const body = (await response.json()) as { address: { properties: { address: string } } };
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body.address.properties.address;
  };

  it('gives every user its own index, each index once and none skipped, the same address on both processes', async () => {
    const users = Array.from({ length: USERS_PER_PROCESS * 2 }, (_, n) => `user-${n}`);
    // every request at once, alternating between the processes
    const addresses = await Promise.all(users.map((user, n) => addressOf(n % 2 === 0 ? first : second, user)));
    expect(new Set(addresses).size).toBe(users.length);

    const { rows } = await processes!.database.pool.query<{ revision: string; data: { index: number; owner: string } }>(
      'select revision::text as revision, data from eventstore.events where stream_id = $1 order by revision',
      [streams.derivationCounter(BITCOIN_KEY_SPACE)],
    );
    // the counter stream: index n at revision n, one owner each
    expect(rows.map((row) => row.data.index)).toEqual(rows.map((row) => Number(row.revision)));
    expect(rows).toHaveLength(users.length);
    expect(new Set(rows.map((row) => row.data.owner)).size).toBe(users.length);

    // asked again, through the other process, each user gets the address it was given
    const again = await Promise.all(users.map((user, n) => addressOf(n % 2 === 0 ? second : first, user)));
    expect(again).toEqual(addresses);
  });
});
