import { parseArgs } from 'node:util';
import { addUser, bootstrapOrganization, type OrganizationServices } from '../application/organizations.js';
import { waitForProjection } from '../application/projection-waiter.js';
import type { Config } from '../config/env.js';
import { openInfrastructure, type Infrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { ORGANIZATIONS_PROJECTION, organizationsProjection } from '../projections/organizations.js';
import { ProjectionRunner } from '../projections/runner.js';

const servicesOf = (infrastructure: Infrastructure, config: Config): OrganizationServices => ({
  store: infrastructure.store,
  db: infrastructure.db,
  keyring: infrastructure.keyring,
  clock: () => new Date(),
  isProduction: config.isProduction,
});

/**
 * The new credentials must work as soon as the command returns: with no server running this
 * process applies the projection itself; with one running, it waits for the server to.
 */
export const makeVisible = async (infrastructure: Infrastructure, logger: Logger, position: bigint) => {
  const runner = new ProjectionRunner({ projection: organizationsProjection, store: infrastructure.store, database: infrastructure.databaseTarget, logger });
  if (!(await runner.catchUp())) await waitForProjection(infrastructure.db, ORGANIZATIONS_PROJECTION, position, 60_000);
};

export const withInfrastructure = async (config: Config, logger: Logger, work: (infrastructure: Infrastructure) => Promise<unknown>) => {
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    const output = await work(infrastructure);
    process.stdout.write(JSON.stringify(output, null, 2) + '\n');
    return 0;
  } finally {
    await infrastructure.close();
  }
};

const option = (value: string | boolean | (string | boolean)[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

/** `ledgergate bootstrap --org <name> --user <u> [--user <u> …] [--min-signers <n>] [--webhook-url <url>] --json` */
export const bootstrapCommand = async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      user: { type: 'string', multiple: true },
      'min-signers': { type: 'string' },
      'webhook-url': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const usernames = values.user ?? [];
  if (!values.org || usernames.length === 0) throw new Error('usage: ledgergate bootstrap --org <name> --user <username> [--user …] [--min-signers <n>] [--webhook-url <url>] --json');
  const minSigners = option(values['min-signers']);
  if (minSigners !== undefined && !/^\d+$/.test(minSigners)) throw new Error('--min-signers takes a whole number');
  return withInfrastructure(config, logger, async (infrastructure) => {
    const { position, ...result } = await bootstrapOrganization(
      servicesOf(infrastructure, config),
      { name: values.org!, usernames, minWithdrawalSigners: minSigners === undefined ? 1 : Number(minSigners), webhookUrl: option(values['webhook-url']) ?? null },
      { actor: 'cli' },
    );
    await makeVisible(infrastructure, logger, position);
    return result;
  });
};

/** `ledgergate user add --org <orgId> --username <name> --json` */
export const userAddCommand = async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({ args, options: { org: { type: 'string' }, username: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.org || !values.username) throw new Error('usage: ledgergate user add --org <orgId> --username <name> --json');
  return withInfrastructure(config, logger, async (infrastructure) => {
    const { user, position } = await addUser(servicesOf(infrastructure, config), values.org!, values.username!, { actor: 'cli', orgId: values.org });
    await makeVisible(infrastructure, logger, position);
    return user;
  });
};
