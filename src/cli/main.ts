import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { openInfrastructure } from '../infrastructure.js';
import { createLogger, type Logger } from '../log.js';
import { exportCommand, historyCommand, verifyCommand } from './audit.js';
import { chainSwitchCommand, tokenSwitchCommand } from './chain-switches.js';
import { bootstrapCommand, userAddCommand } from './organizations.js';
import { rebuildCommand, statusCommand } from './projections.js';
import { serveCommand } from './serve.js';
import { withdrawalsResolveCommand } from './withdrawals.js';

const usage = `ledgergate — multi-chain deposit and withdrawal service

Usage:
  ledgergate serve                        run the service (API, projections, workers)
  ledgergate bootstrap --org <name> --user <username> [--user …] [--min-signers <n>] [--webhook-url <url>] --json
                                          create an organization, its users (signers) and an API key
  ledgergate user add --org <orgId> --username <name> --json
                                          add a user (a signer) to an organization
  ledgergate chains enable|disable --org <orgId> --chain <chainId>
                                          switch a chain on or off for an organization
  ledgergate tokens enable|disable --org <orgId> --token <tokenId>
                                          switch a token on or off for an organization
  ledgergate migrate                      apply event-store and read-model migrations
  ledgergate projections status           head position and each projection's checkpoint
  ledgergate projections rebuild [name]   replay projections from position 0
  ledgergate export --org <orgId> [--category withdrawal,deposit,account,ledger,organization] [--from <time>] [--to <time>]
                    [--from-position <n>] [--to-position <n>] [--prev-hash <hex>] [--format ndjson|csv] [--out <file>]
                                          the organization's events with a SHA-256 hash chain (as GET /audit/events)
  ledgergate verify <file> [--prev-hash <hex>]
                                          check an export's hash chain: OK <count> <lastHash>, or the first bad line
  ledgergate history --withdrawal <id> [--org <orgId>] [--json]
                                          a withdrawal's events, each with its state after it
  ledgergate withdrawals resolve <id> --outcome completed|failed --reason <text> --operator <name>
                                          settle a withdrawal stuck without an outcome; the chain is asked first

Configuration comes from the environment (see README: PORT, HOST, DATA_DIR, DATABASE_URL, EVENTSTORE_URL, …).
`;

type Command = (config: Config, logger: Logger, positionals: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  serve: (config, logger) => serveCommand(config, logger),
  migrate: async (config, logger) => {
    const infrastructure = await openInfrastructure(config, logger, 'cli');
    await infrastructure.close();
    process.stdout.write('migrations applied\n');
    return 0;
  },
  bootstrap: (config, logger, rest) => bootstrapCommand(config, logger, rest),
  'user add': (config, logger, rest) => userAddCommand(config, logger, rest),
  'chains enable': chainSwitchCommand(true),
  'chains disable': chainSwitchCommand(false),
  'tokens enable': tokenSwitchCommand(true),
  'tokens disable': tokenSwitchCommand(false),
  'projections status': (config, logger) => statusCommand(config, logger),
  'projections rebuild': (config, logger, rest) => rebuildCommand(config, logger, rest[0]),
  export: exportCommand,
  verify: verifyCommand,
  history: historyCommand,
  'withdrawals resolve': withdrawalsResolveCommand,
};

const main = async (argv: string[]): Promise<number> => {
  const [first, second] = argv;
  const command = commands[`${first} ${second}`] ? `${first} ${second}` : first;
  const run = command ? commands[command] : undefined;
  if (argv.includes('--help') || argv.includes('-h') || !run) {
    process.stdout.write(usage);
    return run || argv.length === 0 ? 0 : 2;
  }
  const config = loadConfig();
  const isServe = command === 'serve';
  // the CLI logs only warnings, to stderr: its stdout is its answer (JSON, an export) and must stay
  // clean to pipe; the server logs every request on stdout (CONTRACT §1)
  const logger = isServe
    ? createLogger(config.LOG_LEVEL, { component: 'server' })
    : createLogger(config.LOG_LEVEL !== 'info' ? config.LOG_LEVEL : 'warn', { component: 'cli' }, (line) => process.stderr.write(line + '\n'));
  return run(config, logger, argv.slice(command === first ? 1 : 2));
};

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`ledgergate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
