import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetDb } from '../../src/chains/devnet/index.js';
import { BroadcastRejectedError, type BroadcastRefusal, type ChainGateway } from '../../src/chains/gateway.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { XRP_LEDGER_WINDOW } from '../../src/chains/bitcoin/spend-planning.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const XRP = 'xrpl:mainnet';
const TRON = 'tron:0x00000000000000000000000000000000';

/**
 * What a node answers when the bytes it was given did reach the chain, but the answer says
 * otherwise: the answer lost on the way (a time-out), or a late answer from a node that has seen
 * the transaction mined already: Bitcoin "inputs missing or spent" (spent by this very
 * transaction), XRP tefPAST_SEQ (its sequence used by this very transaction), Tron a duplicate.
 * A lagging node does not find the transaction for the next lookups either.
 */
type Answer = { kind: 'lost' } | { kind: 'late'; message: string; refusal: BroadcastRefusal };

const LATE_ANSWERS: Record<string, Answer> = {
  [BITCOIN]: { kind: 'late', message: 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}', refusal: 'conflict' },
  [XRP]: { kind: 'late', message: 'tefPAST_SEQ: This sequence number has already passed.', refusal: 'conflict' },
};

/** the devnet as a node whose first answer to a withdrawal's broadcast goes wrong after it took the bytes */
const answeringWrongOnce = (gateway: ChainGateway, answer: Answer): ChainGateway => {
  let sent: string | null = null;
  let lookupsHidden = 0;
  return {
    ...gateway,
    broadcast: async (raw, options) => {
      const accepted = await gateway.broadcast(raw, options);
      if (sent !== null || options?.purpose !== 'withdrawal') return accepted;
      sent = accepted.txHash;
      lookupsHidden = 2;
      if (answer.kind === 'lost') throw new Error('socket hang up (the answer was lost)');
      throw new BroadcastRejectedError(answer.message, answer.refusal);
    },
    transactionStatus: async (txHash) => {
      if (txHash === sent && lookupsHidden > 0) {
        lookupsHidden--;
        return { status: 'not_found' };
      }
      return gateway.transactionStatus(txHash);
    },
  };
};

describe('settlement on the devnet: a payment that reached the chain is never failed, whatever the answers said', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('settlement_devnet', { projections: 'caught-up' });
    ({ infrastructure } = fixture);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const transfersTo = (chainId: string, recipient: string) =>
    devnetDb(infrastructure.db).selectFrom('devnet_transfers').select(['tx_hash', 'amount']).where('chain_id', '=', chainId).where('to_address', '=', recipient).execute();

  const cases = [
    [BITCOIN, 'a lost answer', { kind: 'lost' }, 200_000n, 70_000n],
    [BITCOIN, 'a late "inputs missing or spent"', LATE_ANSWERS[BITCOIN]!, 200_000n, 70_000n],
    [XRP, 'a lost answer', { kind: 'lost' }, 40_000_000n, 5_000_000n],
    [XRP, 'a late tefPAST_SEQ for its own sequence', LATE_ANSWERS[XRP]!, 40_000_000n, 5_000_000n],
    [TRON, 'a lost answer', { kind: 'lost' }, 40_000_000n, 5_000_000n],
  ] as const;

  it.each(cases)('%s withdrawal, %s: Completed, paid once, the ledger equal to the chain', async (chainId, _what, answer, funded, amount) => {
    const token = nativeToken(chainId);
    if (chainId === TRON) {
      const { gasAddress } = await fixture.wallets.walletsOf(fixture.orgId, TRON);
      await fixture.devnet.controls(TRON).deposit({ toAddress: gasAddress!, asset: 'native', amount: 100_000_000n });
    }
    await fixture.credit(chainId, 'native', funded);
    if (chainId === TRON) {
      // on Tron the organization's TRX is paid from its settlement wallet (where sweeps bring it)
      const { settlementAddress } = await fixture.wallets.walletsOf(fixture.orgId, TRON);
      await fixture.devnet.controls(TRON).deposit({ toAddress: settlementAddress, asset: 'native', amount: funded });
    }
    const before = await fixture.ledger(token.id);
    const recipient = externalAddress(chainId);
    const created = await fixture.withdraw({ chainId, tokenId: token.id, amount, recipient });
    const worker = fixture.withdrawalProcessor(chainId, { gateway: answeringWrongOnce(fixture.devnet.gateway(chainId), answer) });
    for (let pass = 0; !['Completed', 'Failed'].includes((await fixture.withdrawal(created.id)).status); pass++) {
      if (pass > 12) throw new Error(`not settled: ${JSON.stringify(await fixture.withdrawal(created.id))}`);
      await worker.runPass();
      await fixture.mineConfirmations(chainId);
    }
    const settled = await fixture.withdrawal(created.id);
    expect(settled).toMatchObject({ status: 'Completed', txnError: null });
    if (settled.status === 'None') throw new Error('unreachable');
    const paid = await transfersTo(chainId, recipient);
    expect(paid).toHaveLength(1);
    expect(BigInt(paid[0]!.amount)).toBe(amount);
    // Bitcoin and XRP pay the network from the balance: the ledger lost the amount and the fee the chain took
    const fee = chainId === TRON ? 0n : BigInt(settled.fee ?? '0');
    expect(await fixture.ledger(token.id)).toMatchObject({ available: before.available - amount - fee, held: before.held });
  });

  it('an XRP withdrawal the node refuses is not failed until its LastLedgerSequence is past in a validated ledger: then Failed, the hold released, nothing paid', async () => {
    const token = nativeToken(XRP);
    await fixture.credit(XRP, 'native', 40_000_000n);
    const before = await fixture.ledger(token.id);
    const recipient = externalAddress(XRP);
    const created = await fixture.withdraw({ chainId: XRP, tokenId: token.id, amount: 5_000_000n, recipient });
    // every broadcast of it refused (each re-send of the same bytes meets a fault)
    await fixture.devnet.controls(XRP).setFault('broadcast_error', 1_000);
    const worker = fixture.withdrawalProcessor(XRP);
    await worker.runPass();
    await fixture.mineConfirmations(XRP);
    await worker.runPass();
    // refused, and still able to be validated until its LastLedgerSequence: followed, never failed on the refusal
    const waiting = await fixture.withdrawal(created.id);
    expect(waiting.status).toBe('Processing');
    if (waiting.status === 'None') throw new Error('unreachable');
    // the amount and the fee are held (the organization's balance pays XRP's fee)
    expect(await fixture.ledger(token.id)).toMatchObject({ held: before.held + 5_000_000n + BigInt(waiting.signedTransaction!.fee) });

    await fixture.devnet.controls(XRP).mine(XRP_LEDGER_WINDOW);
    await fixture.devnet.controls(XRP).mine(2);
    await worker.runPass();
    await fixture.devnet.controls(XRP).setFault('broadcast_error', 0);
    const failed = await fixture.withdrawal(created.id);
    expect(failed.status).toBe('Failed');
    if (failed.status === 'None') throw new Error('unreachable');
    expect(failed.txnError).toContain('past its LastLedgerSequence');
    expect(await transfersTo(XRP, recipient)).toHaveLength(0);
    expect(await fixture.ledger(token.id)).toMatchObject({ available: before.available, held: before.held });
    // and the devnet, like rippled, refuses the bytes from now on
    await expect(fixture.devnet.gateway(XRP).broadcast(waiting.signedTransaction!.raw)).rejects.toThrow(/tefMAX_LEDGER/);
  });
});
