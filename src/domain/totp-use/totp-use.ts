import type { DecideContext, Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../../errors.js';

/**
 * A TOTP code is accepted once: each acceptance records its time step, and a code whose step is
 * not after the last accepted one is refused (RFC 6238 §5.2). The stream's expected revision makes
 * two concurrent logins with the same code race, and only one wins.
 */
export type TotpUseEvent = DomainEvent<
  'TotpCodeAccepted',
  { userId: string; timeStep: number; purpose: 'login' | 'approval'; acceptedAt: string }
>;
export type TotpUse = { lastAcceptedStep: number | null };
export type TotpUseCommand = { type: 'AcceptTotpCode'; userId: string; timeStep: number; purpose: 'login' | 'approval' };

export const totpUseDecider: Decider<TotpUseCommand, TotpUseEvent, TotpUse> = {
  initialState: { lastAcceptedStep: null },
  evolve: (_state, event) => ({ lastAcceptedStep: event.data.timeStep }),
  decide: (command, state, { now }: DecideContext) => {
    if (state.lastAcceptedStep !== null && command.timeStep <= state.lastAcceptedStep) {
      throw new DomainError('INVALID_TOTP', 'This code was already used; wait for the next one');
    }
    return [
      {
        type: 'TotpCodeAccepted',
        data: { userId: command.userId, timeStep: command.timeStep, purpose: command.purpose, acceptedAt: now.toISOString() },
      },
    ];
  },
};
