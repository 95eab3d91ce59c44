import type { ChainDefinition } from '../catalog/chain.js';
import { findChain } from '../catalog/registry.js';
import type { Signer } from '../chains/signer/signer.js';
import { decideAndAppend, type CommandMetadata, type CommandServices } from './command-handler.js';
import { indexFor } from './deposit-accounts.js';

/** The wallets an organization holds on one chain: where sweeps go, and (EVM, Tron) what pays their gas. */
export interface OrganizationChainWallets {
  chain: ChainDefinition;
  /** the organization's index in the chain's key space: settlement child 2/i, gas child 3/i */
  index: number;
  settlementAddress: string;
  /** null on Bitcoin and XRP (SPEC §1: fees come from the funds themselves) */
  gasAddress: string | null;
}

export interface OrganizationWallets {
  /** allocates the organization's index in the chain's key space on first use (atomic: never twice, never shared) */
  walletsOf(orgId: string, chainId: string, metadata?: CommandMetadata): Promise<OrganizationChainWallets>;
}

export const hasGasWallet = (chain: ChainDefinition): boolean => chain.family === 'evm' || chain.family === 'tron';

/** One counter per key space for organizations, apart from the deposit addresses' counter. */
export const organizationWalletSpace = (keySpace: string) => `organizationWallets:${keySpace}`;

/** The settlement and (EVM, Tron) gas addresses at an organization's index on a chain. */
export const organizationWalletAddresses = (signer: Pick<Signer, 'addressOf'>, chain: ChainDefinition, index: number) => ({
  settlementAddress: signer.addressOf(chain, { branch: 'settlement', index }),
  gasAddress: hasGasWallet(chain) ? signer.addressOf(chain, { branch: 'gas', index }) : null,
});
const ORGANIZATION_OWNER = '(organization)';

/**
 * Settlement and gas wallets come from the signer's non-receive branches, at one index per
 * organization and key space (all EVM chains share it, like deposit addresses). The index is
 * allocated through the derivation counter (counter revision + owner claim created with
 * no_stream, one atomic append), so two organizations never share a wallet and a race allocates
 * once. Indexes never change once given: they and the addresses derived from them (two EC point
 * derivations each, the costliest step of a withdrawal request) are cached for the life of the process.
 */
export const createOrganizationWallets = (services: CommandServices & { signer: Pick<Signer, 'addressOf'> }): OrganizationWallets => {
  const cache = new Map<string, number>();
  const walletsCache = new Map<string, OrganizationChainWallets>();

  const indexOf = async (orgId: string, keySpace: string, metadata: CommandMetadata): Promise<number> => {
    const key = `${orgId}:${keySpace}`;
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const space = organizationWalletSpace(keySpace);
    // another process allocated this organization's index, or another organization took this one: read again
    const { index } = await decideAndAppend(services, { ...metadata, orgId }, async (now) => {
      const { index, appends } = await indexFor(services, space, orgId, ORGANIZATION_OWNER, now);
      return { appends, result: { index } };
    });
    cache.set(key, index);
    return index;
  };

  return {
    walletsOf: async (orgId, chainId, metadata = { actor: 'system' }) => {
      const key = `${orgId}:${chainId}`;
      const cached = walletsCache.get(key);
      if (cached) return cached;
      const chain = findChain(chainId);
      if (!chain) throw new Error(`no chain ${chainId}`);
      const index = await indexOf(orgId, chain.keySpace, metadata);
      const wallets = { chain, index, ...organizationWalletAddresses(services.signer, chain, index) };
      walletsCache.set(key, wallets);
      return wallets;
    },
  };
};
