import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../src/application/deposit-accounts.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import type { BlockTransfer } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { TOKENS } from '../../src/catalog/tokens.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { WatcherCheckpoints } from '../../src/processes/deposit-watcher/checkpoint.js';
import { ChainEventFollower, type OrganizationWalletsAt } from '../../src/processes/deposit-watcher/event-follower.js';
import { ChainWatcher, WatcherLockSession } from '../../src/processes/deposit-watcher/index.js';
import { startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const XRP = 'xrpl:mainnet';
const TRON_SHASTA = 'tron:shasta'; // 5 confirmations: the chain the watcher runs on
const TRON = 'tron:0x00000000000000000000000000000000'; // the followers' own tests
const USDT = TOKENS.find((token) => token.chainId === ETHEREUM && token.symbol === 'USDT')!;
const logger = createLogger('silent');
const meta = { actor: 'test', at: '2026-11-26T07:00:00.000Z' };
const wallets: OrganizationWalletsAt = { space: 'wallets-test', addressesAt: (index) => [`0x5E771E${String(index).padStart(34, '0')}`, `0x6A5000${String(index).padStart(34, '0')}`] };

/** what a follower knows, in a form two followers can be compared by */
const knowledge = (follower: ChainEventFollower, probes: BlockTransfer[]) => ({
  byAddress: [...follower.watchSet.byAddress].sort(),
  byTaggedAddress: [...follower.watchSet.byTaggedAddress].sort(),
  addresses: [...follower.watchSet.addresses].sort(),
  serviceWallets: [...follower.watchSet.serviceWallets].sort(),
  // (what the watcher owes a verdict; a deposit followed live also carries its detection, which spares the confirmation a read)
  unconfirmed: [...follower.unconfirmed].map(([key, { ref, blockNumber, blockHash }]) => [key, ref, blockNumber, blockHash]).sort(),
  // the deposits keyed the old way, as the watcher uses them: the keys it gives a block's transfers
  legacyKeys: follower.legacyLogDeposits.keyAll(probes),
});

describe('deposit watcher checkpoints', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  const orgId = randomUUID();

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('watcher_checkpoints', { projections: 'none' });
    ({ infrastructure } = fixture);
  });
  afterAll(async () => fixture?.stop());

  /** one event of each kind a watcher follows, appended the way the service appends them */
  const history = () => {
    let appended = 0;
    const append = async (stream: string, type: string, data: Record<string, unknown>) => {
      await infrastructure.store.append(stream, 'any', [{ id: randomUUID(), type, data, metadata: meta }]);
      appended++;
    };
    const account = (chainId: string, user: string, address: string, destinationTag?: string) =>
      append(streams.account(orgId, chainId, user), 'AccountCreated', {
        orgId,
        chainId,
        externalUserId: user,
        orgDepositAccountId: randomUUID(),
        properties: destinationTag === undefined ? { address } : { address, destinationTag },
        derivation: { space: 'test', index: 0 },
        createdAt: meta.at,
      });
    const walletIndex = (index: number) =>
      append(streams.derivationOwner(wallets.space, orgId, `wallets-${index}`), 'DerivationIndexAssigned', { space: wallets.space, index, orgId, owner: `wallets-${index}`, assignedAt: meta.at });
    const detected = (chainId: string, txHash: string, index: number, fields: { tokenId?: string; to?: string; amount?: string; legacy?: boolean } = {}) =>
      append(streams.deposit(chainId, txHash, index), 'DepositDetected', {
        chainId,
        txHash,
        index,
        tokenId: fields.tokenId ?? `${chainId}/slip44:60`,
        amount: fields.amount ?? '1000',
        orgId,
        externalUserId: 'u',
        accountChainId: chainId,
        toAddress: fields.to ?? '0xto',
        destinationTag: null,
        senderAddress: '0x000000000000000000000000000000000000dEaD',
        blockNumber: 100 + index,
        blockHash: `0xblock${index}`,
        credit: 'credit',
        ...(fields.legacy ? {} : { logIndexInTransaction: true }),
        detectedAt: meta.at,
      });
    const verdict = (type: 'DepositConfirmed' | 'DepositReverted', chainId: string, txHash: string, index: number) =>
      append(streams.deposit(chainId, txHash, index), type, type === 'DepositConfirmed' ? { chainId, txHash, index, confirmations: 12, confirmedAt: meta.at, credited: true } : { chainId, txHash, index, reason: 'reorg', revertedAt: meta.at });
    return { account, walletIndex, detected, verdict, appended: () => appended };
  };

  const follower = (withCheckpoints: boolean, chainId = ETHEREUM) =>
    new ChainEventFollower(findChain(chainId)!, infrastructure.store, wallets, withCheckpoints ? new WatcherCheckpoints(infrastructure.db, chainId) : undefined);

  const legacyTx = `0x${'1e'.repeat(32)}`;
  const probes: BlockTransfer[] = [
    // matches the deposit recorded the old way at log 7 of its block: keyed 7, whatever its index now
    { txHash: legacyTx, index: 0, blockNumber: 300, blockHash: '0x300', from: '0x000000000000000000000000000000000000dEaD', to: '0xa11ce', asset: USDT.address, amount: 5n, destinationTag: null },
    { txHash: legacyTx, index: 7, blockNumber: 300, blockHash: '0x300', from: '0x000000000000000000000000000000000000dEaD', to: '0xb0b', asset: USDT.address, amount: 9n, destinationTag: null },
  ];

  it('restarted from its checkpoint, a follower knows exactly what one started from 0 knows, and reads only the events after it', async () => {
    const events = history();
    // before the first save: accounts (XRP with tags), the organizations' wallets, deposits of every fate, one keyed the old way
    await events.account(ETHEREUM, 'alice', '0xA11CE0000000000000000000000000000000A11CE');
    await events.account(XRP, 'xrp-1', 'rOrgAddress', '1001');
    await events.account(XRP, 'xrp-2', 'rOrgAddress', '1002');
    await events.account(TRON, 'tron', 'TTronAddress');
    await events.walletIndex(0);
    await events.detected(ETHEREUM, '0xd1', 0);
    await events.detected(ETHEREUM, '0xd2', 0);
    await events.detected(ETHEREUM, '0xd3', 0);
    await events.detected(ETHEREUM, legacyTx, 7, { tokenId: USDT.id, to: '0xa11ce', amount: '5', legacy: true });
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd1', 0);
    await events.detected(TRON, '0xt1', 0);

    const first = follower(true);
    await first.refresh();
    await first.saveCheckpoint(new Date());

    // between the saves: a verdict on a deposit detected before, a revert, more accounts and wallets
    await events.verdict('DepositReverted', ETHEREUM, '0xd2', 0);
    await events.account(ETHEREUM, 'bob', '0xB0B0000000000000000000000000000000000B0B');
    await events.walletIndex(1);
    await events.detected(ETHEREUM, '0xd4', 0);
    await first.refresh();
    await first.saveCheckpoint(new Date());

    // after the last save
    const before = events.appended();
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd3', 0);
    await events.detected(ETHEREUM, '0xd2', 0); // the reverted transfer mined again
    await events.account(XRP, 'xrp-3', 'rOrgAddress', '1003');
    await events.account(ETHEREUM, 'carol', '0xCA401000000000000000000000000000000CA401');
    await events.walletIndex(2);
    await events.detected(ETHEREUM, '0xd5', 0);
    const after = events.appended() - before;

    const restarted = follower(true);
    await restarted.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();

    expect(restarted.eventsRead).toBe(after);
    expect(fromZero.eventsRead).toBe(events.appended());
    expect(knowledge(restarted, probes)).toEqual(knowledge(fromZero, probes));
    expect([...restarted.unconfirmed.keys()].sort()).toEqual([`${ETHEREUM}:0xd2:0`, `${ETHEREUM}:0xd4:0`, `${ETHEREUM}:0xd5:0`, `${ETHEREUM}:${legacyTx}:7`].sort());
    expect(restarted.watchSet.serviceWallets.size).toBe(6);
    expect(knowledge(restarted, probes).legacyKeys).toEqual([{ index: 7 }, { refused: expect.any(String) }]);

    // XRP: the tags and the organization address, from its own checkpoint
    const xrp = follower(true, XRP);
    await xrp.refresh();
    await xrp.saveCheckpoint(new Date());
    const xrpRestarted = follower(true, XRP);
    await xrpRestarted.refresh();
    expect(xrpRestarted.eventsRead).toBe(0);
    const xrpFromZero = follower(false, XRP);
    await xrpFromZero.refresh();
    expect(knowledge(xrpRestarted, [])).toEqual(knowledge(xrpFromZero, []));
    expect([...xrpRestarted.watchSet.byTaggedAddress.keys()].sort()).toEqual(['rOrgAddress#1001', 'rOrgAddress#1002', 'rOrgAddress#1003']);
  });

  it('a stop request ends a refresh before its next read; the next refresh knows what one started from 0 knows', async () => {
    const stop = new AbortController();
    stop.abort();
    const stopped = follower(false);
    await expect(stopped.refresh(stop.signal)).rejects.toThrow();
    expect(stopped.eventsRead).toBe(0);
    await stopped.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(stopped, probes)).toEqual(knowledge(fromZero, probes));
  });

  it('a save behind the checkpoint (another watcher that believed it was active) writes nothing: the checkpoint only moves forward', async () => {
    const events = history();
    const behind = follower(true, TRON);
    await behind.refresh();
    await events.detected(TRON, '0xt2', 0);
    await events.verdict('DepositConfirmed', TRON, '0xt1', 0);
    const ahead = follower(true, TRON);
    await ahead.refresh();
    await ahead.saveCheckpoint(new Date());
    const saved = await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON}`.execute(infrastructure.db);

    // the one behind saves the state of its older position: refused, the rows stay those of the newer one
    await behind.saveCheckpoint(new Date());
    const kept = await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON}`.execute(infrastructure.db);
    expect(kept.rows).toEqual(saved.rows);
    const restarted = follower(true, TRON);
    await restarted.refresh();
    expect(restarted.eventsRead).toBe(0);
    expect([...restarted.unconfirmed.keys()]).toEqual([`${TRON}:0xt2:0`]);
    const fromZero = follower(false, TRON);
    await fromZero.refresh();
    expect(knowledge(restarted, [])).toEqual(knowledge(fromZero, []));
  });

  it('a save that dies before its commit leaves the previous checkpoint whole: a restart reads from there and knows everything', async () => {
    const events = history();
    const first = follower(true);
    await first.refresh();
    await first.saveCheckpoint(new Date());
    const before = events.appended();
    await events.account(ETHEREUM, 'dave', '0xDA7E000000000000000000000000000000000DA7E');
    await events.detected(ETHEREUM, '0xd6', 0);
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd4', 0);
    await first.refresh();
    // the process dies inside the save's transaction, after the position moved and the addresses were written
    await sql`create function fail_checkpoint() returns trigger language plpgsql as $$ begin raise exception 'crash inside the checkpoint'; end $$`.execute(infrastructure.db);
    await sql`create trigger fail_checkpoint before insert or delete on chain_watcher_unconfirmed execute function fail_checkpoint()`.execute(infrastructure.db);
    try {
      await expect(first.saveCheckpoint(new Date())).rejects.toThrow('crash inside the checkpoint');
    } finally {
      await sql`drop trigger fail_checkpoint on chain_watcher_unconfirmed`.execute(infrastructure.db);
      await sql`drop function fail_checkpoint()`.execute(infrastructure.db);
    }
    const addresses = await sql<{ count: string }>`select count(*)::text as count from chain_watcher_addresses where chain_id = ${ETHEREUM} and org_id is not null and external_user_id = 'dave'`.execute(infrastructure.db);
    expect(addresses.rows).toEqual([{ count: '0' }]);

    const restarted = follower(true);
    await restarted.refresh();
    expect(restarted.eventsRead).toBe(events.appended() - before);
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(restarted, probes)).toEqual(knowledge(fromZero, probes));
    expect(restarted.unconfirmed.has(`${ETHEREUM}:0xd6:0`)).toBe(true);
    expect(restarted.unconfirmed.has(`${ETHEREUM}:0xd4:0`)).toBe(false);
  });

  describe('a chain watcher restarted from its checkpoint, crashed before and after the save', () => {
  let accounts: DepositAccountServices;
  const orgId = randomUUID();
  const lockSessions: WatcherLockSession[] = [];
  const clock = () => new Date();

  beforeAll(() => {
    accounts = { store: infrastructure.store, clock, addresses: createDepositAddressBook(infrastructure.signer!) };
  });
  afterAll(async () => {
    for (const locks of lockSessions) await locks.close();
  });

  const watcher = () => {
    const locks = new WatcherLockSession(infrastructure.databaseTarget, logger);
    lockSessions.push(locks);
    return new ChainWatcher({ gateway: fixture.devnet.gateway(TRON_SHASTA), services: { store: infrastructure.store, clock }, db: infrastructure.db, locks, logger, pollIntervalMs: 20 });
  };
  const address = async (user: string) => (await getOrCreateDepositAccount(accounts, { orgId, chainId: TRON_SHASTA, externalUserId: user }, { actor: 'test' })).account.properties.address;
  const depositEvents = async (type: string) =>
    (await infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => event.data.chainId === TRON_SHASTA && event.metadata.orgId === orgId && event.type === type).map((event) => String(event.data.txHash));
  const available = async () => (await loadAggregate(infrastructure.store, streams.ledger(orgId, 'tron:shasta/slip44:195'), ledgerDecider)).state;
  const checkpoint = async () => (await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON_SHASTA}`.execute(infrastructure.db)).rows[0]?.position;

  it('every deposit is recorded once and confirmed once, the ledger exact, whichever side of the save the process dies on', async () => {
    const controls = fixture.devnet.controls(TRON_SHASTA);
    const first = await controls.deposit({ toAddress: await address('first'), asset: 'native', amount: 1_000_000n });
    expect(await watcher().catchUp()).toBe(true);
    const saved = await checkpoint();
    expect(saved).toBeDefined();

    // dies before the save: a new account's deposit recorded, then the cursor cannot move
    const second = await controls.deposit({ toAddress: await address('second'), asset: 'native', amount: 2_000_000n });
    await sql`create function fail_cursor() returns trigger language plpgsql as $$ begin raise exception 'crash before the save'; end $$`.execute(infrastructure.db);
    await sql`create trigger fail_cursor before update on chain_watcher_cursors execute function fail_cursor()`.execute(infrastructure.db);
    try {
      await expect(watcher().catchUp()).rejects.toThrow('crash before the save');
    } finally {
      await sql`drop trigger fail_cursor on chain_watcher_cursors`.execute(infrastructure.db);
      await sql`drop function fail_cursor()`.execute(infrastructure.db);
    }
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash]);
    expect(await checkpoint()).toBe(saved);

    // a new process starts from the old checkpoint: scans the block again, records nothing twice
    await watcher().catchUp();
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash]);
    const savedAfter = await checkpoint();
    expect(BigInt(savedAfter!)).toBeGreaterThan(BigInt(saved!));

    // dies right after the save: the next process starts from it, confirms each deposit once
    const third = await controls.deposit({ toAddress: await address('first'), asset: 'native', amount: 4_000_000n });
    await controls.mine(5);
    await watcher().catchUp();
    await watcher().catchUp();
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash, third.txHash]);
    expect((await depositEvents('DepositConfirmed')).sort()).toEqual([first.txHash, second.txHash, third.txHash].sort());
    expect(await available()).toEqual({ available: 7_000_000n, pending: 0n, held: 0n });
  });
});
});
