import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { Transaction } from 'bitcoinjs-lib';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIP125_REPLACEABLE_SEQUENCE } from '../../src/chains/bitcoin/replace-by-fee.js';
import { signBitcoinTransfer } from '../../src/chains/bitcoin/transactions.js';
import type { ChainDefinition } from '../../src/catalog/chain.js';
import { createDevnet, type Devnet } from '../../src/chains/devnet/index.js';
import { addressCodecs } from '../../src/chains/families.js';
import { BroadcastRejectedError } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateServiceTables } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const BITCOIN = findChain('bip122:000000000019d6689c085ae165831e93')!;
const bip32 = BIP32Factory(ecc);
const testRoot = bip32.fromSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'));
const userKey = (chain: ChainDefinition, index: number) => {
  const node = testRoot.derivePath(addressCodecs[chain.family].accountPath(chain.network)).derive(0).derive(index);
  return { address: addressCodecs[chain.family].addressFromPublicKey(node.publicKey, chain.network), privateKey: node.privateKey! };
};
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (error: unknown) => (error instanceof BroadcastRejectedError ? error.message : `unexpected ${String(error)}`),
  );

/** BIP125 on the devnet's Bitcoin chain, and the test-only fee floor that keeps a transaction unmined. */
describe('devnet: Bitcoin replace-by-fee', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  let devnet: Devnet;
  const clock = () => new Date('2026-11-22T10:00:00.000Z');
  let users = 40;

  beforeAll(async () => {
    database = await createTestDatabase('devnet_rbf');
    await migrateServiceTables(database.pool);
    db = createDatabase(database.pool);
    devnet = createDevnet({ db, clock, blockTimeMs: 3_600_000, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await database.drop();
  });

  /** a fresh key with one confirmed 100 000 sat output, and a signer of spends of it (fee = what the outputs leave) */
  const funded = async () => {
    const owner = userKey(BITCOIN, users++);
    const recipient = userKey(BITCOIN, users++).address;
    const { txHash } = await devnet.controls(BITCOIN.id).deposit({ toAddress: owner.address, asset: 'native', amount: 100_000n });
    const spend = (fee: bigint, sequence?: number) =>
      signBitcoinTransfer({
        network: 'mainnet',
        inputs: [{ txHash, index: 0, amount: 100_000n, privateKey: owner.privateKey, ...(sequence === undefined ? {} : { sequence }) }],
        outputs: [
          { address: recipient, amount: 60_000n },
          { address: owner.address, amount: 40_000n - fee },
        ],
      });
    return { owner, recipient, txHash, spend };
  };
  const gateway = () => devnet.gateway(BITCOIN.id);

  it('a signalling transaction is replaced by one paying more; the original is gone, the replacement mined', async () => {
    const { recipient, spend } = await funded();
    const original = spend(1_410n, BIP125_REPLACEABLE_SEQUENCE);
    const vsize = BigInt(Transaction.fromHex(original.raw).virtualSize());
    expect(await gateway().broadcast(original.raw)).toEqual({ txHash: original.txHash });

    // BIP125 rule 4: more than the original by at least 1 sat/vB of its own size
    const tooCheap = spend(1_410n + vsize - 1n, BIP125_REPLACEABLE_SEQUENCE);
    expect(await rejection(gateway().broadcast(tooCheap.raw))).toMatch(/^insufficient fee, rejecting replacement/);
    expect(await gateway().transactionStatus(original.txHash)).toEqual({ status: 'pending' });

    const replacement = spend(1_410n + vsize, BIP125_REPLACEABLE_SEQUENCE);
    expect(await gateway().broadcast(replacement.raw)).toEqual({ txHash: replacement.txHash });
    expect(await gateway().transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    // the replaced one cannot come back: the replacement pays more
    expect(await rejection(gateway().broadcast(original.raw))).toMatch(/^insufficient fee/);

    await devnet.controls(BITCOIN.id).mine();
    expect(await gateway().transactionStatus(replacement.txHash)).toMatchObject({ status: 'confirmed', fee: 1_410n + vsize });
    expect((await gateway().unspentOutputs([recipient])).map((output) => output.amount)).toEqual([60_000n]);
  });

  it('a transaction that does not signal stays a double spend, whatever the new one pays', async () => {
    const { txHash, spend } = await funded();
    const original = spend(1_410n);
    await gateway().broadcast(original.raw);
    const richer = spend(5_000n, BIP125_REPLACEABLE_SEQUENCE);
    expect(await rejection(gateway().broadcast(richer.raw))).toBe(`input ${txHash}:0 is already spent by ${original.txHash}`);
    await devnet.controls(BITCOIN.id).mine();
    expect(await gateway().transactionStatus(original.txHash)).toMatchObject({ status: 'confirmed' });
  });

  it('a mined transaction is never replaced', async () => {
    const { txHash, spend } = await funded();
    const original = spend(1_410n, BIP125_REPLACEABLE_SEQUENCE);
    await gateway().broadcast(original.raw);
    await devnet.controls(BITCOIN.id).mine();
    expect(await rejection(gateway().broadcast(spend(9_000n, BIP125_REPLACEABLE_SEQUENCE).raw))).toBe(`input ${txHash}:0 is already spent by ${original.txHash}`);
  });

  it('the fee floor keeps cheaper transactions (and their children) out of blocks until it is lifted', async () => {
    const controls = devnet.controls(BITCOIN.id);
    const { owner, spend } = await funded();
    const cheap = spend(1_410n, BIP125_REPLACEABLE_SEQUENCE); // about 10 sat/vB
    await gateway().broadcast(cheap.raw);
    // a child spending the cheap one's change, paying plenty: it cannot be mined before its parent
    const child = signBitcoinTransfer({
      network: 'mainnet',
      inputs: [{ txHash: cheap.txHash, index: 1, amount: 40_000n - 1_410n, privateKey: owner.privateKey }],
      outputs: [{ address: owner.address, amount: 30_000n }],
    });
    await gateway().broadcast(child.raw);
    controls.setMinimumMinedFeeRate(11n);
    try {
      await controls.mine(3);
      expect(await gateway().transactionStatus(cheap.txHash)).toEqual({ status: 'pending' });
      expect(await gateway().transactionStatus(child.txHash)).toEqual({ status: 'pending' });
    } finally {
      controls.setMinimumMinedFeeRate(null);
    }
    await controls.mine();
    expect(await gateway().transactionStatus(cheap.txHash)).toMatchObject({ status: 'confirmed' });
    expect(await gateway().transactionStatus(child.txHash)).toMatchObject({ status: 'confirmed' });
  });

  it('faults meet only broadcasts tagged as a withdrawal’s', async () => {
    const controls = devnet.controls(BITCOIN.id);
    await controls.setFault('broadcast_error', 1);
    try {
      const sweep = (await funded()).spend(1_410n);
      expect(await gateway().broadcast(sweep.raw, { purpose: 'sweep' })).toEqual({ txHash: sweep.txHash });
      const untagged = (await funded()).spend(1_410n);
      expect(await gateway().broadcast(untagged.raw)).toEqual({ txHash: untagged.txHash });
      const withdrawal = (await funded()).spend(1_410n);
      expect(await rejection(gateway().broadcast(withdrawal.raw, { purpose: 'withdrawal' }))).toMatch(/devnet fault: broadcast_error/);
      expect(await gateway().broadcast(withdrawal.raw, { purpose: 'withdrawal' })).toEqual({ txHash: withdrawal.txHash });
    } finally {
      await controls.setFault('broadcast_error', 0);
    }
  });
});
