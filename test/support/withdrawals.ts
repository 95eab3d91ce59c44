import { confirmDeposit, recordDeposit } from '../../src/application/deposits.js';
import type { WithdrawalServices } from '../../src/application/withdrawals.js';
import { loadLedger } from '../../src/application/ledgers.js';
import { chainAvailability } from '../../src/chains/chain-availability.js';
import { findChain } from '../../src/catalog/registry.js';
import { streams } from '../../src/domain/streams.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import type { TestService } from './api-harness.js';
import { observed, ownerOf } from './deposits.js';

let depositCounter = 0;

/** Credits an organization's ledger the way a watcher does: a deposit detected, then confirmed (or left pending). */
export const fundLedger = async (service: TestService, orgId: string, chainId: string, amount: bigint, options: { confirmed?: boolean } = {}) => {
  const services = { store: service.infrastructure.store, clock: service.now };
  const n = 1_000_000 + ++depositCounter;
  const hash = findChain(chainId)?.family === 'bitcoin' || findChain(chainId)?.family === 'xrp' ? n.toString(16).padStart(64, '0') : `0x${n.toString(16).padStart(64, '0')}`;
  const transfer = observed(n, { chainId, txHash: hash, amount, asset: 'native' });
  await recordDeposit(services, transfer, ownerOf(orgId, 'funding', chainId), { actor: 'test' });
  if (options.confirmed !== false) await confirmDeposit(services, transfer, 12, { actor: 'test' });
};

/** The ledger's balances as the event store holds them. */
export const ledgerBalances = async (service: TestService, orgId: string, tokenId: string) =>
  (await loadLedger(service.infrastructure.store, streams.ledger(orgId, tokenId))).state;

/** Sends native coin to the organization's gas wallet on the devnet (mined at once). */
export const fundGasWallet = async (service: TestService, apiKey: string, orgId: string, chainId: string, amount: bigint) => {
  const wallets = await service.composed.organizationWallets!.walletsOf(orgId, chainId);
  const nativeId = `${chainId}/slip44:${chainId.startsWith('tron:') ? 195 : 60}`;
  const response = await service.request('POST', '/devnet/deposits', { apiKey, body: { chainId, tokenId: nativeId, toAddress: wallets.gasAddress, amount: amount.toString() } });
  if (response.status !== 201) throw new Error(`funding the gas wallet failed: ${JSON.stringify(response.body)}`);
};

/**
 * The withdrawal processors run in the test service; these tests are about requests, approvals
 * and cancellation, so they stop them (the processor's own tests drive it).
 */
export const stopWithdrawalProcessors = async (service: TestService) => {
  const processors = (service.composed as { withdrawalProcessors?: { stop(): Promise<void> }[] }).withdrawalProcessors ?? [];
  await Promise.all(processors.map((processor) => processor.stop()));
};

export const withdrawalServicesOf = (service: TestService): WithdrawalServices => ({
  ...service.services,
  availability: chainAvailability({ isProduction: false }),
  gateways: service.composed.gateways,
  wallets: service.composed.organizationWallets,
});

/** Waits until the withdrawals read model holds every withdrawal event appended so far. */
export const settleWithdrawals = async (service: TestService, timeoutMs = 30_000) => {
  const { store, db } = service.infrastructure;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const checkpoint = BigInt((await db.selectFrom('projection_checkpoints').select('position').where('name', '=', withdrawalsProjection.name).executeTakeFirst())?.position ?? '0');
    if ((await store.readAll({ afterPosition: checkpoint, filter: withdrawalsProjection.filter, maxCount: 1 })).length === 0) return;
    if (Date.now() > deadline) throw new Error('the withdrawals projection did not catch up');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
