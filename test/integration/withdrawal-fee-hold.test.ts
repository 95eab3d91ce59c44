import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceWithdrawal } from '../../src/processes/withdrawal-processor/advance.js';
import { bitcoinWalletsOf } from '../../src/processes/withdrawal-processor/transactions.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { DomainError } from '../../src/errors.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const btc = nativeToken(BITCOIN);

/**
 * Bitcoin pays the network from the organization's own balance: the fee is held beside the amount
 * from the moment the transaction is recorded, so a withdrawal created between the signature and
 * the confirmation cannot take the balance the fee is paid from (the ledger would then show more
 * than the chain holds).
 */
describe('withdrawal processor: the Bitcoin fee is held, not just checked', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('withdrawal_fee_hold', { projections: 'running', referencePrefix: 'fee' });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const ledger = () => fixture.ledger(btc.id);
  const withdraw = (amount: bigint) => fixture.withdraw({ chainId: BITCOIN, tokenId: btc.id, amount, recipient: externalAddress(BITCOIN) });
  /** what the organization's Bitcoin addresses hold on chain */
  const onChain = async () => {
    const { byAddress } = await bitcoinWalletsOf(fixture.workerServices(BITCOIN), fixture.orgId);
    const outputs = await fixture.devnet.gateway(BITCOIN).unspentOutputs([...byAddress.keys()]);
    return outputs.reduce((total, output) => total + output.amount, 0n);
  };

  it('a withdrawal created between signing and completion cannot take the fee’s balance; the ledger equals the chain at the end', async () => {
    await fixture.credit(BITCOIN, 'native', 1_000_000n);
    for (const runner of fixture.runners) await runner.catchUp();
    expect(await onChain()).toBe(1_000_000n);

    const first = await withdraw(600_000n);
    await advanceWithdrawal(fixture.workerServices(BITCOIN), first.id); // signed and broadcast, not mined
    const sent = await fixture.withdrawal(first.id);
    if (sent.status === 'None' || !sent.signedTransaction) throw new Error('not signed');
    expect(sent.status).toBe('Processing');
    const fee = BigInt(sent.signedTransaction.fee);
    expect(fee).toBeGreaterThan(0n);
    // the amount and the fee are held: what is left to withdraw is what the chain will hold after it
    expect(await ledger()).toEqual({ available: 400_000n - fee, pending: 0n, held: 600_000n + fee });

    // the race: a second withdrawal asking for what the first one's amount left
    const refused = await withdraw(400_000n).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    const second = await withdraw(200_000n);

    await fixture.mineConfirmations(BITCOIN);
    const worker = fixture.withdrawalProcessor(BITCOIN);
    for (let pass = 0; ; pass++) {
      const statuses = [await fixture.withdrawal(first.id), await fixture.withdrawal(second.id)].map((withdrawal) => withdrawal.status);
      if (statuses.every((status) => status === 'Completed' || status === 'Failed')) break;
      if (pass > 10) throw new Error(`not finished: ${statuses.join(', ')}`);
      await worker.runPass();
      await fixture.mineConfirmations(BITCOIN);
    }
    expect(await fixture.withdrawal(first.id)).toMatchObject({ status: 'Completed', fee: fee.toString() });
    const done = await fixture.withdrawal(second.id);
    expect(done).toMatchObject({ status: 'Completed' });
    const secondFee = done.status === 'None' ? 0n : BigInt(done.fee!);
    // the ledger follows the chain: nothing held, what is available is exactly what the addresses hold
    expect(await ledger()).toEqual({ available: 1_000_000n - 600_000n - fee - 200_000n - secondFee, pending: 0n, held: 0n });
    expect(await onChain()).toBe((await ledger()).available);
  });
});
