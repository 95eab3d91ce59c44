import * as bitcoin from 'bitcoinjs-lib';
import { getAddress, isAddress } from 'ethers';
import { TronWeb } from 'tronweb';
import { isValidClassicAddress } from 'xrpl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { ACCOUNTS_PROJECTION } from '../../src/projections/accounts.js';
import { startTestService, type TestService } from '../support/api-harness.js';

/** The published test mnemonic: its vectors are known for every family. */
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

const NATIVE_TOKEN: Record<string, string> = {
  'eip155:1': 'eip155:1/slip44:60',
  'eip155:137': 'eip155:137/slip44:60',
  'eip155:56': 'eip155:56/slip44:60',
  'bip122:000000000019d6689c085ae165831e93': 'bip122:000000000019d6689c085ae165831e93/slip44:0',
  'tron:0x00000000000000000000000000000000': 'tron:0x00000000000000000000000000000000/slip44:195',
  'xrpl:mainnet': 'xrpl:mainnet/slip44:144',
  'eip155:11155111': 'eip155:11155111/slip44:60',
  'eip155:97': 'eip155:97/slip44:60',
  'bip122:000000000933ea01ad0ee984209779ba': 'bip122:000000000933ea01ad0ee984209779ba/slip44:0',
  'tron:shasta': 'tron:shasta/slip44:195',
  'xrpl:testnet': 'xrpl:testnet/slip44:144',
};

/** Whether the family's own library accepts the address on that chain's network. */
const acceptedByFamilyLibrary = (chainId: string, address: string): boolean => {
  if (chainId.startsWith('eip155:')) return isAddress(address) && getAddress(address) === address;
  if (chainId.startsWith('bip122:')) {
    const network = chainId === 'bip122:000000000019d6689c085ae165831e93' ? bitcoin.networks.bitcoin : bitcoin.networks.testnet;
    try {
      return bitcoin.address.toOutputScript(address, network).length === 22; // P2WPKH: OP_0 <20 bytes>
    } catch {
      return false;
    }
  }
  if (chainId.startsWith('tron:')) return TronWeb.isAddress(address) && address.startsWith('T');
  return isValidClassicAddress(address);
};

describe('deposit addresses over HTTP (SPEC §2.4, §4.4)', () => {
  let service: TestService;
  let apiKey: string;
  let orgId: string;

  beforeAll(async () => {
    service = await startTestService({ LEDGERGATE_SIGNER_MNEMONIC: ABANDON, DEVNET_BLOCK_TIME_MS: '3600000' });
    const acme = await service.bootstrap('Acme', ['alice']);
    apiKey = acme.apiKey;
    orgId = acme.organization.id;
  });
  afterAll(async () => service.stop());

  const depositAddress = (chainId: string, userId: string, tokenId = NATIVE_TOKEN[chainId]!) =>
    service.request('GET', `/payments/deposit-address?${new URLSearchParams({ chainId, tokenId, userId })}`, { apiKey });

  it('derives the published vectors: the first index of each family is the "abandon … about" address', async () => {
    const first = async (chainId: string) => ((await depositAddress(chainId, 'vector-user')).body?.address as { properties: Record<string, string> }).properties;
    expect(await first('eip155:1')).toEqual({ address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }); // m/44'/60'/0'/0/0
    expect(await first('bip122:000000000019d6689c085ae165831e93')).toEqual({ address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }); // BIP84
    expect(await first('tron:0x00000000000000000000000000000000')).toEqual({ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' }); // m/44'/195'/0'/0/0
    expect(await first('xrpl:mainnet')).toEqual({ address: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', destinationTag: '1' }); // m/44'/144'/0'/0/0
  });

  it('gives an address on each of the 11 chains that the family library accepts for that network', async () => {
    for (const chainId of Object.keys(NATIVE_TOKEN)) {
      const response = await depositAddress(chainId, 'every-chain-user');
      expect(response.status, chainId).toBe(200);
      const account = response.body?.address as { chainId: string; externalUserId: string; properties: { address: string } };
      expect(account).toMatchObject({ orgId, chainId, externalUserId: 'every-chain-user' });
      expect(acceptedByFamilyLibrary(chainId, account.properties.address), `${chainId} ${account.properties.address}`).toBe(true);
    }
  });

  it('keeps one account per user per chain, with one address for every token of the chain', async () => {
    const native = await depositAddress('eip155:1', 'token-user');
    const usdt = await depositAddress('eip155:1', 'token-user', 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7');
    const usdc = await depositAddress('eip155:1', 'token-user', 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');
    expect(usdt.body).toEqual(native.body);
    expect(usdc.body).toEqual(native.body);
    const trx = await depositAddress('tron:0x00000000000000000000000000000000', 'token-user');
    const trc20 = await depositAddress('tron:0x00000000000000000000000000000000', 'token-user', 'tron:0x00000000000000000000000000000000/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(trc20.body).toEqual(trx.body);
    const other = await depositAddress('eip155:1', 'another-token-user');
    expect((other.body?.address as { properties: { address: string } }).properties.address).not.toBe(
      (native.body?.address as { properties: { address: string } }).properties.address,
    );
  });

  it('gives XRP users the organization’s address and tells them apart by destination tag', async () => {
    const accounts = await Promise.all(['x1', 'x2', 'x3'].map(async (user) => (await depositAddress('xrpl:mainnet', user)).body?.address as { properties: { address: string; destinationTag: string } }));
    expect(new Set(accounts.map((account) => account.properties.address)).size).toBe(1);
    expect(new Set(accounts.map((account) => account.properties.destinationTag)).size).toBe(3);
  });

  it('answers 100 concurrent first requests of one user with one account and sends one account.created', async () => {
    const responses = await Promise.all(Array.from({ length: 100 }, () => depositAddress('bip122:000000000019d6689c085ae165831e93', 'crowd-user')));
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 100 }, () => 200));
    expect(new Set(responses.map((response) => JSON.stringify(response.body))).size).toBe(1);
    await waitForProjection(service.infrastructure.db, ACCOUNTS_PROJECTION, await service.infrastructure.store.headPosition());
    const listed = await service.request('GET', '/accounts?limit=1000', { apiKey });
    const crowd = (listed.body?.accounts as { externalUserId: string }[]).filter((account) => account.externalUserId === 'crowd-user');
    expect(crowd).toHaveLength(1);
    const deliveries = await service.infrastructure.db
      .selectFrom('webhook_deliveries')
      .select('body')
      .where('org_id', '=', orgId)
      .where('event_type', '=', 'account.created')
      .execute();
    expect(deliveries.filter((delivery) => delivery.body.includes('"crowd-user"'))).toHaveLength(1);
  });

  it('refuses an invalid user id with 400 INVALID_USER_ID and creates nothing', async () => {
    for (const userId of ['', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
      const response = await depositAddress('eip155:1', userId);
      expect(response.status, JSON.stringify(userId)).toBe(400);
      expect(response.body).toMatchObject({ error: 'INVALID_USER_ID', statusCode: 400 });
    }
    const events = await service.infrastructure.store.readAll({ filter: { categories: ['account'] }, maxCount: 10_000 });
    expect(events.filter((event) => String(event.data.externalUserId).length > 255 || String(event.data.externalUserId).includes('\t'))).toEqual([]);
  });
});
