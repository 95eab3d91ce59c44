import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { NOW } from './given-when-then.js';

/** A Bitcoin withdrawal of 60 000 sat requested with one signer (Pending): the start of the deciders' histories. */
export const bitcoinWithdrawalRequested = (id: string): WithdrawalEvent => ({
  type: 'WithdrawalRequested',
  data: {
    id,
    orgId: 'o1',
    chainId: 'bip122:000000000019d6689c085ae165831e93',
    tokenId: 'bip122:000000000019d6689c085ae165831e93/slip44:0',
    amount: '60000',
    recipient: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    memo: null,
    reference: 'ref-1',
    internalNote: '',
    externalUserId: null,
    initiator: 'u1',
    minWithdrawalSigners: 1,
    status: 'Pending',
    requestedAt: NOW.toISOString(),
  },
});
