import { describe, expect, it } from 'vitest';
import { checkGas } from '../../src/application/withdrawal-checks.js';
import type { OrganizationChainWallets } from '../../src/application/organization-wallets.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import type { ChainGateway } from '../../src/chains/gateway.js';

/**
 * The gas check takes a withdrawal on a recent answer of the gas wallet's balance when it covers
 * the fee, and never refuses on one: a short recent answer is read again, after the ask.
 */
const ethereum = findChain('eip155:1')!;
const ether = nativeToken('eip155:1');
const FEE = 21_000n;
const wallets = { chain: ethereum, index: 0, settlementAddress: '0xsettlement', gasAddress: '0xgas' } as unknown as OrganizationChainWallets;

/** a gateway whose remembered answer is `recent` and whose balance now is `now`; it counts each kind of ask */
const gatewayWith = (recent: bigint, now: bigint) => {
  const asks = { recent: 0, fresh: 0 };
  const gateway = {
    balance: async (_address: string, _asset: string, options?: { recentMs?: number }) => {
      if ((options?.recentMs ?? 0) > 0) {
        asks.recent++;
        return recent;
      }
      asks.fresh++;
      return now;
    },
    estimateFee: async () => ({ fee: FEE }),
  } as unknown as ChainGateway;
  return { gateway, asks };
};

const outcome = (gateway: ChainGateway, buffered?: () => Promise<bigint>) =>
  checkGas(ethereum, ether, gateway, wallets, '0xrecipient', 1n, buffered).then(
    () => 'taken',
    (error: { code?: string }) => error.code,
  );

describe('the gas check of POST /withdrawals', () => {
  it('takes a withdrawal a recent answer covers, without reading again', async () => {
    const { gateway, asks } = gatewayWith(FEE, 0n);
    expect(await outcome(gateway)).toBe('taken');
    expect(asks).toEqual({ recent: 1, fresh: 0 });
  });

  it('reads again before refusing: funded since the recent answer, it is taken', async () => {
    const { gateway, asks } = gatewayWith(0n, FEE);
    expect(await outcome(gateway)).toBe('taken');
    expect(asks).toEqual({ recent: 1, fresh: 1 });
  });

  it('refuses only on the fresh read, counting the buffer', async () => {
    expect(await outcome(gatewayWith(0n, FEE - 1n).gateway)).toBe('INSUFFICIENT_GAS');
    expect(await outcome(gatewayWith(0n, FEE - 1n).gateway, async () => 1n)).toBe('taken');
  });
});
