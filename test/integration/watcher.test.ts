import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { confirmDeposit, recordDeposit } from '../../src/application/deposits.js';
import { TOKENS } from '../../src/catalog/tokens.js';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../src/application/deposit-accounts.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import { createDevnet, DEVNET_HEAD_CHANNEL, type Devnet } from '../../src/chains/devnet/index.js';
import type { BlockHeader, BlockTransfer, ChainGateway } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { BlockLog, CursorMovedError } from '../../src/processes/deposit-watcher/block-log.js';
import { ChainWatcher, HeadNotifications, WatcherLockSession, type ChainWatcherOptions } from '../../src/processes/deposit-watcher/index.js';
import { FollowedEventsReader } from '../../src/processes/deposit-watcher/followed-events.js';
import { loadConfig } from '../../src/config/env.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import { connectInfrastructure, type Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase } from '../support/database.js';
import { waitUntil } from '../support/webhook-receiver.js';
import { countingBatcher } from '../support/deposits.js';

const TRON_SHASTA = 'tron:shasta'; // 5 confirmations
const SEPOLIA = 'eip155:11155111'; // 6 confirmations
const BITCOIN_TESTNET = 'bip122:000000000933ea01ad0ee984209779ba'; // 1 confirmation
const XRP_TESTNET = 'xrpl:testnet'; // 1 confirmation
const BSC_TESTNET = 'eip155:97'; // 6 confirmations: the scripted gateway's chain
const BSC = 'eip155:56'; // 15 confirmations, USDT: scripted too
const ETHEREUM = 'eip155:1'; // 12 confirmations, USDT: scripted too
const POLYGON = 'eip155:137'; // 64 confirmations: scripted too
const native = (chainId: string) => ({ [TRON_SHASTA]: 'tron:shasta/slip44:195', [SEPOLIA]: `${SEPOLIA}/slip44:60`, [BITCOIN_TESTNET]: `${BITCOIN_TESTNET}/slip44:0`, [XRP_TESTNET]: `${XRP_TESTNET}/slip44:144`, [BSC_TESTNET]: `${BSC_TESTNET}/slip44:60` })[chainId]!;
const logger = createLogger('silent');

/** A permissive lock session: every watcher believes it is the active one (a lost session, say). */
class NoLocks extends WatcherLockSession {
  override acquire = async () => true;
  override holds = () => true;
  override release = async () => undefined;
}

describe('chain watchers over the devnet and the event store', () => {
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let accounts: DepositAccountServices;
  const orgId = randomUUID();
  const lockSessions: WatcherLockSession[] = [];
  const clock = () => new Date();

  beforeAll(async () => {
    const database = await createTestDatabase('watcher');
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-watcher-'));
    const config = loadConfig({ DATA_DIR: dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' });
    infrastructure = await connectInfrastructure(database.config, config, logger, 'test', async () => {
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    });
    devnet = createDevnet({ db: infrastructure.db, clock, blockTimeMs: 3_600_000, logger });
    accounts = { store: infrastructure.store, clock, addresses: createDepositAddressBook(infrastructure.signer!) };
  });
  afterAll(async () => {
    for (const locks of lockSessions) await locks.close();
    await infrastructure.close();
  });

  const watcher = (gateway: ChainGateway, overrides: Partial<ChainWatcherOptions> = {}) => {
    const locks = overrides.locks ?? new WatcherLockSession(infrastructure.databaseTarget, logger);
    lockSessions.push(locks);
    return new ChainWatcher({ gateway, services: { store: infrastructure.store, clock }, db: infrastructure.db, locks, logger, pollIntervalMs: 20, standbyRetryMs: 50, ...overrides });
  };
  const account = async (chainId: string, userId: string) =>
    (await getOrCreateDepositAccount(accounts, { orgId, chainId, externalUserId: userId }, { actor: 'test' })).account.properties as { address: string; destinationTag?: string };
  const depositEvents = async (chainId: string, type?: string) =>
    (await infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => event.data.chainId === chainId && (type === undefined || event.type === type));
  const ledger = async (chainId: string) => (await loadAggregate(infrastructure.store, streams.ledger(orgId, native(chainId)), ledgerDecider)).state;

  it('records a deposit to a user address in its block and confirms it at exactly the chain confirmations', async () => {
    const gateway = devnet.gateway(TRON_SHASTA);
    const controls = devnet.controls(TRON_SHASTA);
    const { address } = await account(TRON_SHASTA, 'tron-user');
    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 7_000_000n });
    await controls.deposit({ toAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', asset: 'native', amount: 9_000_000n }); // nobody's
    const tron = watcher(gateway);
    expect(await tron.catchUp()).toBe(true);

    const detected = await depositEvents(TRON_SHASTA, 'DepositDetected');
    expect(detected.map((event) => event.data)).toEqual([
      expect.objectContaining({ txHash: paid.txHash, index: 0, blockNumber: paid.blockNumber, amount: '7000000', orgId, externalUserId: 'tron-user', toAddress: address, credit: 'credit' }),
    ]);
    expect(await ledger(TRON_SHASTA)).toEqual({ available: 0n, pending: 7_000_000n, held: 0n });

    await controls.mine(2); // the deposit's block, the other deposit's and 2 more: 4 of 5 confirmations
    await tron.catchUp();
    expect(await depositEvents(TRON_SHASTA, 'DepositConfirmed')).toEqual([]);
    await controls.mine(1);
    await tron.catchUp();
    const confirmed = await depositEvents(TRON_SHASTA, 'DepositConfirmed');
    expect(confirmed.map((event) => event.data)).toEqual([expect.objectContaining({ txHash: paid.txHash, index: 0, confirmations: 5, credited: true })]);
    expect(await ledger(TRON_SHASTA)).toEqual({ available: 7_000_000n, pending: 0n, held: 0n });
  });

  it('a pass that confirms a deposit, then scans a block that pays nobody, decides that confirmation once', async () => {
    const gateway = devnet.gateway(TRON_SHASTA);
    const controls = devnet.controls(TRON_SHASTA);
    const { address } = await account(TRON_SHASTA, 'tron-once');
    const { batcher, decisions } = countingBatcher();
    const tron = watcher(gateway, { services: { store: infrastructure.store, clock, ledgerBatcher: batcher } });
    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 4_000_000n });
    await tron.catchUp();
    await controls.mine(3); // 4 of 5 confirmations
    await tron.catchUp();
    const before = decisions();
    await controls.mine(1); // 5 of 5: confirmed before the new block is scanned; the pass's end finds it confirmed, not due again
    await tron.catchUp();
    expect(decisions() - before).toBe(1);
    expect((await depositEvents(TRON_SHASTA, 'DepositConfirmed')).filter((event) => event.data.txHash === paid.txHash)).toHaveLength(1);
  });

  it('a deposit whose block is already deep enough when first scanned is detected and confirmed in one append, credited once', async () => {
    const gateway = devnet.gateway(TRON_SHASTA);
    const controls = devnet.controls(TRON_SHASTA);
    const { address } = await account(TRON_SHASTA, 'late-scanned-user');
    const tron = watcher(gateway);
    await tron.catchUp();
    const before = await ledger(TRON_SHASTA);
    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 3_000_000n });
    await controls.mine(4); // its block and 4 more: the 5 confirmations it needs before the watcher sees it
    await tron.catchUp();
    await controls.mine(1);
    await tron.catchUp();

    const events = (await depositEvents(TRON_SHASTA)).filter((event) => event.data.txHash === paid.txHash);
    expect(events.map((event) => [event.type, event.data.confirmations])).toEqual([
      ['DepositDetected', undefined],
      ['DepositConfirmed', 5],
    ]);
    // one append: the two events at consecutive positions, the credit moved with them
    expect(events[1]!.position - events[0]!.position).toBe(1n);
    const ledgerEvents = await infrastructure.store.readStream(streams.ledger(orgId, native(TRON_SHASTA)), { direction: 'backwards', maxCount: 2 });
    expect(ledgerEvents.map((event) => [event.type, event.position - events[0]!.position])).toEqual([
      ['DepositCredited', 3n],
      ['DepositPending', 2n],
    ]);
    expect(await ledger(TRON_SHASTA)).toEqual({ ...before, available: before.available + 3_000_000n });
  });

  it('XRP: a known tag credits its user; no tag or an unknown tag is recorded unattributed and never credited', async () => {
    const controls = devnet.controls(XRP_TESTNET);
    const { address, destinationTag } = await account(XRP_TESTNET, 'xrp-user');
    const tagged = await controls.deposit({ toAddress: address, asset: 'native', amount: 20_000_000n, destinationTag: Number(destinationTag) });
    const untagged = await controls.deposit({ toAddress: address, asset: 'native', amount: 30_000_000n });
    const unknownTag = await controls.deposit({ toAddress: address, asset: 'native', amount: 40_000_000n, destinationTag: 999_999 });
    await watcher(devnet.gateway(XRP_TESTNET)).catchUp();

    const detected = (await depositEvents(XRP_TESTNET, 'DepositDetected')).map((event) => event.data);
    expect(detected).toEqual([
      expect.objectContaining({ txHash: tagged.txHash, orgId, externalUserId: 'xrp-user', credit: 'credit', destinationTag: Number(destinationTag) }),
      expect.objectContaining({ txHash: untagged.txHash, orgId: null, externalUserId: null, credit: 'unattributed', destinationTag: null }),
      expect.objectContaining({ txHash: unknownTag.txHash, orgId: null, externalUserId: null, credit: 'unattributed', destinationTag: 999_999 }),
    ]);
    // XRP needs one confirmation: the block itself; only the attributed deposit reaches the ledger
    // (deposits due in one pass are confirmed side by side: in no particular order)
    const confirmed = (await depositEvents(XRP_TESTNET, 'DepositConfirmed')).map((event) => [event.data.txHash, event.data.credited]);
    expect(confirmed).toHaveLength(3);
    expect(confirmed).toEqual(
      expect.arrayContaining([
        [tagged.txHash, true],
        [untagged.txHash, false],
        [unknownTag.txHash, false],
      ]),
    );
    expect(await ledger(XRP_TESTNET)).toEqual({ available: 20_000_000n, pending: 0n, held: 0n });
  });

  it('a reorg of depth 2 before confirmation reverts the deposit; it is never confirmed and its pending amount leaves', async () => {
    const controls = devnet.controls(SEPOLIA);
    const { address } = await account(SEPOLIA, 'reorg-user');
    await controls.mine(2);
    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 10n ** 17n });
    await controls.mine(1);
    const sepolia = watcher(devnet.gateway(SEPOLIA));
    await sepolia.catchUp();
    expect(await ledger(SEPOLIA)).toEqual({ available: 0n, pending: 10n ** 17n, held: 0n });

    await controls.reorg(2); // the deposit's block and the one after it
    await sepolia.catchUp();
    expect((await depositEvents(SEPOLIA)).map((event) => [event.type, event.data.txHash, event.data.reason])).toEqual([
      ['DepositDetected', paid.txHash, undefined],
      ['DepositReverted', paid.txHash, 'reorg'],
    ]);
    expect(await ledger(SEPOLIA)).toEqual({ available: 0n, pending: 0n, held: 0n });

    await controls.mine(10);
    await sepolia.catchUp();
    expect((await depositEvents(SEPOLIA)).map((event) => event.type)).toEqual(['DepositDetected', 'DepositReverted']);
    expect(await ledger(SEPOLIA)).toEqual({ available: 0n, pending: 0n, held: 0n });
  });

  it('a pass that finds the head where its last complete pass left it reads nothing else; a new block, or a reorg at the same height, is worked as before', async () => {
    const controls = devnet.controls(TRON_SHASTA);
    const { address } = await account(TRON_SHASTA, 'settled-user');
    const gateway = devnet.gateway(TRON_SHASTA);
    const asked: string[] = [];
    const counted: ChainGateway = {
      ...gateway,
      head: () => (asked.push('head'), gateway.head()),
      block: (number) => (asked.push('block'), gateway.block(number)),
      transfersInBlock: (number, to) => (asked.push('transfers'), gateway.transfersInBlock(number, to)),
    };
    const tron = watcher(counted);
    await controls.mine(1);
    await tron.catchUp();
    asked.length = 0;
    await tron.catchUp();
    expect(asked).toEqual(['head']);

    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 5_000_000n });
    await tron.catchUp();
    expect((await depositEvents(TRON_SHASTA, 'DepositDetected')).map((event) => event.data.txHash)).toContain(paid.txHash);

    // the deposit's block replaced by one at the same height without it: the head's hash changed
    await controls.reorg(1);
    await tron.catchUp();
    expect((await depositEvents(TRON_SHASTA)).filter((event) => event.data.txHash === paid.txHash).map((event) => event.type)).toEqual(['DepositDetected', 'DepositReverted']);
  });

  it('a watcher woken by the devnet\'s head notifications scans a new block at once, with no poll due for minutes', async () => {
    const controls = devnet.controls(XRP_TESTNET);
    const { address, destinationTag } = await account(XRP_TESTNET, 'notified-user');
    const notifications = new HeadNotifications(infrastructure.databaseTarget, DEVNET_HEAD_CHANNEL, new Set([XRP_TESTNET]), logger);
    const xrp = watcher(devnet.gateway(XRP_TESTNET), { pollIntervalMs: 600_000, headNotifications: notifications });
    const head = await controls.mine(1);
    const cursor = async () => Number((await sql<{ next_block: string }>`select next_block from chain_watcher_cursors where chain_id = ${XRP_TESTNET}`.execute(infrastructure.db)).rows[0]?.next_block ?? -1);
    xrp.start();
    try {
      // its first pass is done and it waits, listening: only a notification can wake it before ten minutes
      await waitUntil(async () => notifications.listening && (await cursor()) > head.number, 20_000, 'the first pass, listening');
      const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 6_000_000n, destinationTag: Number(destinationTag) });
      await waitUntil(async () => (await depositEvents(XRP_TESTNET, 'DepositDetected')).some((event) => event.data.txHash === paid.txHash), 20_000, 'the deposit seen');
    } finally {
      await xrp.stop();
      await notifications.close();
    }
  });

  it('the block log answers the cursor it moved from memory; moved by another watcher meanwhile, its next move fails and it reads the table again', async () => {
    const chainId = `test:block-log-${randomUUID()}`;
    const log = new BlockLog(infrastructure.db, chainId);
    const other = new BlockLog(infrastructure.db, chainId);
    expect(await log.cursor(0, clock())).toBe(0);
    await log.scanned({ number: 0, hash: 'h0' }, clock());
    await log.scanned({ number: 1, hash: 'h1' }, clock());
    expect(await other.cursor(0, clock())).toBe(2);
    await other.scanned({ number: 2, hash: 'h2' }, clock()); // the other watcher moves on
    expect(await log.cursor(0, clock())).toBe(2); // remembered, stale
    expect(await log.hashOf(1)).toBe('h1');
    await expect(log.scanned({ number: 2, hash: 'x2' }, clock())).rejects.toBeInstanceOf(CursorMovedError);
    expect(await log.cursor(0, clock())).toBe(3);
    expect(await log.hashOf(2)).toBe('h2');
    log.forget();
    await other.rewind(3, 1, clock());
    expect(await log.cursor(0, clock())).toBe(1);
  });

  it('the block log holds moves past blocks that paid nobody in memory and writes them, hashes included, with the next move or when saved', async () => {
    const chainId = `test:block-log-${randomUUID()}`;
    const log = new BlockLog(infrastructure.db, chainId);
    const tableCursor = () => new BlockLog(infrastructure.db, chainId).cursor(0, clock());
    const rememberedHashes = async () => (await new BlockLog(infrastructure.db, chainId).recentBlocks(clock())).map((block) => block.hash);
    expect(await log.cursor(0, clock())).toBe(0);
    await log.scannedUnsaved({ number: 0, hash: 'h0' }, clock());
    await log.scannedUnsaved({ number: 1, hash: 'h1' }, clock());
    expect(await log.cursor(0, clock())).toBe(2);
    expect(await log.hashOf(1)).toBe('h1');
    expect(await tableCursor()).toBe(0); // a watcher that died now would scan blocks 0 and 1 again
    await log.scanned({ number: 2, hash: 'h2' }, clock());
    expect(await tableCursor()).toBe(3);
    expect(await rememberedHashes()).toEqual(['h2', 'h1', 'h0']);
    await log.scannedUnsaved({ number: 3, hash: 'h3' }, clock());
    expect(await tableCursor()).toBe(3);
    await log.save(clock());
    expect(await tableCursor()).toBe(4);
    expect(await rememberedHashes()).toEqual(['h3', 'h2', 'h1', 'h0']);
    // moved by another watcher meanwhile: the held moves are lost and the next write fails, as any move
    await log.scannedUnsaved({ number: 4, hash: 'h4' }, clock());
    await new BlockLog(infrastructure.db, chainId).scanned({ number: 4, hash: 'other4' }, clock());
    await expect(log.save(clock())).rejects.toBeInstanceOf(CursorMovedError);
    expect(await log.cursor(0, clock())).toBe(5);
    expect(await log.hashOf(4)).toBe('other4');
  });

  it('a crash between recording and moving the cursor scans the block again and repeats nothing', async () => {
    const controls = devnet.controls(SEPOLIA);
    const { address } = await account(SEPOLIA, 'crash-user');
    const paid = await controls.deposit({ toAddress: address, asset: 'native', amount: 2n * 10n ** 17n });
    const sepolia = watcher(devnet.gateway(SEPOLIA));
    await sepolia.catchUp();
    const before = await depositEvents(SEPOLIA);
    // as if the process died after recording the deposit, before the cursor passed its block
    await sql`update chain_watcher_cursors set next_block = ${paid.blockNumber} where chain_id = ${SEPOLIA}`.execute(infrastructure.db);
    await sql`delete from chain_watcher_blocks where chain_id = ${SEPOLIA} and number >= ${paid.blockNumber}`.execute(infrastructure.db);
    await watcher(devnet.gateway(SEPOLIA)).catchUp();
    expect(await depositEvents(SEPOLIA)).toEqual(before);
  });

  it('stopped and restarted mid-way, with deposits while stopped: none missed, none duplicated', async () => {
    const controls = devnet.controls(BITCOIN_TESTNET);
    const users = await Promise.all(['btc-a', 'btc-b', 'btc-c'].map((user) => account(BITCOIN_TESTNET, user)));
    const paid: string[] = [];
    const pay = async (n: number) => {
      for (let i = 0; i < n; i++) paid.push((await controls.deposit({ toAddress: users[paid.length % 3]!.address, asset: 'native', amount: 100_000n + BigInt(paid.length) })).txHash);
    };
    const detectedHashes = async () => (await depositEvents(BITCOIN_TESTNET, 'DepositDetected')).map((event) => String(event.data.txHash));

    const first = watcher(devnet.gateway(BITCOIN_TESTNET));
    first.start();
    await pay(3);
    await waitUntil(async () => (await detectedHashes()).length === 3, 20_000, 'the first three deposits');
    await pay(2);
    await first.stop();
    await pay(3); // while no watcher runs
    const second = watcher(devnet.gateway(BITCOIN_TESTNET)); // a new process: nothing in memory
    second.start();
    await waitUntil(async () => (await detectedHashes()).length >= 8, 20_000, 'all eight deposits');
    await pay(1);
    await waitUntil(async () => (await depositEvents(BITCOIN_TESTNET, 'DepositConfirmed')).length >= 9, 20_000, 'nine confirmations');
    await second.stop();

    expect((await detectedHashes()).sort()).toEqual([...paid].sort());
    const confirmed = (await depositEvents(BITCOIN_TESTNET, 'DepositConfirmed')).map((event) => String(event.data.txHash));
    expect(confirmed.sort()).toEqual([...paid].sort());
  });

  it('two watchers of one chain in two processes: one works, the other stands by and takes over; each deposit once', async () => {
    const gateway = devnet.gateway(TRON_SHASTA);
    const controls = devnet.controls(TRON_SHASTA);
    const { address } = await account(TRON_SHASTA, 'tron-pair');
    const before = (await depositEvents(TRON_SHASTA, 'DepositDetected')).length;
    const [a, b] = [watcher(gateway), watcher(gateway)];
    a.start();
    b.start();
    const paid: string[] = [];
    for (let i = 0; i < 4; i++) paid.push((await controls.deposit({ toAddress: address, asset: 'native', amount: 2_000_000n + BigInt(i) })).txHash);
    await waitUntil(async () => (await depositEvents(TRON_SHASTA, 'DepositDetected')).length === before + 4, 20_000, 'four deposits');
    expect([a.state, b.state].sort()).toEqual(['active', 'standby']);
    const [active, standby] = a.state === 'active' ? [a, b] : [b, a];
    await active.stop();
    for (let i = 4; i < 6; i++) paid.push((await controls.deposit({ toAddress: address, asset: 'native', amount: 2_000_000n + BigInt(i) })).txHash);
    await waitUntil(async () => (await depositEvents(TRON_SHASTA, 'DepositDetected')).length === before + 6, 20_000, 'the standby to take over');
    expect(standby.state).toBe('active');
    await standby.stop();
    const detected = (await depositEvents(TRON_SHASTA, 'DepositDetected')).map((event) => String(event.data.txHash)).filter((hash) => paid.includes(hash));
    expect(detected.sort()).toEqual([...paid].sort());
  });

  it('two watchers that both believe they are active still record each deposit once', async () => {
    const gateway = devnet.gateway(BITCOIN_TESTNET);
    const controls = devnet.controls(BITCOIN_TESTNET);
    const { address } = await account(BITCOIN_TESTNET, 'btc-race');
    const both = [watcher(gateway, { locks: new NoLocks(infrastructure.databaseTarget, logger) }), watcher(gateway, { locks: new NoLocks(infrastructure.databaseTarget, logger) })];
    const paid: string[] = [];
    for (let i = 0; i < 5; i++) paid.push((await controls.deposit({ toAddress: address, asset: 'native', amount: 300_000n + BigInt(i) })).txHash);
    await Promise.all(both.map((each) => each.catchUp()));
    await Promise.all(both.map((each) => each.catchUp()));
    const events = (await depositEvents(BITCOIN_TESTNET)).filter((event) => paid.includes(String(event.data.txHash)));
    expect(events.filter((event) => event.type === 'DepositDetected').map((event) => event.data.txHash).sort()).toEqual([...paid].sort());
    expect(events.filter((event) => event.type === 'DepositConfirmed').map((event) => event.data.txHash).sort()).toEqual([...paid].sort());
  });

  it('a transaction the new chain includes again after a reorg is detected again in its new block and confirmed', async () => {
    const chain = findChain(BSC_TESTNET)!;
    const { address } = await account(BSC_TESTNET, 'bsc-user');
    const chainOf = scriptedChain(chain.id);
    const gateway = chainOf.gateway(chain);
    const transfer = { txHash: `0x${'ab'.repeat(32)}`, index: 0, from: '0x000000000000000000000000000000000000dEaD', to: address, asset: 'native', amount: 10n ** 16n, destinationTag: null };
    chainOf.mine([], [transfer]); // blocks 1 and 2 (the transfer in 2)
    const bsc = watcher(gateway);
    await bsc.catchUp();
    chainOf.reorg(1, [[], [transfer]]); // block 2 replaced by an empty one; the transfer comes back in block 3
    await bsc.catchUp();
    chainOf.mine(...Array.from({ length: 5 }, () => [])); // block 3 + 5 more: 6 confirmations
    await bsc.catchUp();

    expect((await depositEvents(BSC_TESTNET)).map((event) => [event.type, event.data.blockNumber ?? event.data.reason ?? event.data.confirmations])).toEqual([
      ['DepositDetected', 2],
      ['DepositReverted', 'reorg'],
      ['DepositDetected', 3],
      ['DepositConfirmed', 6],
    ]);
    expect(await ledger(BSC_TESTNET)).toEqual({ available: 10n ** 16n, pending: 0n, held: 0n });
  });

  it('a pass over new blocks that lead to the head it read refreshes what it follows once; a block that replaced that head meanwhile is scanned after a refresh of its own', async () => {
    const chain = findChain(POLYGON)!;
    const chainOf = scriptedChain(chain.id);
    const scripted = chainOf.gateway(chain);
    let reads = 0;
    const counted = { ...infrastructure.store, readAllScanned: (...args: Parameters<typeof infrastructure.store.readAllScanned>) => (reads++, infrastructure.store.readAllScanned(...args)) };
    let replaceAt: number | null = null;
    let paid: string | null = null;
    const gateway: ChainGateway = {
      ...scripted,
      block: async (number) => {
        if (number === replaceAt) {
          replaceAt = null;
          // after the pass read the head and refreshed: a new address, and the head replaced by a block that pays it
          const { address } = await account(POLYGON, 'late-user');
          paid = `0x${'cd'.repeat(32)}`;
          chainOf.reorg(1, [[{ txHash: paid, index: 0, from: '0x000000000000000000000000000000000000dEaD', to: address, asset: 'native', amount: 10n ** 18n, destinationTag: null }]]);
        }
        return scripted.block(number);
      },
    };
    const polygon = watcher(gateway, { events: new FollowedEventsReader(counted) });
    chainOf.mine([]);
    await polygon.catchUp();

    chainOf.mine([], [], []); // blocks 2 to 4, the head the next pass reads
    reads = 0;
    await polygon.catchUp();
    expect(reads).toBe(1);

    chainOf.mine([]); // block 5, replaced while the pass reads it
    replaceAt = 5;
    await polygon.catchUp();
    expect((await depositEvents(POLYGON, 'DepositDetected')).map((event) => [event.data.txHash, event.data.blockNumber])).toEqual([[paid, 5]]);
  });

  /** a scripted EVM chain with a user's deposit address and the chain's USDT */
  const scriptedTokenChain = async (chainId: string, userId: string) => {
    const chain = findChain(chainId)!;
    const chainOf = scriptedChain(chainId);
    return {
      confirmations: chain.properties.confirmations,
      usdt: TOKENS.find((token) => token.chainId === chainId && token.symbol === 'USDT')!,
      address: (await account(chainId, userId)).address,
      chainOf,
      gateway: chainOf.gateway(chain),
    };
  };
  const empty = (count: number): ScriptedTransfer[][] => Array.from({ length: count }, () => []);

  it('an EVM token deposit recorded under its log index in the block (before the upgrade) is never credited again, even mined again elsewhere by a deep reorg', async () => {
    const { confirmations, usdt, address, chainOf, gateway } = await scriptedTokenChain(BSC, 'legacy-user');
    const amount = 5n * 10n ** 18n;
    // the transfer is the transaction's first log (index 0 within it) and was the block's fourth (index 3)
    const transfer = { txHash: `0x${'cd'.repeat(32)}`, index: 0, from: '0x000000000000000000000000000000000000dEaD', to: address, asset: usdt.address.toLowerCase(), amount, destinationTag: null };
    chainOf.mine([], [transfer], ...empty(confirmations));

    // the watcher before the upgrade recorded and credited it under the log's index in its block
    const services = { store: infrastructure.store, clock };
    const legacy = { chainId: BSC, txHash: transfer.txHash, index: 3 };
    const owner = { orgId, externalUserId: 'legacy-user', accountChainId: BSC };
    const observed = { ...legacy, blockNumber: 2, blockHash: (await gateway.block(2))!.hash, from: transfer.from, to: address, asset: transfer.asset, amount, destinationTag: null };
    expect(await recordDeposit(services, observed, owner, { actor: `watcher:${BSC}` })).toEqual({ outcome: 'recorded' });
    await confirmDeposit(services, legacy, confirmations, { actor: `watcher:${BSC}` });

    // the upgraded watcher reads the chain from the start, then a reorg deeper than the confirmations mines the transfer again later
    const bsc = watcher(gateway);
    await bsc.catchUp();
    chainOf.reorg(confirmations + 1, [[], [], [transfer], ...empty(confirmations)]);
    await bsc.catchUp();

    expect((await depositEvents(BSC)).map((event) => [event.type, event.data.txHash, event.data.index])).toEqual([
      ['DepositDetected', transfer.txHash, 3],
      ['DepositConfirmed', transfer.txHash, 3],
    ]);
    const { state } = await loadAggregate(infrastructure.store, streams.ledger(orgId, usdt.id), ledgerDecider);
    expect(state).toEqual({ available: amount, pending: 0n, held: 0n });
  });

  it('a token transfer keyed within its transaction: detected once, and the same key when a reorg mines it again at another index in the block', async () => {
    const { confirmations, usdt, address, chainOf, gateway } = await scriptedTokenChain(ETHEREUM, 'relog-user');
    const transfer = { txHash: `0x${'ef'.repeat(32)}`, index: 1, from: '0x000000000000000000000000000000000000dEaD', to: address, asset: usdt.address.toLowerCase(), amount: 7_000_000n, destinationTag: null };
    chainOf.mine([], [transfer], ...empty(confirmations));
    const eth = watcher(gateway);
    await eth.catchUp();
    chainOf.reorg(confirmations + 1, [[], [transfer], ...empty(confirmations)]);
    await eth.catchUp();

    const events = await depositEvents(ETHEREUM);
    expect(events.map((event) => [event.type, event.data.index])).toEqual([
      ['DepositDetected', 1],
      ['DepositConfirmed', 1],
    ]);
    expect(events[0]!.data).toMatchObject({ logIndexInTransaction: true });
    const { state } = await loadAggregate(infrastructure.store, streams.ledger(orgId, usdt.id), ledgerDecider);
    expect(state).toEqual({ available: 7_000_000n, pending: 0n, held: 0n });
  });
});

type ScriptedTransfer = Omit<BlockTransfer, 'blockNumber' | 'blockHash'>;

/** An in-memory chain the test mines and reorganizes at will (it can put a transaction back, which the devnet does not). */
const scriptedChain = (chainId: string) => {
  const blocks: { header: BlockHeader; transfers: ScriptedTransfer[] }[] = [];
  let salt = 0;
  const append = (transfers: ScriptedTransfer[]) => {
    const number = blocks.length;
    const parentHash = blocks[number - 1]?.header.hash ?? `0x${'0'.repeat(64)}`;
    const hash = `0x${createHash('sha256').update(`${chainId}/${number}/${parentHash}/${salt}`).digest('hex')}`;
    blocks.push({ header: { number, hash, parentHash, timestamp: new Date(0).toISOString() }, transfers });
  };
  append([]);
  return {
    mine: (...contents: ScriptedTransfer[][]) => contents.forEach(append),
    reorg: (depth: number, contents: ScriptedTransfer[][]) => {
      blocks.splice(blocks.length - depth, depth);
      salt++;
      contents.forEach(append);
    },
    gateway: (chain: NonNullable<ReturnType<typeof findChain>>): ChainGateway => {
      const unsupported = () => Promise.reject(new Error('not scripted'));
      return {
        chain,
        head: async () => blocks[blocks.length - 1]!.header,
        block: async (number) => blocks[number]?.header ?? null,
        transfersInBlock: async (number, to) => {
          const block = blocks[number];
          if (!block) return [];
          const wanted = to ? new Set([...to].map((address) => address.toLowerCase())) : null;
          return block.transfers
            .filter((transfer) => wanted === null || wanted.has(transfer.to.toLowerCase()))
            .map((transfer) => ({ ...transfer, blockNumber: number, blockHash: block.header.hash }));
        },
        balance: unsupported,
        nextNonce: unsupported,
        unspentOutputs: unsupported,
        requiresDestinationTag: unsupported,
        estimateFee: unsupported,
        broadcast: unsupported,
        provablyNever: unsupported,
        transactionStatus: unsupported,
      };
    },
  };
};
