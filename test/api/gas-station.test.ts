import { HDNodeWallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setChainEnabled } from '../../src/application/chain-switches.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { addressCodecs } from '../../src/chains/families.js';
import { findChain } from '../../src/catalog/registry.js';
import { createSigner } from '../../src/chains/signer/signer.js';
import { ORGANIZATIONS_PROJECTION } from '../../src/projections/organizations.js';
import { startTestService, type TestService } from '../support/api-harness.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const GAS_CHAINS = ['eip155:1', 'eip155:137', 'eip155:56', 'tron:0x00000000000000000000000000000000', 'eip155:11155111', 'eip155:97', 'tron:shasta'];
const evmGasAddress = (index: number) => HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/3/${index}`).address;
const tronGasAddress = (index: number) => createSigner(MNEMONIC).addressOf(findChain('tron:shasta')!, { branch: 'gas', index });

const chainSummary = (chainId: string) => {
  const chain = findChain(chainId)!;
  return { name: chain.name, properties: { nativeCurrency: chain.properties.nativeCurrency, decimals: chain.properties.decimals } };
};

describe('GET /gas-station', () => {
  let service: TestService;
  let acme: { apiKey: string; orgId: string };
  let globex: { apiKey: string; orgId: string };

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000', LEDGERGATE_SIGNER_MNEMONIC: MNEMONIC });
    const first = await service.bootstrap('Acme', ['alice']);
    const second = await service.bootstrap('Globex', ['bob']);
    acme = { apiKey: first.apiKey, orgId: first.organization.id };
    globex = { apiKey: second.apiKey, orgId: second.organization.id };
  });
  afterAll(async () => service.stop());

  it('lists a gas wallet per enabled EVM and Tron chain, with the balance the chain holds', async () => {
    const empty = await service.request('GET', '/gas-station', { apiKey: acme.apiKey });
    expect(empty.status).toBe(200);
    const evm = evmGasAddress(0);
    const tron = tronGasAddress(0);
    expect(empty.body).toEqual({
      gasWallets: GAS_CHAINS.map((chainId) => ({ chainId, address: chainId.startsWith('tron:') ? tron : evm, balance: '0', Chain: chainSummary(chainId) })),
    });
    for (const wallet of (empty.body as { gasWallets: { chainId: string; address: string }[] }).gasWallets) {
      const chain = findChain(wallet.chainId)!;
      expect(addressCodecs[chain.family].isValidAddress(wallet.address, chain.network)).toBe(true);
    }

    // funded the way an operator funds it: a transfer on the chain to the address shown
    const funded = await service.request('POST', '/devnet/deposits', {
      apiKey: acme.apiKey,
      body: { chainId: 'eip155:1', tokenId: 'eip155:1/slip44:60', toAddress: evm, amount: '172000000000000' },
    });
    expect(funded.status).toBe(201);
    const tronFunded = await service.request('POST', '/devnet/deposits', {
      apiKey: acme.apiKey,
      body: { chainId: 'tron:shasta', tokenId: 'tron:shasta/slip44:195', toAddress: tron, amount: '28260000' },
    });
    expect(tronFunded.status).toBe(201);

    const after = await service.request('GET', '/gas-station', { apiKey: acme.apiKey });
    const balances = Object.fromEntries((after.body as { gasWallets: { chainId: string; balance: string }[] }).gasWallets.map((wallet) => [wallet.chainId, wallet.balance]));
    expect(balances).toEqual({
      'eip155:1': '172000000000000',
      'eip155:137': '0', // the same address on another chain holds nothing there
      'eip155:56': '0',
      'tron:0x00000000000000000000000000000000': '0',
      'eip155:11155111': '0',
      'eip155:97': '0',
      'tron:shasta': '28260000',
    });
  });

  it('gives each organization its own gas wallets, and lists only its enabled chains', async () => {
    const { position } = await setChainEnabled(service.services, globex.orgId, 'eip155:56', false, { actor: 'test' });
    await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, position!);
    const response = await service.request('GET', '/gas-station', { apiKey: globex.apiKey });
    expect(response.status).toBe(200);
    const evm = evmGasAddress(1);
    const tron = tronGasAddress(1);
    expect(response.body).toEqual({
      gasWallets: GAS_CHAINS.filter((chainId) => chainId !== 'eip155:56').map((chainId) => ({
        chainId,
        address: chainId.startsWith('tron:') ? tron : evm,
        balance: '0',
        Chain: chainSummary(chainId),
      })),
    });
    expect(evm).not.toBe(evmGasAddress(0));
    // asking again gives the same wallets: the index is allocated once
    const again = await service.request('GET', '/gas-station', { apiKey: acme.apiKey });
    expect((again.body as { gasWallets: { address: string }[] }).gasWallets[0]!.address).toBe(evmGasAddress(0));
  });

  it('needs credentials and is documented', async () => {
    const anonymous = await service.request('GET', '/gas-station');
    expect(anonymous.status).toBe(401);
    const document = await service.request('GET', '/openapi.json');
    const paths = (document.body as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> }).paths;
    expect(Object.keys(paths['/gas-station']!.get!.responses)).toContain('200');
  });
});
