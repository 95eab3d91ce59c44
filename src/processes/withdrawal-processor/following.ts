import type { CancellationSender } from '../../chains/transfers/cancellation.js';
import type { CommandMetadata } from '../../application/command-handler.js';
import type { SignedTransaction, WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import { settle, type Settlement } from '../settlement.js';
import type { WithdrawalProcessingServices } from './services.js';
import { bitcoinWalletsOf } from './transactions.js';

/** Who can cancel a withdrawal's refused transaction: the wallet that signed it. */
const senderOf = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, signed: SignedTransaction, metadata: CommandMetadata): Promise<CancellationSender> => {
  const { chain } = services;
  switch (chain.family) {
    case 'evm': {
      const wallets = await services.wallets.walletsOf(withdrawal.orgId, chain.id, metadata);
      return { family: 'evm', wallet: { branch: 'settlement', index: wallets.index }, address: wallets.settlementAddress };
    }
    case 'bitcoin': {
      const { byAddress, changeAddress } = await bitcoinWalletsOf(services, withdrawal.orgId);
      return { family: 'bitcoin', inputs: signed.inputs ?? [], walletOf: (address) => byAddress.get(address), changeAddress, refusedFee: BigInt(signed.batch?.fee ?? signed.fee) }; // a batch's whole fee: what its cancellation must pay more than
    }
    case 'tron':
    case 'xrp':
      return { family: 'expires' };
  }
};

/**
 * Where a withdrawal's recorded transaction stands (src/processes/settlement.ts: only proof fails
 * it). After a Bitcoin replacement there are several recorded transactions spending the same
 * inputs: the newest is the one sent, and whichever of them confirms pays the withdrawal (only one
 * can). Every broadcast is tagged as a withdrawal's, the only transactions devnet faults are for.
 * `unsent`: the caller's step recorded `signed` just now (its first look sends it at once).
 */
export const followWithdrawalTransaction = (
  services: WithdrawalProcessingServices,
  withdrawal: WithdrawalRecord,
  signed: SignedTransaction,
  metadata: CommandMetadata,
  unsent = false,
): Promise<Settlement> =>
  settle(
    services,
    { current: signed, replaced: withdrawal.replacedTransactions, purpose: 'withdrawal', unsent },
    { orgId: withdrawal.orgId, metadata, sender: () => senderOf(services, withdrawal, signed, metadata) },
  );
