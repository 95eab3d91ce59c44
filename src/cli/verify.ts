import fs from 'node:fs';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import type { SignedAuditHead } from '../audit/head.js';
import { verifyExport } from '../audit/verify.js';
import type { Config } from '../config/env.js';
import type { Logger } from '../log.js';

/**
 * `ledgergate verify <file>`: check an export's hash chain and, with --head, that it ends exactly
 * at a signed head. It needs no database, and loads the head's code only when given a head.
 */
export const verifyCommand = async (_config: Config, _logger: Logger, args: string[]): Promise<number> => {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { 'prev-hash': { type: 'string' }, head: { type: 'string' }, 'public-key': { type: 'string' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: ledgergate verify <file> [--prev-hash <hex>] [--head <head.json> [--public-key <audit-key.pem>]]');
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  const result = await verifyExport(lines, { firstPrevHash: values['prev-hash'] });
  if (!result.ok) {
    process.stdout.write(`FAILED line ${result.line}: ${result.reason}\n`);
    return 1;
  }
  if (values.head) {
    const { compareWithHead, headSignedBy } = await import('../audit/head.js');
    const head = JSON.parse(await fs.promises.readFile(values.head, 'utf8')) as SignedAuditHead;
    if (values['public-key'] && !headSignedBy(head, await fs.promises.readFile(values['public-key'], 'utf8'))) {
      process.stdout.write('FAILED head: its signature is not the audit key’s\n');
      return 1;
    }
    const ending = compareWithHead(result, head, result.format === 'csv' ? 1 : 0);
    if (!ending.ok) {
      process.stdout.write(`FAILED line ${ending.line}: ${ending.reason}\n`);
      return 1;
    }
  }
  process.stdout.write(`OK ${result.count} ${result.lastHash}\n`);
  return 0;
};
