import { parseArgs } from 'node:util';
import type { Config } from '../config/env.js';
import { DomainError } from '../errors.js';
import { openInfrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { resolveWithdrawal, type OperatorOutcome } from '../processes/withdrawal-processor/resolve.js';
import { composeService } from '../server.js';
import { SendingWalletLocks } from '../processes/sending-wallets.js';
import { streams } from '../domain/streams.js';
import { withdrawalDecider } from '../domain/withdrawal/decide.js';
import { loadAggregate } from '../application/command-handler.js';

const USAGE = 'usage: ledgergate withdrawals resolve <withdrawalId> --outcome completed|failed --reason <text> --operator <your name>';

/**
 * `ledgergate withdrawals resolve`: an operator settles a withdrawal whose transaction has no
 * outcome (reported as stuck), once they know it; the chain is asked first and has the last word.
 */
export const withdrawalsResolveCommand = async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { outcome: { type: 'string' }, reason: { type: 'string' }, operator: { type: 'string' } } });
  const [withdrawalId] = positionals;
  const outcome = values.outcome as OperatorOutcome | undefined;
  if (!withdrawalId || (outcome !== 'completed' && outcome !== 'failed') || !values.reason || !values.operator) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  const sendingWallets = new SendingWalletLocks(infrastructure.databaseTarget);
  try {
    const { state } = await loadAggregate(infrastructure.store, streams.withdrawal(withdrawalId), withdrawalDecider);
    if (state.status === 'None') throw new DomainError('WITHDRAWAL_NOT_FOUND', `No withdrawal ${withdrawalId}`);
    const composed = composeService(infrastructure, config, logger);
    const gateway = composed.gateways(state.chainId);
    if (!gateway || !infrastructure.signer || !composed.organizationWallets) throw new DomainError('SERVICE_UNAVAILABLE', `${state.chainId} does not run here`);
    const services = { chain: gateway.chain, gateway, signer: infrastructure.signer, wallets: composed.organizationWallets, store: infrastructure.store, clock: () => new Date(), db: infrastructure.db, logger, sendingWallets };
    const resolved = await resolveWithdrawal(services, withdrawalId, { outcome, reason: values.reason, operator: values.operator });
    process.stdout.write(JSON.stringify({ withdrawal: resolved }, null, 2) + '\n');
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.code}: ${error.message}\n`);
    return 1;
  } finally {
    await sendingWallets.close();
    await infrastructure.close();
  }
};
