import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmDeposit, confirmDeposits, recordDeposit, recordDeposits, revertDeposit, type DepositServices, type ObservedTransfer } from '../../src/application/deposits.js';
import { LedgerBatcher } from '../../src/application/ledger-batches.js';
import { loadAggregate } from '../../src/application/command-handler.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { depositsProjection } from '../../src/projections/deposits.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { countingBatcher, observed, ownerOf, settleDeposits, webhooksOf } from '../support/deposits.js';
import { tableHash } from '../support/stream-totals-projection.js';

const ETH = 'eip155:1/slip44:60';
const ETH_TOKEN = { id: ETH, name: 'Ether', symbol: 'ETH', decimals: 18, address: '' };
const USDT_ADDRESS = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const metadata = { actor: 'watcher:test' };

describe('deposits: recorded once, credited once, only when confirmed', () => {
  let service: TestService;
  let services: DepositServices;
  let acme: { orgId: string; apiKey: string };

  const ledgerOf = async (orgId: string, tokenId: string) => (await loadAggregate(service.infrastructure.store, streams.ledger(orgId, tokenId), ledgerDecider)).state;
  const portfolio = async (apiKey: string) => (await service.request('GET', '/portfolio', { apiKey })).body;
  const eventsOf = async (stream: string) => (await service.infrastructure.store.readStream(stream)).map((event) => event.type);

  beforeAll(async () => {
    service = await startTestService();
    services = { store: service.infrastructure.store, clock: service.now };
    const created = await service.bootstrap('Acme', ['alice']);
    acme = { orgId: created.organization.id, apiKey: created.apiKey };
  });
  afterAll(async () => service.stop());

  it('records a deposit as pending, credits it on confirmation, and tells the webhook each step', async () => {
    const transfer = observed(1, { amount: 1_500_000_000_000_000_000n });
    const detectedAt = service.now().toISOString();
    expect(await recordDeposit(services, transfer, ownerOf(acme.orgId, 'user-1'), metadata)).toEqual({ outcome: 'recorded' });
    await settleDeposits(service);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ available: 0n, pending: 1_500_000_000_000_000_000n, held: 0n });
    expect(await portfolio(acme.apiKey)).toEqual({
      balances: [{ chainId: 'eip155:1', tokenId: ETH, available: '0', pending: '1500000000000000000', Token: ETH_TOKEN }],
    });

    service.advance(60_000);
    const confirmedAt = service.now().toISOString();
    await confirmDeposit(services, transfer, 12, metadata);
    await settleDeposits(service);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ available: 1_500_000_000_000_000_000n, pending: 0n, held: 0n });
    expect(await portfolio(acme.apiKey)).toEqual({
      balances: [{ chainId: 'eip155:1', tokenId: ETH, available: '1500000000000000000', pending: '0', Token: ETH_TOKEN }],
    });

    const payload = {
      chainId: 'eip155:1',
      txnHash: transfer.txHash,
      tokenId: ETH,
      amount: '1500000000000000000',
      externalUserId: 'user-1',
      accountChainId: 'eip155:1',
      senderAddress: transfer.from,
      blockNumber: 1001,
      confirmations: 0,
      // CONTRACT §6's reconciliation fields
      outputIndex: transfer.index,
      toAddress: transfer.to,
      status: 'detected',
      Token: ETH_TOKEN,
    };
    expect(await webhooksOf(service, acme.orgId, 'deposit.detected')).toEqual([{ type: 'deposit.detected', timestamp: detectedAt, payload }]);
    expect(await webhooksOf(service, acme.orgId, 'deposit.confirmed')).toEqual([
      { type: 'deposit.confirmed', timestamp: confirmedAt, payload: { ...payload, confirmations: 12, status: 'confirmed' } },
    ]);
    const balance = { chainId: 'eip155:1', tokenId: ETH, reason: 'deposit', Token: ETH_TOKEN };
    expect(await webhooksOf(service, acme.orgId, 'balance.updated')).toEqual([
      { type: 'balance.updated', timestamp: detectedAt, payload: { ...balance, available: '0', pending: '1500000000000000000' } },
      { type: 'balance.updated', timestamp: confirmedAt, payload: { ...balance, available: '1500000000000000000', pending: '0' } },
    ]);

    // a watcher reporting the confirmation again changes nothing
    await confirmDeposit(services, transfer, 13, metadata);
    expect(await eventsOf(streams.deposit('eip155:1', transfer.txHash, 0))).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await eventsOf(streams.ledger(acme.orgId, ETH))).toEqual(['DepositPending', 'DepositCredited']);
  });

  it('records a transfer reported 20 times at once, by 20 "processes", exactly once', async () => {
    const transfer = observed(2, { amount: 7_000_000_000_000_000n });
    const before = await ledgerOf(acme.orgId, ETH);
    // each call its own queue: they race like separate processes, on the stream revisions alone
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => recordDeposit({ ...services, ledgerBatcher: new LedgerBatcher() }, transfer, ownerOf(acme.orgId, 'user-2'), metadata)),
    );
    expect(outcomes.filter((result) => result.outcome === 'recorded')).toHaveLength(1);
    expect(outcomes.filter((result) => result.outcome === 'duplicate')).toHaveLength(19);
    expect(await eventsOf(streams.deposit('eip155:1', transfer.txHash, 0))).toEqual(['DepositDetected']);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, pending: before.pending + 7_000_000_000_000_000n });
    // the same hash in another case is the same deposit
    expect(await recordDeposit(services, { ...transfer, txHash: transfer.txHash.toUpperCase().replace('0X', '0x') }, ownerOf(acme.orgId, 'user-2'), metadata)).toEqual({
      outcome: 'duplicate',
    });
    await confirmDeposit(services, transfer, 12, metadata);
  });

  it('decided on what a watcher knows instead of a read, 20 racing reports and 20 racing confirmations still record and credit once', async () => {
    const transfer = observed(20, { amount: 9_000_000_000_000_000n });
    const depositStream = streams.deposit('eip155:1', transfer.txHash, 0);
    const before = await ledgerOf(acme.orgId, ETH);
    const racing = () => ({ ...services, ledgerBatcher: new LedgerBatcher() });
    // every report believes the transfer unseen: all but one find the stream made at append
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => recordDeposit(racing(), transfer, ownerOf(acme.orgId, 'user-20'), metadata, 'unseen')));
    expect(outcomes.filter((result) => result.outcome === 'recorded')).toHaveLength(1);
    expect(outcomes.filter((result) => result.outcome === 'duplicate')).toHaveLength(19);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, pending: before.pending + 9_000_000_000_000_000n });

    // every confirmation decides on the detection as followed (revision 0); a stale one is refused by
    // the ledger or conflicts at append, and is decided again on a read: one credit, no error
    const [detected] = await service.infrastructure.store.readStream(depositStream);
    const known = { detected: detected!.data as never, revision: detected!.revision };
    await Promise.all(Array.from({ length: 20 }, () => confirmDeposit(racing(), transfer, 12, metadata, known)));
    expect(await eventsOf(depositStream)).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + 9_000_000_000_000_000n });
    // long after, the same knowledge changes nothing
    await confirmDeposit(services, transfer, 30, metadata, known);
    expect(await eventsOf(depositStream)).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + 9_000_000_000_000_000n });
  });

  it("a block's transfers to one ledger are one decision; one recorded before (its stream guessed unseen) is a duplicate, and the others are recorded once", async () => {
    const [already, first, second] = [21, 22, 23].map((n) => observed(n, { amount: 1_000_000_000_000_000n * BigInt(n), blockNumber: 2000, blockHash: `0xb${'21'.padStart(63, '0')}` }));
    expect(await recordDeposit(services, already!, ownerOf(acme.orgId, 'user-21'), metadata)).toEqual({ outcome: 'recorded' });
    const before = await ledgerOf(acme.orgId, ETH);
    const { batcher, decisions } = countingBatcher();
    const block = [already!, first!, second!].map((transfer, n) => ({ transfer, owner: ownerOf(acme.orgId, `user-${21 + n}`), known: 'unseen' as const, confirmations: 12 }));
    // a wrong guess conflicts at append: the decision is made again on reads, without the recorded one
    expect(await recordDeposits({ ...services, ledgerBatcher: batcher }, block, metadata)).toEqual(['duplicate', 'recorded', 'recorded']);
    expect(decisions()).toBe(1);
    for (const transfer of [first!, second!]) expect(await eventsOf(streams.deposit('eip155:1', transfer.txHash, 0))).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await eventsOf(streams.deposit('eip155:1', already!.txHash, 0))).toEqual(['DepositDetected']);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + 22_000_000_000_000_000n + 23_000_000_000_000_000n });
    // the same block again (a watcher restarted mid-block), this time read: nothing written twice
    const ledgerEvents = (await eventsOf(streams.ledger(acme.orgId, ETH))).length;
    expect(await recordDeposits(services, block.map(({ known: _known, ...rest }) => rest), metadata)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(await eventsOf(streams.ledger(acme.orgId, ETH))).toHaveLength(ledgerEvents);
    await confirmDeposit(services, already!, 12, metadata);
  });

  it('a transfer given twice in one report (its stream in the same decision twice) is recorded once, the repeat a duplicate', async () => {
    const [transfer, other] = [24, 25].map((n) => observed(n, { amount: 1_000_000_000_000_000n, blockNumber: 2001, blockHash: `0xb${'24'.padStart(63, '0')}` }));
    const before = await ledgerOf(acme.orgId, ETH);
    const seen = (t: ObservedTransfer, user: string) => ({ transfer: t, owner: ownerOf(acme.orgId, user), known: 'unseen' as const, confirmations: 12 });
    // the repeat differs only in its hash's case: the same deposit
    const repeat = { ...transfer!, txHash: transfer!.txHash.toUpperCase().replace('0X', '0x') };
    expect(await recordDeposits(services, [seen(transfer!, 'user-24'), seen(other!, 'user-25'), seen(repeat, 'user-24')], metadata)).toEqual(['recorded', 'recorded', 'duplicate']);
    expect(await eventsOf(streams.deposit('eip155:1', transfer!.txHash, 0))).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + 2_000_000_000_000_000n });
  });

  it('deposits of one ledger due together are confirmed in one decision; one reverted meanwhile is refused alone, the others credited once', async () => {
    const transfers = [31, 32, 33].map((n) => observed(n, { amount: 1_000_000_000_000_000n * BigInt(n) }));
    for (const [n, transfer] of transfers.entries()) await recordDeposit(services, transfer, ownerOf(acme.orgId, `user-${31 + n}`), metadata);
    const known = await Promise.all(
      transfers.map(async (transfer) => {
        const [detected] = await service.infrastructure.store.readStream(streams.deposit('eip155:1', transfer.txHash, 0));
        return { detected: detected!.data as never, revision: detected!.revision };
      }),
    );
    await revertDeposit(services, transfers[1]!, 'reorg', metadata);
    const before = await ledgerOf(acme.orgId, ETH);
    const { batcher, decisions } = countingBatcher();
    const due = transfers.map((ref, n) => ({ ref, confirmations: 12, known: known[n]! }));
    // the reverted one is decided on what the caller knew (detected), refused on a read, and answered alone
    const answers = await confirmDeposits({ ...services, ledgerBatcher: batcher }, due, metadata);
    expect(answers.map((answer) => answer?.code ?? null)).toEqual([null, 'DEPOSIT_REVERTED', null]);
    expect(await eventsOf(streams.deposit('eip155:1', transfers[0]!.txHash, 0))).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await eventsOf(streams.deposit('eip155:1', transfers[1]!.txHash, 0))).toEqual(['DepositDetected', 'DepositReverted']);
    expect(await eventsOf(streams.deposit('eip155:1', transfers[2]!.txHash, 0))).toEqual(['DepositDetected', 'DepositConfirmed']);
    const credited = 31_000_000_000_000_000n + 33_000_000_000_000_000n;
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + credited, pending: before.pending - credited });
    expect(decisions()).toBeLessThanOrEqual(3);
    // reported again: nothing more
    expect((await confirmDeposits(services, due, metadata)).map((answer) => answer?.code ?? null)).toEqual([null, 'DEPOSIT_REVERTED', null]);
    expect(await ledgerOf(acme.orgId, ETH)).toEqual({ ...before, available: before.available + credited, pending: before.pending - credited });
  });

  it('reverts a deposit before confirmation: never credited, pending back, confirmation refused', async () => {
    const globex = (await service.bootstrap('Globex', ['gina'])).organization.id;
    const transfer = observed(3, { amount: 2_000_000n, asset: USDT_ADDRESS.toLowerCase() });
    const usdt = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
    expect(await recordDeposit(services, transfer, ownerOf(globex, 'user-3'), metadata)).toEqual({ outcome: 'recorded' });
    expect(await ledgerOf(globex, usdt)).toEqual({ available: 0n, pending: 2_000_000n, held: 0n });
    await revertDeposit(services, transfer, 'block 1003 was replaced', metadata);
    await revertDeposit(services, transfer, 'reported again', metadata); // idempotent
    expect(await ledgerOf(globex, usdt)).toEqual({ available: 0n, pending: 0n, held: 0n });
    await expect(confirmDeposit(services, transfer, 12, metadata)).rejects.toMatchObject({ code: 'DEPOSIT_REVERTED' });
    expect(await eventsOf(streams.ledger(globex, usdt))).toEqual(['DepositPending', 'DepositPendingReverted']);
    await settleDeposits(service);
    // the row stays, reverted, so an accountant sees the transfer that did not count (CONTRACT §6)
    expect(await service.infrastructure.db.selectFrom('deposits').select(['status', 'confirmed']).where('tx_hash', '=', transfer.txHash).execute()).toEqual([
      { status: 'reverted', confirmed: false },
    ]);
    expect(await webhooksOf(service, globex, 'deposit.confirmed')).toEqual([]);
    expect((await webhooksOf(service, globex, 'balance.updated')).map((webhook) => webhook.payload.pending)).toEqual(['2000000', '0']);

    // the same transaction mined again in a later block counts, once
    expect(await recordDeposit(services, { ...transfer, blockNumber: 1010, blockHash: '0xb1010' }, ownerOf(globex, 'user-3'), metadata)).toEqual({ outcome: 'recorded' });
    await confirmDeposit(services, transfer, 12, metadata);
    expect(await ledgerOf(globex, usdt)).toEqual({ available: 2_000_000n, pending: 0n, held: 0n });
    await expect(revertDeposit(services, transfer, 'too late', metadata)).rejects.toMatchObject({ code: 'DEPOSIT_ALREADY_CONFIRMED' });
  });

  it('records below-minimum and unattributed deposits but never credits or announces them', async () => {
    const initech = (await service.bootstrap('Initech', ['ian'])).organization.id;
    const dust = observed(4, { amount: 99_999_999_999_999n }); // one wei under 0.0001 ETH
    const stray = observed(5, { amount: 5_000_000_000_000_000_000n });
    expect(await recordDeposit(services, dust, ownerOf(initech, 'user-4'), metadata)).toEqual({ outcome: 'recorded' });
    expect(await recordDeposit(services, stray, null, metadata)).toEqual({ outcome: 'recorded' });
    await confirmDeposit(services, dust, 12, metadata);
    await confirmDeposit(services, stray, 12, metadata);
    expect(await eventsOf(streams.ledger(initech, ETH))).toEqual([]);
    const confirmed = await service.infrastructure.store.readStream(streams.deposit('eip155:1', stray.txHash, 0));
    expect(confirmed.map((event) => [event.type, event.data.credit ?? event.data.credited])).toEqual([
      ['DepositDetected', 'unattributed'],
      ['DepositConfirmed', false],
    ]);
    await settleDeposits(service);
    for (const type of ['deposit.detected', 'deposit.confirmed', 'balance.updated']) expect(await webhooksOf(service, initech, type)).toEqual([]);
    const rows = await service.infrastructure.db.selectFrom('deposits').select(['tx_hash', 'credit', 'org_id']).where('tx_hash', 'in', [dust.txHash, stray.txHash]).execute();
    expect(rows.sort((a, b) => a.tx_hash.localeCompare(b.tx_hash))).toEqual([
      { tx_hash: dust.txHash, credit: 'below_minimum', org_id: initech },
      { tx_hash: stray.txHash, credit: 'unattributed', org_id: null },
    ]);
  });

  it('ignores an asset outside the catalog and writes nothing', async () => {
    const head = await service.infrastructure.store.headPosition();
    expect(await recordDeposit(services, observed(6, { asset: '0x000000000000000000000000000000000000dead' }), ownerOf(acme.orgId, 'user-6'), metadata)).toEqual({
      outcome: 'ignored',
    });
    expect(await recordDeposit(services, observed(7, { chainId: 'eip155:999999' }), ownerOf(acme.orgId, 'user-6'), metadata)).toEqual({ outcome: 'ignored' });
    expect(await service.infrastructure.store.headPosition()).toBe(head);
  });
});

/** Chains and tokens of the load test: the asset a watcher reports, its catalog id and minimum. */
const ASSETS = [
  { chainId: 'eip155:1', asset: 'native', tokenId: ETH, unit: 10n ** 14n },
  { chainId: 'eip155:1', asset: USDT_ADDRESS, tokenId: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7', unit: 10n ** 6n },
  { chainId: 'eip155:137', asset: '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359', tokenId: 'eip155:137/erc20:0x3c499c542cef5e3811e1192ce70d8cc03d5c3359', unit: 10n ** 6n },
  { chainId: 'bip122:000000000019d6689c085ae165831e93', asset: 'native', tokenId: 'bip122:000000000019d6689c085ae165831e93/slip44:0', unit: 10n ** 4n },
  { chainId: 'tron:0x00000000000000000000000000000000', asset: 'native', tokenId: 'tron:0x00000000000000000000000000000000/slip44:195', unit: 10n ** 6n },
  { chainId: 'xrpl:mainnet', asset: 'native', tokenId: 'xrpl:mainnet/slip44:144', unit: 10n ** 5n },
];

/** Runs `tasks` with at most `parallelism` in flight. */
const inParallel = async (tasks: (() => Promise<void>)[], parallelism: number) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallelism }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
};

describe('deposits at volume: 1,000 deposits, 100 users, 6 tokens on 5 chains, 2 organizations', () => {
  let service: TestService;
  let services: DepositServices;
  const orgs: { orgId: string; apiKey: string }[] = [];

  beforeAll(async () => {
    service = await startTestService();
    services = { store: service.infrastructure.store, clock: service.now };
    for (const name of ['Acme', 'Globex']) {
      const created = await service.bootstrap(name, [`${name.toLowerCase()}-admin`]);
      orgs.push({ orgId: created.organization.id, apiKey: created.apiKey });
    }
  });
  afterAll(async () => service.stop());

  it('credits every creditable deposit exactly once, lists each once, and rebuilds identically', async () => {
    const deposits = Array.from({ length: 1000 }, (_, n) => {
      const { chainId, asset, tokenId, unit } = ASSETS[n % ASSETS.length]!;
      const user = n % 100;
      const org = orgs[Math.floor(user / 50)]!;
      // every 17th is dust (one base unit under the minimum); amounts run far past 2^53 on the 18-decimal token
      const amount = n % 17 === 0 ? unit - 1n : unit * BigInt(1 + (n % 9)) + BigInt(n);
      const transfer: ObservedTransfer = observed(10_000 + n, { chainId, asset, amount, index: n % 3, destinationTag: chainId === 'xrpl:mainnet' ? user + 1 : null });
      if (chainId.startsWith('xrpl:')) transfer.txHash = transfer.txHash.slice(2).toUpperCase();
      return { transfer, tokenId, org, user: `user-${user}`, creditable: n % 17 !== 0 };
    });

    await inParallel(
      deposits.map(({ transfer, org, user }) => async () => {
        expect(await recordDeposit(services, transfer, ownerOf(org.orgId, user, transfer.chainId), metadata)).toEqual({ outcome: 'recorded' });
        await confirmDeposit(services, transfer, 12, metadata);
      }),
      50,
    );
    await settleDeposits(service);

    for (const org of orgs) {
      const portfolio = (await service.request('GET', '/portfolio', { apiKey: org.apiKey })).body as { balances: { tokenId: string; available: string; pending: string }[] };
      for (const { tokenId } of ASSETS) {
        const expected = deposits
          .filter((deposit) => deposit.org === org && deposit.tokenId === tokenId && deposit.creditable)
          .reduce((sum, deposit) => sum + deposit.transfer.amount, 0n);
        const ledger = (await loadAggregate(service.infrastructure.store, streams.ledger(org.orgId, tokenId), ledgerDecider)).state;
        expect(ledger).toEqual({ available: expected, pending: 0n, held: 0n });
        expect(portfolio.balances.find((balance) => balance.tokenId === tokenId)).toMatchObject({ available: expected.toString(), pending: '0' });
      }

      const listed: string[] = [];
      for (let cursor: string | null = null, pages = 0; pages === 0 || cursor !== null; pages++) {
        const query: string = `/payments?limit=150${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await service.request('GET', query, { apiKey: org.apiKey })).body as { payments: { txnHash: string }[]; nextCursor: string | null };
        listed.push(...page.payments.map((payment) => payment.txnHash));
        cursor = page.nextCursor;
      }
      const expectedHashes = deposits.filter((deposit) => deposit.org === org && deposit.creditable).map((deposit) => deposit.transfer.txHash);
      expect(listed).toHaveLength(expectedHashes.length);
      expect(new Set(listed)).toEqual(new Set(expectedHashes));
      expect((await webhooksOf(service, org.orgId, 'deposit.confirmed')).length).toBe(expectedHashes.length);
    }

    // a rebuild from position 0 gives the same tables and sends nothing again
    const db = service.infrastructure.db;
    const tables = ['deposits', 'balances'];
    const live = await Promise.all(tables.map((table) => tableHash(db, table)));
    const deliveries = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
    await rebuildProjection(db, service.infrastructure.store, depositsProjection);
    await rebuildProjection(db, service.infrastructure.store, balancesProjection);
    await settleDeposits(service);
    expect(await Promise.all(tables.map((table) => tableHash(db, table)))).toEqual(live);
    expect(await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow()).toEqual(deliveries);
  }, 180_000);
});
