import type { DecideContext, Decider, DomainEvent } from '../decider.js';

/** Chain-specific account properties (SPEC §2.4): XRP adds the destination tag a depositor must send. */
export type AccountProperties = { address: string } | { address: string; destinationTag: string };

export type AccountEvent = DomainEvent<
  'AccountCreated',
  {
    orgId: string;
    chainId: string;
    externalUserId: string;
    orgDepositAccountId: string;
    properties: AccountProperties;
    /** where the address comes from: key space and index (XRP: the organization's address index) */
    derivation: { space: string; index: number };
    createdAt: string;
  }
>;

export type Account = { status: 'None' } | ({ status: 'Created' } & AccountEvent['data']);

export type CreateAccount = { type: 'CreateAccount' } & Omit<AccountEvent['data'], 'createdAt'>;

/** One account per user per chain (SPEC §2.4 rule 1): creating an existing one decides nothing. */
export const accountDecider: Decider<CreateAccount, AccountEvent, Account> = {
  initialState: { status: 'None' },
  evolve: (_state, event) => ({ status: 'Created', ...event.data }),
  decide: (command, state, { now }: DecideContext) => {
    if (state.status === 'Created') return [];
    const { type: _type, ...data } = command;
    return [{ type: 'AccountCreated', data: { ...data, createdAt: now.toISOString() } }];
  },
};
