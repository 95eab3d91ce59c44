import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerBatcher } from '../../src/application/ledger-batches.js';
import { createWithdrawal, type WithdrawalServices } from '../../src/application/withdrawals.js';
import { streams } from '../../src/domain/streams.js';
import { DomainError } from '../../src/errors.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, ledgerBalances, stopWithdrawalProcessors, withdrawalServicesOf } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const AMOUNT = 1_000_000_000_000_000n;

const settle = (promise: Promise<{ id: string }>) =>
  promise.then(
    ({ id }) => ({ created: id }),
    (error: unknown) => {
      if (!(error instanceof DomainError)) throw error;
      return { refused: error.code, details: error.details };
    },
  );

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/**
 * POST /withdrawals reads nothing in its ledger's turn on a first try: its append claims the
 * reference at no_stream and (deciding on the organization as memory holds it) checks that the
 * organization's stream is still at that revision. A taken reference refuses the batch's append;
 * the request that named it reads its claim on its next try (with the organization's revision, in
 * one multi-stream revision read) and is refused naming the withdrawal that holds it, and the
 * batch's other requests are decided again and appended without it.
 */
describe('reference claims checked by the append, read only after a conflict (real PostgreSQL)', () => {
  let service: TestService;
  let services: WithdrawalServices;

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    await stopWithdrawalProcessors(service);
    services = withdrawalServicesOf(service);
  });
  afterAll(async () => service.stop());

  it('13 requests queued behind an append read no claim; a taken reference and a reference twice in the batch are still refused, naming their withdrawal', async () => {
    const created = await service.bootstrap('claims', ['claims-initiator'], { minWithdrawalSigners: 1 });
    const orgId = created.organization.id;
    await fundLedger(service, orgId, 'eip155:1', 100n * AMOUNT);
    await fundGasWallet(service, created.apiKey, orgId, 'eip155:1', 10n ** 16n);
    const caller = { orgId, userId: created.users[0]!.id };
    const request = (reference: string) => ({ chainId: 'eip155:1', tokenId: ETH, amount: AMOUNT.toString(), recipient: RECIPIENT, reference });
    const taken = await createWithdrawal(services, caller, request('taken'), { actor: caller.userId });

    // the first request's append waits until every other request queued behind it on the ledger
    const store = service.infrastructure.store;
    let releaseFirstAppend = () => undefined as void;
    const firstAppendHeld = new Promise<void>((resolve) => (releaseFirstAppend = resolve));
    let appends = 0;
    const revisionReads: string[][] = [];
    const watched: EventStore = {
      ...store,
      appendMany: async (batch) => {
        if (appends++ === 0) await firstAppendHeld;
        return store.appendMany(batch);
      },
      streamRevisions: (asked) => {
        revisionReads.push([...asked]);
        return store.streamRevisions(asked);
      },
    };
    let queued = 0;
    const batcher = new (class extends LedgerBatcher {
      override decide: LedgerBatcher['decide'] = (...args) => {
        queued++;
        return super.decide(...args);
      };
    })();
    const watchedServices = { ...services, store: watched, ledgerBatcher: batcher };
    const create = (reference: string) => settle(createWithdrawal(watchedServices, caller, request(reference), { actor: caller.userId }));

    const first = create('first');
    await until(() => appends === 1);
    revisionReads.length = 0;
    const fresh = Array.from({ length: 10 }, (_, n) => `fresh-${n}`);
    const rest = [...fresh, 'taken', 'twin', 'twin'].map(create);
    // every request queued on the ledger while the first append is held (those that arrived after
    // the second twin, which waits for the batch naming its reference, are decided after it landed)
    await until(() => queued === 14);
    const whileHeld = revisionReads.splice(0);
    releaseFirstAppend();
    const [firstOutcome, ...outcomes] = await Promise.all([first, ...rest]);

    expect(firstOutcome).toEqual({ created: expect.any(String) });
    expect(outcomes.slice(0, 10)).toEqual(Array(10).fill({ created: expect.any(String) }));
    expect(outcomes[10]).toEqual({ refused: 'DUPLICATE_REFERENCE', details: { withdrawalId: taken.id, reference: 'taken' } });
    // the 'twin' that queued second waits for the next batch (one stream is never named twice in a batch) and finds the first's claim
    const twins = outcomes.slice(11);
    const winner = twins.find((outcome) => 'created' in outcome) as { created: string } | undefined;
    expect(winner).toBeDefined();
    expect(twins.filter((outcome) => outcome !== winner)).toEqual([{ refused: 'DUPLICATE_REFERENCE', details: { withdrawalId: winner!.created, reference: 'twin' } }]);

    const reference = (name: string) => streams.withdrawalReference(orgId, name);
    const organization = streams.organization(orgId);
    expect(whileHeld).toEqual([]);
    // only the tries after a conflict read: the taken reference's and the second twin's, each with the organization's revision
    expect(new Set(revisionReads.flat())).toEqual(new Set([reference('taken'), reference('twin'), organization]));
    expect(revisionReads.flat().filter((stream) => stream !== organization).sort()).toEqual([reference('taken'), reference('twin')].sort());
    expect(await ledgerBalances(service, orgId, ETH)).toEqual({ available: 87n * AMOUNT, pending: 0n, held: 13n * AMOUNT });
  });
});
