import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command as Program, CommanderError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { createLogger, flushLogs, type Logger } from '../log.js';

type Command = (config: Config, logger: Logger, args: string[]) => Promise<number>;

/**
 * Every command: its words, what it does, how it is called (its own help), and how to load what
 * runs it. Loading is deferred to the command that runs: `--help`, `verify` or `bootstrap` never
 * load the chain libraries `serve` needs, so a call starts in a fraction of a second.
 */
const COMMANDS: readonly { name: string; summary: string; usage: string; load: () => Promise<Command> }[] = [
  { name: 'serve', summary: 'run the service (API, projections, workers)', usage: '', load: async () => (await import('./serve.js')).serveCommand },
  {
    name: 'bootstrap',
    summary: 'create an organization, its users (signers) and an API key',
    usage: '--org <name> --user <username> [--user …] [--min-signers <n>] [--webhook-url <url>] --json',
    load: async () => (await import('./organizations.js')).bootstrapCommand,
  },
  { name: 'user add', summary: 'add a user (a signer) to an organization', usage: '--org <orgId> --username <name> --json', load: async () => (await import('./organizations.js')).userAddCommand },
  { name: 'chains enable', summary: 'switch a chain on for an organization', usage: '--org <orgId> --chain <chainId>', load: async () => (await import('./chain-switches.js')).chainSwitchCommand(true) },
  { name: 'chains disable', summary: 'switch a chain off for an organization', usage: '--org <orgId> --chain <chainId>', load: async () => (await import('./chain-switches.js')).chainSwitchCommand(false) },
  { name: 'tokens enable', summary: 'switch a token on for an organization', usage: '--org <orgId> --token <tokenId>', load: async () => (await import('./chain-switches.js')).tokenSwitchCommand(true) },
  { name: 'tokens disable', summary: 'switch a token off for an organization', usage: '--org <orgId> --token <tokenId>', load: async () => (await import('./chain-switches.js')).tokenSwitchCommand(false) },
  { name: 'migrate', summary: 'apply the migrations of the event store, the devnet, the watchers and the read models', usage: '', load: async () => (await import('./migrate.js')).migrateCommand },
  { name: 'projections status', summary: "the head position and each projection's checkpoint", usage: '', load: async () => (await import('./projections.js')).statusCommand },
  {
    name: 'projections rebuild',
    summary: 'replay projections from position 0 while the service serves',
    usage: '[name]',
    load: async () => {
      const { rebuildCommand } = await import('./projections.js');
      return (config, logger, args) => rebuildCommand(config, logger, args[0]);
    },
  },
  {
    name: 'export',
    summary: "the organization's events with a SHA-256 hash chain (as GET /audit/events)",
    usage: '--org <orgId> [--category withdrawal,deposit,account,ledger,organization] [--from <time>] [--to <time>] [--from-position <n>] [--to-position <n>] [--prev-hash <hex>] [--format ndjson|csv] [--out <file>]',
    load: async () => (await import('./audit.js')).exportCommand,
  },
  {
    name: 'verify',
    summary: "check an export's hash chain (and, with --head, that it ends exactly at a signed head)",
    usage: '<file> [--prev-hash <hex>] [--head <head.json> [--public-key <audit-key.pem>]]',
    load: async () => (await import('./verify.js')).verifyCommand,
  },
  { name: 'history', summary: "a withdrawal's events, each with its state after it", usage: '--withdrawal <id> [--org <orgId>] [--json]', load: async () => (await import('./audit.js')).historyCommand },
  {
    name: 'withdrawals resolve',
    summary: 'settle a withdrawal stuck without an outcome; the chain is asked first',
    usage: '<withdrawalId> --outcome completed|failed --reason <text> --operator <your name>',
    load: async () => (await import('./withdrawals.js')).withdrawalsResolveCommand,
  },
];

const packageVersion = (): string => {
  const file = fileURLToPath(new URL('../../package.json', import.meta.url));
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
};

/**
 * The command line on commander: `--help` and `<command> --help` print their help and exit 0,
 * `--version` the package's version, an unknown command is named with a suggestion (exit 1). Each
 * command's own options are parsed by the command (node:util parseArgs), so they pass through here.
 */
const main = async (argv: string[]): Promise<number> => {
  let exitCode = 0;
  const program = new Program('ledgergate')
    .description('multi-chain deposit and withdrawal service. Configuration comes from the environment (PORT, HOST, DATA_DIR, DATABASE_URL, EVENTSTORE_URL, …): see docs/operations.md')
    .version(packageVersion(), '-v, --version')
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .exitOverride();
  const groups = new Map<string, Program>();
  for (const { name, summary, usage, load } of COMMANDS) {
    const [group, sub] = name.split(' ') as [string, string | undefined];
    let parent = program;
    if (sub) {
      parent = groups.get(group) ?? program.command(group).description(`${group} commands`).exitOverride();
      groups.set(group, parent);
    }
    parent
      .command(sub ?? group)
      .description(summary)
      .usage(usage)
      .argument('[args...]')
      .passThroughOptions()
      .allowUnknownOption()
      .exitOverride()
      .action(async (args: string[]) => {
        exitCode = await runCommand(name, await load(), args);
      });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  return exitCode;
};

const runCommand = async (name: string, run: Command, args: string[]): Promise<number> => {
  const config = loadConfig();
  // the CLI logs only warnings, to stderr: its stdout is its answer (JSON, an export) and must stay
  // clean to pipe; the server logs every request on stdout (CONTRACT §1)
  const logger =
    name === 'serve'
      ? createLogger(config.LOG_LEVEL, { component: 'server' })
      : createLogger(config.LOG_LEVEL !== 'info' ? config.LOG_LEVEL : 'warn', { component: 'cli' }, (line) => process.stderr.write(line + '\n'));
  return run(config, logger, args);
};

/** the server's log lines go out asynchronously: the last ones are written before the process exits */
const exit = async (code: number): Promise<never> => {
  process.exitCode = code; // also the code if nothing is left to run while the logs flush
  await flushLogs();
  process.exit(code);
};

main(process.argv.slice(2)).then(
  (code) => exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`ledgergate: ${error instanceof Error ? error.message : String(error)}\n`);
    return exit(1);
  },
);
