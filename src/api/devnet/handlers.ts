import type { RouteHandler } from '@hono/zod-openapi';
import { requireKnownToken, requireSupportedChain } from '../../catalog/caip.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { DepositRefusedError, type Devnet, type DevnetDeposit } from '../../chains/devnet/index.js';
import { addressCodecs } from '../../chains/families.js';
import { CHAINS } from '../../catalog/registry.js';
import { parseAmount } from '../../domain/amount.js';
import { DomainError } from '../../errors.js';
import type { AppEnv } from '../request-context.js';
import type { depositRoute, faultRoute, mineRoute, reorgRoute, requireTagRoute } from './routes.js';

const UINT32_MAX = 0xffffffff;

const requireAddress = (chain: ChainDefinition, field: string, address: string) => {
  if (!addressCodecs[chain.family].isValidAddress(address, chain.network)) {
    throw new DomainError('INVALID_ADDRESS', `${field} is not a valid ${chain.name} address`, { chainId: chain.id, field, address });
  }
};

/** XRP only: a decimal integer 0–4294967295, as a string or a JSON integer. */
const parseDestinationTag = (chain: ChainDefinition, tag: string | number | undefined): number | null => {
  if (tag === undefined) return null;
  if (chain.family !== 'xrp') throw new DomainError('BAD_REQUEST', `destinationTag exists only on XRP chains, not on ${chain.id}`, { chainId: chain.id });
  const text = String(tag);
  const value = /^(0|[1-9][0-9]{0,9})$/.test(text) ? Number(text) : -1;
  if (value < 0 || value > UINT32_MAX) throw new DomainError('BAD_REQUEST', 'destinationTag must be a decimal integer from 0 to 4294967295', { destinationTag: tag });
  return value;
};

const xrpChainIds = CHAINS.filter((chain) => chain.family === 'xrp').map((chain) => chain.id);

type TransferRequest = { chainId: string; tokenId: string; toAddress: string; amount: string; destinationTag?: string | number; fromAddress?: string };

/** One transfer of CONTRACT §8, checked as a node would refuse it: the chain, the token on it, the addresses, the amount, the tag. */
const checkedTransfer = (body: TransferRequest): { chainId: string; deposit: DevnetDeposit } => {
  const chain = requireSupportedChain(body.chainId);
  const token = requireKnownToken(body.tokenId);
  if (token.chainId !== chain.id) {
    throw new DomainError('INVALID_TOKEN_CHAIN', `token ${token.id} is not on chain ${chain.id}`, { chainId: chain.id, tokenId: token.id });
  }
  requireAddress(chain, 'toAddress', body.toAddress);
  if (body.fromAddress !== undefined) requireAddress(chain, 'fromAddress', body.fromAddress);
  const deposit = {
    toAddress: body.toAddress,
    asset: token.kind === 'native' ? 'native' : token.address,
    amount: parseAmount(body.amount),
    destinationTag: parseDestinationTag(chain, body.destinationTag),
    fromAddress: body.fromAddress ?? null,
  };
  return { chainId: chain.id, deposit };
};

/** the family's transaction builder refuses amounts the chain cannot carry (Bitcoin dust, XRP's supply, Tron's int64) */
const refusedAmount = (reason: Error, amount: string) => new DomainError('INVALID_AMOUNT', reason.message, { amount });

/** A batch's refusal names the transfer: `transfers[3]: …` and `details.index` (CONTRACT §8). */
const inBatch = <T>(index: number, check: () => T): T => {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError(error.code, `transfers[${index}]: ${error.message}`, { ...error.details, index });
  }
};

/** CONTRACT §8: move a devnet chain (deposit, mine, reorg, faults, required destination tags). */
export const devnetHandlers = (devnet: Devnet) => {
  const deposit: RouteHandler<typeof depositRoute, AppEnv> = async (c) => {
    const body = c.req.valid('json');
    if ('transfers' in body) {
      const transfers = body.transfers.map((transfer, index) => inBatch(index, () => checkedTransfer(transfer)));
      try {
        const made = await devnet.depositAll(transfers);
        return c.json({ transfers: made.map(({ txHash, blockNumber }) => ({ txnHash: txHash, blockNumber })) }, 201);
      } catch (error) {
        if (error instanceof DepositRefusedError) {
          const { index, reason } = error;
          inBatch(index, () => {
            throw refusedAmount(reason, body.transfers[index]!.amount);
          });
        }
        throw error;
      }
    }
    const { chainId, deposit } = checkedTransfer(body);
    try {
      const { txHash, blockNumber } = await devnet.controls(chainId).deposit(deposit);
      return c.json({ txnHash: txHash, blockNumber }, 201);
    } catch (error) {
      if (error instanceof RangeError) throw refusedAmount(error, body.amount);
      throw error;
    }
  };

  const mine: RouteHandler<typeof mineRoute, AppEnv> = async (c) => {
    const { chainId, count } = c.req.valid('json');
    const head = await devnet.controls(requireSupportedChain(chainId).id).mine(count);
    return c.json({ blockNumber: head.number }, 200);
  };

  const reorg: RouteHandler<typeof reorgRoute, AppEnv> = async (c) => {
    const { chainId, depth } = c.req.valid('json');
    const head = await devnet.controls(requireSupportedChain(chainId).id).reorg(depth);
    return c.json({ blockNumber: head.number }, 200);
  };

  const fault: RouteHandler<typeof faultRoute, AppEnv> = async (c) => {
    const body = c.req.valid('json');
    await devnet.controls(requireSupportedChain(body.chainId).id).setFault(body.fault, body.count);
    return c.json({}, 200);
  };

  const requireTag: RouteHandler<typeof requireTagRoute, AppEnv> = async (c) => {
    const { chainId, address } = c.req.valid('json');
    const chain = requireSupportedChain(chainId);
    if (chain.family !== 'xrp') {
      throw new DomainError('INVALID_CHAIN', `destination tags exist only on XRP chains, not on ${chain.id}`, { providedChainId: chainId, supportedChains: xrpChainIds });
    }
    requireAddress(chain, 'address', address);
    await devnet.controls(chain.id).requireDestinationTag(address);
    return c.json({}, 200);
  };

  return { deposit, mine, reorg, fault, requireTag };
};
