import ecc from '@bitcoinerlab/secp256k1';
import { randomBytes } from 'node:crypto';
import { Transaction } from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BITCOIN_FEE_RATE_SAT_PER_VBYTE, XRP_FEE_DROPS } from '../../src/chains/devnet/fees.js';
import { addressCodecs } from '../../src/chains/families.js';
import { p2wpkhVirtualSize } from '../../src/chains/bitcoin/spend-planning.js';
import { findChain } from '../../src/catalog/registry.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from '../support/webhook-receiver.js';

const ETHEREUM = 'eip155:1'; // 12 confirmations
const ETH = `${ETHEREUM}/slip44:60`;
const ETH_USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
const USDT_CONTRACT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93'; // 2 confirmations
const BTC = `${BITCOIN}/slip44:0`;
const XRP = 'xrpl:mainnet'; // 1 confirmation
const XRP_NATIVE = `${XRP}/slip44:144`;
const ENV = { DEVNET_BLOCK_TIME_MS: '3600000', WEBHOOK_RETRY_DELAYS_MS: '50,50,50,50,50', RATE_LIMIT_PER_MINUTE: '1000000' };

type Webhook = { id: string; type: string; payload: Record<string, unknown> };

const externalAddress = (chainId: string) => {
  const chain = findChain(chainId)!;
  let publicKey: Uint8Array | null = null;
  while (!publicKey) publicKey = ecc.pointFromScalar(randomBytes(32), true);
  return addressCodecs[chain.family].addressFromPublicKey(publicKey, chain.network);
};

/**
 * Withdrawals end to end with one signer: POST /withdrawals, the service's own processor signs,
 * records and broadcasts on the devnet, the test mines, the withdrawal completes; a real HTTP
 * receiver gets withdrawal.created → processing → completed, /portfolio shows the balance.
 */
describe('withdrawals end to end: POST /withdrawals → processor → devnet → webhooks', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let apiKey: string;
  let orgId: string;
  let references = 0;

  beforeAll(async () => {
    service = await startTestService(ENV);
    receiver = await startWebhookReceiver(() => 200);
    const acme = await service.bootstrap('Acme', ['alice']);
    apiKey = acme.apiKey;
    orgId = acme.organization.id;
    expect((await service.request('PATCH', '/organisation/webhook', { apiKey, body: { webhookUrl: receiver.url } })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await service.stop();
    await receiver.close();
  });

  /** the typed client (ledgergate/client): every call below is checked against the API document */
  const api = () => service.client({ apiKey });
  const ok = <T,>(result: { data?: T; error?: unknown; response: Response }, what: string): T => {
    expect(result.response.status, `${what} → ${JSON.stringify(result.error)}`).toBeLessThan(300);
    return result.data!;
  };
  const mine = async (chainId: string, count = findChain(chainId)!.properties.confirmations) => ok(await api().POST('/devnet/blocks', { body: { chainId, count } }), `mine ${chainId}`);
  const pay = async (chainId: string, tokenId: string, toAddress: string, amount: bigint, destinationTag?: number) =>
    ok(await api().POST('/devnet/deposits', { body: { chainId, tokenId, toAddress, amount: amount.toString(), ...(destinationTag === undefined ? {} : { destinationTag }) } }), `pay ${toAddress}`);
  const webhooks = (): Webhook[] => {
    const byId = new Map<string, Webhook>();
    for (const received of receiver.received) {
      const body = JSON.parse(received.body.toString('utf8')) as Omit<Webhook, 'id'>;
      byId.set(String(received.headers['x-webhook-id']), { id: String(received.headers['x-webhook-id']), ...body });
    }
    return [...byId.values()];
  };
  const available = async (tokenId: string) => {
    const { balances } = ok(await api().GET('/portfolio'), 'portfolio');
    return BigInt(balances.find((entry) => entry.tokenId === tokenId)?.available ?? '0');
  };
  const waitForAvailable = (tokenId: string, expected: bigint) => waitUntil(async () => (await available(tokenId)) === expected, 30_000, `${tokenId} available ${expected}`);
  /** a user's deposit address, paid and confirmed, credited once the watcher has seen it */
  const deposit = async (chainId: string, tokenId: string, amount: bigint) => {
    const before = await available(tokenId);
    const userId = `user-${randomBytes(4).toString('hex')}`;
    const { address } = ok(await api().GET('/payments/deposit-address', { params: { query: { chainId, tokenId, userId } } }), 'deposit address');
    const properties = address.properties as { address: string; destinationTag?: string };
    const tag = properties.destinationTag === undefined ? undefined : Number(properties.destinationTag);
    await pay(chainId, tokenId, properties.address, amount, tag);
    await mine(chainId);
    await waitForAvailable(tokenId, before + amount);
    return properties.address;
  };
  const withdraw = async (chainId: string, tokenId: string, amount: bigint, recipient: string, memo?: string) =>
    ok(await api().POST('/withdrawals', { body: { chainId, tokenId, amount: amount.toString(), recipient, reference: `ref-${++references}`, ...(memo ? { memo } : {}) } }), 'withdraw').withdrawal;
  const withdrawal = async (id: string) => ok(await api().GET('/withdrawals/{id}', { params: { path: { id } } }), `withdrawal ${id}`);
  const waitForStatus = async (id: string, status: string) => {
    await waitUntil(async () => (await withdrawal(id)).status === status, 30_000, `withdrawal ${id} ${status}`);
    return withdrawal(id);
  };
  const withdrawalWebhooks = (id: string) => webhooks().filter((hook) => hook.type.startsWith('withdrawal.') && hook.payload.id === id);
  const expectWebhooks = async (id: string, types: string[]) => {
    await waitUntil(() => withdrawalWebhooks(id).length >= types.length, 20_000, `${types.join(', ')} of ${id}`);
    expect(withdrawalWebhooks(id).map((hook) => hook.type)).toEqual(types);
  };

  it('Bitcoin: Pending → Processing → Completed; the balance drops by amount and fee; the recipient holds the amount', async () => {
    await deposit(BITCOIN, BTC, 200_000n);
    const before = await available(BTC);
    const recipient = externalAddress(BITCOIN);
    const created = await withdraw(BITCOIN, BTC, 120_000n, recipient);
    expect(created.status).toBe('Pending');
    const processing = await waitForStatus(created.id, 'Processing');
    expect(processing.txnHash).toMatch(/^[0-9a-f]{64}$/);
    // broadcast: too late to cancel, and the refusal changes nothing
    const cancel = await api().DELETE('/withdrawals/{id}', { params: { path: { id: created.id } } });
    expect(cancel.response.status).toBe(409);
    expect(cancel.error).toMatchObject({ error: 'WITHDRAWAL_NOT_PENDING', statusCode: 409 });
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Processing', txnError: null });
    await mine(BITCOIN);
    const completed = await waitForStatus(created.id, 'Completed');
    expect(completed.txnHash).toBe(processing.txnHash);
    await expectWebhooks(created.id, ['withdrawal.created', 'withdrawal.processing', 'withdrawal.completed']);
    const fee = p2wpkhVirtualSize(1, 2) * BITCOIN_FEE_RATE_SAT_PER_VBYTE;
    // CONTRACT §6: the fee the chain took, on the withdrawal itself (null until then)
    expect(created.fee).toBeNull();
    expect(completed.fee).toBe(fee.toString());
    await waitForAvailable(BTC, before - 120_000n - fee);
    const outputs = await service.composed.gateways(BITCOIN)!.unspentOutputs([recipient]);
    expect(outputs).toMatchObject([{ txHash: completed.txnHash, amount: 120_000n }]);
  });

  it('XRP: the destination tag from memo; the balance drops by amount and fee', async () => {
    await deposit(XRP, XRP_NATIVE, 40_000_000n);
    const before = await available(XRP_NATIVE);
    const recipient = externalAddress(XRP);
    const created = await withdraw(XRP, XRP_NATIVE, 15_000_000n, recipient, '12345');
    await waitForStatus(created.id, 'Processing');
    await mine(XRP);
    await waitForStatus(created.id, 'Completed');
    await expectWebhooks(created.id, ['withdrawal.created', 'withdrawal.processing', 'withdrawal.completed']);
    await waitForAvailable(XRP_NATIVE, before - 15_000_000n - XRP_FEE_DROPS);
    expect(await service.composed.gateways(XRP)!.balance(recipient, 'native')).toBe(15_000_000n);
  });

  it('Ethereum USDT: swept to the settlement wallet, gas from the gas wallet; the balance drops by the amount alone', async () => {
    const { gasAddress } = await service.composed.organizationWallets!.walletsOf(orgId, ETHEREUM);
    await pay(ETHEREUM, ETH, gasAddress!, 10n ** 16n);
    await deposit(ETHEREUM, ETH_USDT, 30_000_000n);
    const before = await available(ETH_USDT);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, ETH_USDT, 12_000_000n, recipient);
    // the sweep (top-up, then the transfer) and the withdrawal's own top-up each need their blocks
    const gateway = service.composed.gateways(ETHEREUM)!;
    await waitUntil(
      async () => {
        if ((await withdrawal(created.id)).status === 'Processing') return true;
        await mine(ETHEREUM);
        return false;
      },
      60_000,
      'the withdrawal to be broadcast',
    );
    await mine(ETHEREUM);
    await waitForStatus(created.id, 'Completed');
    await expectWebhooks(created.id, ['withdrawal.created', 'withdrawal.processing', 'withdrawal.completed']);
    expect(await gateway.balance(recipient, USDT_CONTRACT)).toBe(12_000_000n);
    await waitForAvailable(ETH_USDT, before - 12_000_000n);
  });

  it.each(['broadcast_error', 'revert'] as const)('a devnet %s: Failed with txnError, withdrawal.failed, the hold released, the fee the chain took charged', async (fault) => {
    await deposit(BITCOIN, BTC, 100_000n);
    const before = await available(BTC);
    ok(await api().POST('/devnet/faults', { body: { chainId: BITCOIN, fault, count: 1 } }), 'fault');
    const created = await withdraw(BITCOIN, BTC, 60_000n, externalAddress(BITCOIN));
    // refused: made impossible by a cancellation (an input spent back to us), failed once that is at
    // depth; reverted: failed once the failure is at depth. Either way blocks must come.
    await waitForStatus(created.id, 'Processing');
    await waitUntil(async () => {
      if ((await withdrawal(created.id)).status === 'Failed') return true;
      await mine(BITCOIN);
      return false;
    }, 30_000, `withdrawal ${created.id} Failed`);
    const failed = await withdrawal(created.id);
    expect(failed.txnError).toContain(fault === 'broadcast_error' ? 'rejected' : 'reverted');
    await expectWebhooks(created.id, ['withdrawal.created', 'withdrawal.processing', 'withdrawal.failed']);
    // the ledger follows the chain: what the chain took (the cancellation's or the reverted transaction's fee) is charged
    const exported = (await api().GET('/audit/events', { params: { query: { category: 'withdrawal' } }, parseAs: 'text' })).data!
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
    const signed = exported.find((line) => line.type === 'WithdrawalTransactionSigned' && line.data.id === created.id)!;
    const cancellation = exported.find((line) => line.type === 'TransactionCancellationSigned' && line.data.txHash === signed.data.txHash);
    const fee =
      fault === 'revert'
        ? BigInt(signed.data.fee as string)
        : 100_000n - BigInt(Transaction.fromHex((cancellation!.data.cancellation as { raw: string }).raw).outs[0]!.value);
    await waitForAvailable(BTC, before - fee);
  });
});
