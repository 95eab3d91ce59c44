import { decode, hashes, rippleTimeToISOTime } from 'xrpl';
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { classifyXrpAnswer } from './broadcast-answers.js';
import { BroadcastRejectedError, type BlockHeader, type BlockTransfer, type ChainGateway, type TransactionStatus } from '../gateway.js';
import { rippledErrorCode, type XrplRequest } from './requester.js';

/**
 * XRP over rippled's API (through xrpl.js `Client.request`), API v2 shapes (xrpl.js's default)
 * with v1's accepted too. Blocks are **validated** ledgers only: a ledger that is merely closed
 * can still change, so head() is the latest validated ledger and nothing newer is visible.
 *
 * - A deposit is credited by `meta.delivered_amount`, never by `Amount`: a partial payment
 *   (tfPartialPayment) can state a large Amount and deliver a fraction of it. A ledger answer of
 *   "unavailable" (pre-2014 ledgers) is not credited, and logged for an operator.
 * - `balance` is what the account can spend: its Balance minus the account reserve (base reserve
 *   + owner reserve × OwnerCount, from server_state), which the ledger never lets it send.
 * - `requiresDestinationTag`: account_info's Flags has lsfRequireDestTag (0x00020000).
 */

export const LSF_REQUIRE_DEST_TAG = 0x00020000;
const MAX_DROPS = 10n ** 17n;
/** the fee offered when the open ledger's fee escalates beyond it: the payment waits in the queue rather than overpaying */
const DEFAULT_MAX_FEE_DROPS = 1_000n;

const ledgerIndex = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]);
const metaSchema = z.looseObject({ TransactionResult: z.string(), delivered_amount: z.unknown().optional() });
const txFieldsSchema = z.looseObject({
  TransactionType: z.string(),
  Account: z.string(),
  Destination: z.string().optional(),
  DestinationTag: z.number().optional(),
  Fee: z.string().optional(),
});
/** API v2: { hash, tx_json, meta }; v1: the transaction's fields with hash and metaData beside them */
const ledgerTransactionSchema = z.looseObject({ hash: z.string(), tx_json: txFieldsSchema.optional(), meta: metaSchema.optional(), metaData: metaSchema.optional() });
const ledgerSchema = z.object({
  ledger_hash: z.string(),
  ledger_index: ledgerIndex,
  parent_hash: z.string(),
  close_time: z.number(),
  transactions: z.array(ledgerTransactionSchema).optional(),
});
const ledgerResultSchema = z.object({ ledger: ledgerSchema, validated: z.boolean().optional() });
const accountInfoSchema = z.object({
  account_data: z.object({ Balance: z.string(), Flags: z.number(), OwnerCount: z.number(), Sequence: z.number() }),
  queue_data: z.object({ highest_sequence: z.number().optional() }).optional(),
});
const serverStateSchema = z.object({ state: z.object({ validated_ledger: z.object({ reserve_base: z.number(), reserve_inc: z.number() }) }) });
const feeSchema = z.object({ drops: z.object({ base_fee: z.string(), open_ledger_fee: z.string() }) });
const txResultSchema = z.looseObject({
  hash: z.string(),
  ledger_index: z.number().optional(),
  ledger_hash: z.string().optional(),
  validated: z.boolean().optional(),
  meta: metaSchema.optional(),
  tx_json: txFieldsSchema.optional(),
  Fee: z.string().optional(),
});
const submitSchema = z.object({ engine_result: z.string(), engine_result_message: z.string().optional() });

/** an XRP amount is a string of drops; an object is an issued currency (or MPT), which is not XRP */
const xrpDrops = (amount: unknown): bigint | null => {
  if (typeof amount !== 'string' || !/^\d{1,18}$/.test(amount)) return null;
  const drops = BigInt(amount);
  return drops <= MAX_DROPS ? drops : null;
};

export interface XrpGatewayOptions {
  chain: ChainDefinition;
  request: XrplRequest;
  logger: Logger;
  maxFeeDrops?: bigint;
}

export const createXrpGateway = ({ chain, request, logger, maxFeeDrops = DEFAULT_MAX_FEE_DROPS }: XrpGatewayOptions): ChainGateway => {
  const ask = async (command: string, fields: Record<string, unknown> = {}) => (await request({ command, ...fields })).result;
  /** rippled's "no such thing" codes become null */
  const askOrNull = async (notFound: string, command: string, fields: Record<string, unknown>) => {
    try {
      return await ask(command, fields);
    } catch (error) {
      if (rippledErrorCode(error) === notFound) return null;
      throw error;
    }
  };
  const header = (ledger: z.infer<typeof ledgerSchema>): BlockHeader => ({
    number: ledger.ledger_index,
    hash: ledger.ledger_hash,
    parentHash: ledger.parent_hash,
    timestamp: rippleTimeToISOTime(ledger.close_time),
  });
  const validatedLedger = async (index: number | 'validated', transactions: boolean) => {
    const found = await askOrNull('lgrNotFound', 'ledger', { ledger_index: index, transactions, expand: transactions });
    if (found === null) return null;
    const result = ledgerResultSchema.parse(found);
    return result.validated === true ? result.ledger : null;
  };
  const validatedHead = async () => {
    const ledger = await validatedLedger('validated', false);
    if (!ledger) throw new Error('rippled has no validated ledger (not synced)');
    return ledger;
  };
  const accountInfo = async (account: string, ledger: 'validated' | 'current') => {
    const found = await askOrNull('actNotFound', 'account_info', { account, ledger_index: ledger, ...(ledger === 'current' ? { queue: true } : {}) });
    return found === null ? null : accountInfoSchema.parse(found);
  };

  return {
    chain,

    head: async () => header(await validatedHead()),

    block: async (number) => {
      const ledger = await validatedLedger(number, false);
      return ledger ? header(ledger) : null;
    },

    transfersInBlock: async (number, toAddresses) => {
      const ledger = await validatedLedger(number, true);
      if (!ledger) return [];
      const transfers: BlockTransfer[] = [];
      for (const entry of ledger.transactions ?? []) {
        const tx = entry.tx_json ?? txFieldsSchema.parse(entry);
        const meta = entry.meta ?? entry.metaData;
        if (tx.TransactionType !== 'Payment' || !meta || meta.TransactionResult !== 'tesSUCCESS' || !tx.Destination) continue;
        if (toAddresses && !toAddresses.has(tx.Destination)) continue;
        if (meta.delivered_amount === 'unavailable') {
          logger.warn('xrp: payment without delivered_amount not credited', { chainId: chain.id, txHash: entry.hash, ledger: number });
          continue;
        }
        const delivered = xrpDrops(meta.delivered_amount);
        if (delivered === null || delivered === 0n) continue; // an issued currency, not XRP
        transfers.push({
          txHash: entry.hash,
          blockNumber: number,
          blockHash: ledger.ledger_hash,
          index: 0,
          from: tx.Account,
          to: tx.Destination,
          asset: 'native',
          amount: delivered,
          destinationTag: tx.DestinationTag ?? null,
        });
      }
      return transfers;
    },

    balance: async (account, asset) => {
      if (asset !== 'native') return 0n;
      const info = await accountInfo(account, 'validated');
      if (!info) return 0n;
      const { reserve_base, reserve_inc } = serverStateSchema.parse(await ask('server_state')).state.validated_ledger;
      const reserve = BigInt(reserve_base) + BigInt(reserve_inc) * BigInt(info.account_data.OwnerCount);
      const spendable = BigInt(info.account_data.Balance) - reserve;
      return spendable > 0n ? spendable : 0n;
    },

    nextNonce: async (account) => {
      const info = await accountInfo(account, 'current');
      if (!info) throw new Error(`${account} does not exist on ${chain.id}: it has no sequence yet`);
      // transactions waiting in the queue hold the sequences up to highest_sequence
      const queued = info.queue_data?.highest_sequence;
      return queued === undefined ? info.account_data.Sequence : Math.max(info.account_data.Sequence, queued + 1);
    },

    unspentOutputs: async () => [],

    requiresDestinationTag: async (account) => {
      const info = await accountInfo(account, 'validated');
      return info !== null && (info.account_data.Flags & LSF_REQUIRE_DEST_TAG) !== 0;
    },

    estimateFee: async () => {
      const { drops } = feeSchema.parse(await ask('fee'));
      const base = BigInt(drops.base_fee);
      const open = BigInt(drops.open_ledger_fee);
      const wanted = open > base ? open : base;
      const fee = wanted > maxFeeDrops ? (base > maxFeeDrops ? base : maxFeeDrops) : wanted;
      return { fee, parameters: { fee: String(fee) } };
    },

    broadcast: async (blob) => {
      const txHash = hashes.hashSignedTx(blob.toUpperCase());
      let engineResult: string;
      let message: string;
      try {
        const submitted = submitSchema.parse(await ask('submit', { tx_blob: blob }));
        engineResult = submitted.engine_result;
        message = submitted.engine_result_message ?? engineResult;
      } catch (error) {
        const code = rippledErrorCode(error);
        if (code !== undefined) throw new BroadcastRejectedError(`${code}: ${(error as Error).message}`);
        throw error;
      }
      // a submit result is tentative: only a validated ledger says how a transaction ended
      const answer = classifyXrpAnswer(engineResult);
      if (answer === 'known') return { txHash };
      throw new BroadcastRejectedError(`${engineResult}: ${message}`, answer);
    },

    transactionStatus: async (txHash): Promise<TransactionStatus> => {
      const found = await askOrNull('txnNotFound', 'tx', { transaction: txHash });
      if (found === null) return { status: 'not_found' };
      const tx = txResultSchema.parse(found);
      if (tx.validated !== true || tx.ledger_index === undefined || !tx.meta) return { status: 'pending' };
      const fee = BigInt(tx.tx_json?.Fee ?? tx.Fee ?? '0');
      const head = await validatedHead();
      if (tx.meta.TransactionResult !== 'tesSUCCESS') {
        return { status: 'failed', blockNumber: tx.ledger_index, error: tx.meta.TransactionResult, fee, confirmations: head.ledger_index - tx.ledger_index + 1 };
      }
      const blockHash = tx.ledger_hash ?? (await validatedLedger(tx.ledger_index, false))?.ledger_hash;
      if (!blockHash) return { status: 'pending' };
      return { status: 'confirmed', blockNumber: tx.ledger_index, blockHash, confirmations: head.ledger_index - tx.ledger_index + 1, fee };
    },

    provablyNever: async (blob) => {
      const decoded = decode(blob.toUpperCase()) as { Account?: string; Sequence?: number; LastLedgerSequence?: number };
      const head = await validatedHead();
      // validated ledgers are final: past its LastLedgerSequence it can never be included
      if (decoded.LastLedgerSequence !== undefined && head.ledger_index > decoded.LastLedgerSequence) {
        return `the validated ledger ${head.ledger_index} is past its LastLedgerSequence ${decoded.LastLedgerSequence}`;
      }
      if (decoded.Account && decoded.Sequence !== undefined) {
        const info = await accountInfo(decoded.Account, 'validated');
        const ours = hashes.hashSignedTx(blob.toUpperCase());
        if (info && info.account_data.Sequence > decoded.Sequence && (await askOrNull('txnNotFound', 'tx', { transaction: ours })) === null) return `sequence ${decoded.Sequence} of ${decoded.Account} was used by another validated transaction`;
      }
      return null;
    },
  };
};
