import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeToken } from '../../src/catalog/tokens.js';
import { resolveWithdrawal } from '../../src/processes/withdrawal-processor/resolve.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';
import { streams } from '../../src/domain/streams.js';

const XRP = 'xrpl:mainnet';

describe('an operator resolves a withdrawal without an outcome; the chain has the last word', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('withdrawal_resolve', { projections: 'caught-up' });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const services = () => fixture.workerServices(XRP);
  const decision = (outcome: 'completed' | 'failed') => ({ outcome, reason: 'checked on the explorer', operator: 'olga' });

  it('refuses failed while the transaction is pending, refuses completed until it is mined, then completes it', async () => {
    const token = nativeToken(XRP);
    await fixture.credit(XRP, 'native', 40_000_000n);
    const created = await fixture.withdraw({ chainId: XRP, tokenId: token.id, amount: 5_000_000n, recipient: externalAddress(XRP) });
    await fixture.withdrawalProcessor(XRP).runPass(); // signed and sent: pending in the node
    await expect(resolveWithdrawal(services(), created.id, decision('failed'))).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_PENDING', message: expect.stringContaining('pending') });
    await expect(resolveWithdrawal(services(), created.id, decision('completed'))).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_PENDING' });
    await fixture.devnet.controls(XRP).mine(1);
    const completed = await resolveWithdrawal(services(), created.id, decision('completed'));
    expect(completed).toMatchObject({ status: 'Completed' });
    await expect(resolveWithdrawal(services(), created.id, decision('failed'))).rejects.toMatchObject({ code: 'WITHDRAWAL_ALREADY_PROCESSED' });
  });

  it('fails one the chain does not hold, with the operator named in txnError and as the actor, the hold released', async () => {
    const token = nativeToken(XRP);
    await fixture.credit(XRP, 'native', 40_000_000n);
    const before = await fixture.ledger(token.id);
    const created = await fixture.withdraw({ chainId: XRP, tokenId: token.id, amount: 5_000_000n, recipient: externalAddress(XRP) });
    await fixture.devnet.controls(XRP).setFault('broadcast_error', 1_000);
    await fixture.withdrawalProcessor(XRP).runPass(); // signed, refused: no outcome yet
    await fixture.devnet.controls(XRP).setFault('broadcast_error', 0);
    expect((await fixture.withdrawal(created.id)).status).toBe('Processing');
    await expect(resolveWithdrawal(services(), created.id, { ...decision('failed'), reason: ' ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    const failed = await resolveWithdrawal(services(), created.id, decision('failed'));
    expect(failed).toMatchObject({ status: 'Failed', txnError: 'Resolved as failed by olga: checked on the explorer' });
    expect(await fixture.ledger(token.id)).toMatchObject({ available: before.available, held: before.held });
    const recorded = await fixture.infrastructure.store.readStream(streams.withdrawal(created.id));
    expect(recorded.at(-1)).toMatchObject({ type: 'WithdrawalFailed', metadata: expect.objectContaining({ actor: 'operator:olga' }) });
  });
});
