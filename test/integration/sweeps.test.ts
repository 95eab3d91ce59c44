import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import type { OrganizationWallets } from '../../src/application/organization-wallets.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { advanceSweep, type SweepServices } from '../../src/processes/sweeper/advance.js';
import { devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import { canonicalAddress } from '../../src/chains/devnet/hashes.js';
import { findChain } from '../../src/catalog/registry.js';
import { Sweeper, type SweeperOptions } from '../../src/processes/sweeper/index.js';
import { findToken } from '../../src/catalog/tokens.js';
import { streams } from '../../src/domain/streams.js';
import { sweepDecider } from '../../src/domain/sweep/decide.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { BALANCES_PROJECTION } from '../../src/projections/balances.js';
import { DEPOSITS_PROJECTION } from '../../src/projections/deposits.js';
import { allProjections } from '../../src/projections/registry.js';
import { SWEEP_QUEUE_PROJECTION } from '../../src/projections/sweep-queue.js';
import { SWEEPS_PROJECTION } from '../../src/projections/sweeps.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { sql } from 'kysely';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const POLYGON = 'eip155:137';
const BSC = 'eip155:56';
const TRON = 'tron:0x00000000000000000000000000000000';
const USDT = findToken('eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7')!;
const GWEI = 1_000_000_000n;

/**
 * The service's parts without the chain watchers: deposits are driven through the deposit
 * application functions, after a real transfer on the devnet, so every balance asserted is the
 * chain's. Blocks are mined only by the test.
 */
describe('sweeps', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let wallets: OrganizationWallets;
  let orgId: string;
  let now = new Date('2026-11-22T10:00:00.000Z');
  const clock = () => now;
  /** what the sweepers say, to assert on; every other part is silent */
  const logLines: string[] = [];
  const logger = createLogger('debug', {}, (line) => logLines.push(line));

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('sweeps', { clock, projections: 'running' });
    ({ infrastructure, devnet, wallets, orgId } = fixture);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const sweepServices = (chainId: string, faults?: SweepServices['faults']): SweepServices => fixture.workerServices(chainId, { logger, ...(faults ? { faults } : {}) });
  const sweeper = (chainId: string, options: Partial<SweeperOptions> = {}) =>
    new Sweeper({ services: sweepServices(chainId), database: infrastructure.databaseTarget, failureDelayMs: () => 0, pollMs: 50, ...options });

  /** each projection's checkpoint moves only with the events it reads: wait for the last of those */
  const settled = async () => {
    for (const name of [SWEEP_QUEUE_PROJECTION, SWEEPS_PROJECTION, BALANCES_PROJECTION, DEPOSITS_PROJECTION]) {
      const projection = allProjections().find((candidate) => candidate.name === name)!;
      const events = await infrastructure.store.readAll({ afterPosition: 0n, maxCount: 100_000, filter: projection.filter });
      const last = events[events.length - 1];
      if (last) await waitForProjection(infrastructure.db, name, last.position, 30_000);
    }
  };

  /** a new user's (or `externalUserId`'s) deposit address on the chain, a transfer to it on the devnet, recorded, confirmed (no block mined) and credited */
  const deposit = async (chainId: string, asset: string, amount: bigint, externalUserId?: string) => {
    const credited = await fixture.credit(chainId, asset, amount, { mineConfirmations: false, ...(externalUserId ? { externalUserId } : {}) });
    await settled();
    return credited;
  };

  const sweepRow = async (ref: { chainId: string; txHash: string; index: number }) => {
    await settled();
    return infrastructure.db
      .selectFrom('sweeps')
      .selectAll()
      .where('chain_id', '=', ref.chainId)
      .where('tx_hash', '=', ref.txHash)
      .where('output_index', '=', ref.index)
      .executeTakeFirst();
  };
  const mineConfirmations = (chainId: string) => fixture.mineConfirmations(chainId);
  const sentBy = async (chainId: string, address: string) =>
    devnetDb(infrastructure.db)
      .selectFrom('devnet_transactions')
      .select(['hash', 'status'])
      .where('chain_id', '=', chainId)
      .where('sender', '=', canonicalAddress(findChain(chainId)!.family, address))
      .execute();
  const balance = async (tokenId: string) => {
    await settled();
    const row = await infrastructure.db.selectFrom('balances').select(['available', 'pending']).where('org_id', '=', orgId).where('token_id', '=', tokenId).executeTakeFirst();
    return row?.available;
  };
  const feeWebhooks = async (tokenId: string) => {
    const rows = await infrastructure.db.selectFrom('webhook_deliveries').select('body').where('org_id', '=', orgId).where('event_type', '=', 'balance.updated').orderBy('seq').execute();
    return rows.map((row) => (JSON.parse(row.body) as { payload: { tokenId: string; reason: string; available: string } }).payload).filter((payload) => payload.tokenId === tokenId && payload.reason === 'fee');
  };

  it('an ERC-20 sweep waits for gas, resumes when the gas wallet is funded, and moves the whole deposit', async () => {
    const worker = sweeper(ETHEREUM, { gasRetryMs: 30_000 });
    const { ref, address } = await deposit(ETHEREUM, USDT.address, 25_000_000n);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, ETHEREUM);
    const gateway = devnet.gateway(ETHEREUM);

    expect(await worker.runPass()).toEqual({ examined: 1, finished: 0, waiting: 1, deferred: 0, failed: 0 });
    expect(await sweepRow(ref)).toMatchObject({
      status: 'WaitingForGas',
      kind: 'token',
      reason: 'waiting for gas: the gas wallet holds 0, the top-up and its fee need 172000000000000',
      gas_wallet_address: gasAddress,
    });
    // looked at again only after gasRetryMs; still no gas: still waiting, said once
    now = new Date(now.getTime() + 30_000);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 });
    expect(logLines.filter((line) => line.includes('sweep: waiting for gas'))).toHaveLength(1);

    // the operator funds the gas wallet on the chain: exactly the top-up (65 000 gas × 2 gwei) and its own fee (21 000 × 2 gwei)
    await devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress!, asset: 'native', amount: 172_000n * GWEI });
    now = new Date(now.getTime() + 30_000);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 });
    expect(await sweepRow(ref)).toMatchObject({ status: 'TopUpBroadcast', top_up_amount: '130000000000000', reason: null });
    expect(logLines.filter((line) => line.includes('gas arrived, resuming'))).toHaveLength(1);

    await mineConfirmations(ETHEREUM);
    await worker.runPass(); // top-up confirmed → the token transfer signed and sent
    expect(await sweepRow(ref)).toMatchObject({ status: 'SweepBroadcast', gas_spent: '172000000000000' });
    await mineConfirmations(ETHEREUM);
    expect(await worker.runPass()).toMatchObject({ finished: 1 });

    expect(await gateway.balance(settlementAddress, USDT.address)).toBe(25_000_000n);
    expect(await gateway.balance(address, USDT.address)).toBe(0n);
    expect(await gateway.balance(address, 'native')).toBe(0n);
    expect(await gateway.balance(gasAddress!, 'native')).toBe(0n);
    expect(await sweepRow(ref)).toMatchObject({ status: 'Confirmed', swept_amount: '25000000', fee: '130000000000000', fee_charged: '0', gas_spent: '172000000000000' });
    // the gas wallet paid the gas: the organization's USDT balance is untouched
    expect(await balance(USDT.id)).toBe('25000000');
    expect(await worker.runPass()).toEqual({ examined: 0, finished: 0, waiting: 0, deferred: 0, failed: 0 });
  });

  it.each([
    [ETHEREUM, 'eip155:1/slip44:60', 1_000_000_000_000_000_000n, 42_000n * GWEI],
    [TRON, `${TRON}/slip44:195`, 100_000_000n, 270_000n],
  ])('a native sweep on %s pays its own fee, which the ledger is charged', async (chainId, tokenId, amount, fee) => {
    const worker = sweeper(chainId);
    const { ref, address } = await deposit(chainId, 'native', amount);
    const { settlementAddress } = await wallets.walletsOf(orgId, chainId);
    const before = BigInt((await balance(tokenId))!);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 });
    await mineConfirmations(chainId);
    expect(await worker.runPass()).toMatchObject({ finished: 1 });

    const gateway = devnet.gateway(chainId);
    expect(await gateway.balance(settlementAddress, 'native')).toBe(amount - fee);
    expect(await gateway.balance(address, 'native')).toBe(0n);
    expect(await sweepRow(ref)).toMatchObject({ status: 'Confirmed', kind: 'native', swept_amount: (amount - fee).toString(), fee: fee.toString(), fee_charged: fee.toString() });
    expect(BigInt((await balance(tokenId))!)).toBe(before - fee);
    expect(await feeWebhooks(tokenId)).toEqual([expect.objectContaining({ reason: 'fee', available: (before - fee).toString() })]);
  });

  it.each(['SweepSigned', 'broadcast'])('a sweeper that dies right after %s sends that transaction once, and the sweep completes', async (crashPoint) => {
    const { ref, address } = await deposit(BSC, 'native', 10n ** 17n);
    const crash = () => {
      throw new Error('simulated crash');
    };
    const faults: SweepServices['faults'] = crashPoint === 'broadcast' ? { afterBroadcast: crash } : { afterRecord: (type) => (type === 'SweepSigned' ? crash() : undefined) };
    const dying = new Sweeper({ services: sweepServices(BSC, faults), database: infrastructure.databaseTarget, failureDelayMs: () => 0 });
    expect(await dying.runPass()).toMatchObject({ failed: 1 });
    const { state } = await loadAggregate(infrastructure.store, streams.sweep(ref.chainId, ref.txHash, ref.index), sweepDecider);
    expect(state.status).toBe('SweepSigned');
    const signedHash = state.status === 'SweepSigned' ? state.sweep!.txHash : '';
    expect(await sentBy(BSC, address)).toEqual(crashPoint === 'broadcast' ? [{ hash: signedHash, status: 'pending' }] : []);

    const restarted = sweeper(BSC);
    await restarted.runPass();
    await mineConfirmations(BSC);
    expect(await restarted.runPass()).toMatchObject({ finished: 1 });
    expect(await sentBy(BSC, address)).toEqual([{ hash: signedHash, status: 'mined' }]);
    expect(await sweepRow(ref)).toMatchObject({ status: 'Confirmed', sweep_tx_hash: signedHash });
  });

  it('the sender claims a sweep leaves are what its stream says, after a call that waits and after one that finishes', async () => {
    const { ref, address } = await deposit(BSC, 'native', 10n ** 17n + 11n);
    const stream = streams.sweep(BSC, ref.txHash, ref.index);
    // a stale claim of this sweep's on another address, as a pass's claims read before it moved on could hold
    const claims = new Map([['0x00000000000000000000000000000000000000aa', stream]]);
    expect(await advanceSweep(sweepServices(BSC), ref, claims)).toMatchObject({ outcome: 'waiting', status: 'SweepBroadcast', for: 'confirmations' });
    expect([...claims]).toEqual([[address.toLowerCase(), stream]]);
    await mineConfirmations(BSC);
    expect(await advanceSweep(sweepServices(BSC), ref, claims)).toMatchObject({ outcome: 'finished', status: 'Confirmed' });
    expect([...claims]).toEqual([]);
  });

  it('a sweep stepped on a stale read of its stream conflicts and sends nothing; the next call goes on from the stream', async () => {
    const { ref } = await deposit(BSC, 'native', 10n ** 17n + 13n);
    const stream = streams.sweep(BSC, ref.txHash, ref.index);
    const stale = await loadAggregate(infrastructure.store, stream, sweepDecider);
    expect(await advanceSweep(sweepServices(BSC), ref)).toMatchObject({ outcome: 'waiting', status: 'SweepBroadcast' });
    const sent = await devnetDb(infrastructure.db).selectFrom('devnet_transactions').select('hash').where('chain_id', '=', BSC).execute();
    // the caller's read from before the sweep was scheduled: its decision appends at that revision
    await expect(advanceSweep(sweepServices(BSC), ref, new Map(), stale)).rejects.toThrow();
    expect(await devnetDb(infrastructure.db).selectFrom('devnet_transactions').select('hash').where('chain_id', '=', BSC).execute()).toHaveLength(sent.length);
    await mineConfirmations(BSC);
    expect(await advanceSweep(sweepServices(BSC), ref, new Map(), await loadAggregate(infrastructure.store, stream, sweepDecider))).toMatchObject({ outcome: 'finished', status: 'Confirmed' });
  });

  it('two sweepers racing on one chain sweep each deposit once', async () => {
    const deposits = [];
    for (let n = 0; n < 3; n++) deposits.push(await deposit(POLYGON, 'native', 10n ** 18n + BigInt(n)));
    // two callers advancing the same sweep at the same moment: one signature is recorded, one transaction sent
    const [first] = deposits;
    const outcomes = await Promise.allSettled([advanceSweep(sweepServices(POLYGON), first!.ref), advanceSweep(sweepServices(POLYGON), first!.ref)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
    expect(await sentBy(POLYGON, first!.address)).toHaveLength(1);

    const one = sweeper(POLYGON);
    const two = sweeper(POLYGON);
    one.start();
    two.start();
    try {
      for (let round = 0; round < 100; round++) {
        const rows = await Promise.all(deposits.map(({ ref }) => sweepRow(ref)));
        if (rows.every((row) => row?.status === 'Confirmed')) break;
        await mineConfirmations(POLYGON);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
    expect([one.state, two.state]).toEqual(['stopped', 'stopped']);
    for (const { ref, address } of deposits) {
      expect(await sweepRow(ref)).toMatchObject({ status: 'Confirmed' });
      const sent = await sentBy(POLYGON, address);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.status).toBe('mined');
    }
    const { settlementAddress } = await wallets.walletsOf(orgId, POLYGON);
    expect(await devnet.gateway(POLYGON).balance(settlementAddress, 'native')).toBe(3n * (10n ** 18n - 42_000n * GWEI) + 3n);
  });

  it('the sweeper and the withdrawal processor paying gas from one gas wallet at once never take one nonce twice', async () => {
    const { gasAddress, settlementAddress } = await wallets.walletsOf(orgId, ETHEREUM);
    await devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress!, asset: 'native', amount: 10n ** 18n });
    // three token deposits to sweep (each needs a top-up) and three withdrawals (each needs one too)
    const refs = [];
    for (let n = 0; n < 3; n++) refs.push((await deposit(ETHEREUM, USDT.address, 10_000_000n)).ref);
    await devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: USDT.address, amount: 30_000_000n });
    const created = [];
    for (let n = 0; n < 3; n++) created.push(await fixture.withdraw({ chainId: ETHEREUM, tokenId: USDT.id, amount: 1_000_000n, recipient: externalAddress(ETHEREUM) }));
    // a top-up recorded is sent a moment later: the window in which another signer would pick the same nonce
    const slowToSend = { afterRecord: async (type: string) => (type.endsWith('TopUpSigned') ? new Promise<void>((resolve) => setTimeout(resolve, 40)) : undefined) };
    const sweeping = sweeper(ETHEREUM, { gasRetryMs: 0, services: sweepServices(ETHEREUM, slowToSend) });
    const processing = fixture.withdrawalProcessor(ETHEREUM, { faults: slowToSend });
    for (let round = 0; round < 40; round++) {
      await Promise.all([sweeping.runPass(), processing.runPass()]);
      await mineConfirmations(ETHEREUM);
      const withdrawals = await Promise.all(created.map((withdrawal) => fixture.withdrawal(withdrawal.id)));
      const sweeps = await Promise.all(refs.map((ref) => sweepRow(ref)));
      if (withdrawals.every((withdrawal) => withdrawal.status === 'Completed') && sweeps.every((row) => row?.status === 'Confirmed')) break;
    }
    for (const withdrawal of created) expect(await fixture.withdrawal(withdrawal.id)).toMatchObject({ status: 'Completed' });
    for (const ref of refs) expect(await sweepRow(ref)).toMatchObject({ status: 'Confirmed' });
    // every top-up the gas wallet signed was mined: none lost its nonce to the other worker
    const fromGasWallet = await devnetDb(infrastructure.db)
      .selectFrom('devnet_transactions')
      .select(['nonce', 'status'])
      .where('chain_id', '=', ETHEREUM)
      .where('sender', '=', canonicalAddress('evm', gasAddress!))
      .execute();
    expect(fromGasWallet.filter((row) => row.status !== 'mined')).toEqual([]);
    const nonces = fromGasWallet.map((row) => row.nonce!).sort((a, b) => a - b);
    expect(new Set(nonces).size).toBe(nonces.length);
    for (const withdrawal of created) {
      const gas = await infrastructure.store.readStream(streams.withdrawalGas(withdrawal.id));
      expect(gas.map((event) => event.type)).not.toContain('WithdrawalGasTopUpFailed');
    }
  });

  it('rebuilding every projection from position 0 gives back the same tables after sweeps ran (worker outcomes included)', async () => {
    const crashAfterRecording = async () => {
      throw new Error('crash after recording');
    };
    // one more sweep that failed once (its attempt count and retry time are the worker's) and one waiting for gas
    const failing = await deposit(BSC, 'native', 10n ** 17n + 7n);
    const failOnce = sweeper(BSC, { services: sweepServices(BSC, { afterRecord: crashAfterRecording }), failureDelayMs: () => 60_000 });
    expect(await failOnce.runPass()).toMatchObject({ failed: 1 });
    await deposit(POLYGON, 'native', 10n ** 16n);
    await settled();

    const tablesOf = async () => {
      const snapshot: Record<string, string[]> = {};
      for (const projection of allProjections())
        for (const table of projection.tables) snapshot[table] = (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(infrastructure.db)).rows.map((row) => JSON.stringify(row)).sort();
      return snapshot;
    };
    const live = await tablesOf();
    expect(live['sweep_queue']!.length).toBeGreaterThan(3);
    expect(live['sweep_queue']!.some((row) => JSON.parse(row).done_at !== null)).toBe(true);
    for (const projection of allProjections()) await rebuildProjection(infrastructure.db, infrastructure.store, projection);
    expect(await tablesOf()).toEqual(live);

    // the worker's own schedule survived the rebuild: the failed sweep is not retried before its delay
    const eager = sweeper(BSC);
    expect(await eager.runPass()).toMatchObject({ examined: 0 });
    expect((await sweepRow(failing.ref))?.status).not.toBe('Confirmed');
  });

  it('a token sweep pays its gas with native coins at its address that no credited deposit owns, never with those one does', async () => {
    const POLYGON_USDT = findToken('eip155:137/erc20:0xc2132d05d31c914a87c6611c10748aeb04b58e8f')!;
    const sweepState = async (ref: { chainId: string; txHash: string; index: number }) =>
      (await loadAggregate(infrastructure.store, streams.sweep(ref.chainId, ref.txHash, ref.index), sweepDecider)).state;
    // a credited POL deposit, not swept yet: its coins are the organization's, not gas
    const owned = await deposit(POLYGON, 'native', 10n ** 17n);
    const tokenBesideOwned = await deposit(POLYGON, POLYGON_USDT.address, 5_000_000n, owned.externalUserId);
    await advanceSweep(sweepServices(POLYGON), tokenBesideOwned.ref);
    const waiting = await sweepState(tokenBesideOwned.ref);
    expect(['WaitingForGas', 'TopUpSigned', 'TopUpBroadcast']).toContain(waiting.status);

    // POL below the deposit minimum (0.01) is never credited: the token sweep spends it as gas, with no top-up
    const uncredited = await deposit(POLYGON, 'native', 5n * 10n ** 15n);
    const tokenBesideSpare = await deposit(POLYGON, POLYGON_USDT.address, 5_000_000n, uncredited.externalUserId);
    await advanceSweep(sweepServices(POLYGON), tokenBesideSpare.ref);
    const signed = await sweepState(tokenBesideSpare.ref);
    expect(['SweepSigned', 'SweepBroadcast']).toContain(signed.status);
    expect(signed.status !== 'None' && signed.topUp).toBeFalsy();
  });
});
