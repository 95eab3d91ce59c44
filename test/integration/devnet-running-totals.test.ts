import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainDefinition } from '../../src/catalog/chain.js';
import { findChain } from '../../src/catalog/registry.js';
import { withLockedChain } from '../../src/chains/devnet/chain-state.js';
import { createDevnet, devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import * as runningTotals from '../../src/chains/devnet/migrations/20261126T1700-devnet-running-totals.js';
import { mineBlock } from '../../src/chains/devnet/mining.js';
import { signEvmTransfer } from '../../src/chains/evm/transactions.js';
import { addressCodecs } from '../../src/chains/families.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateServiceTables } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const ETHEREUM = findChain('eip155:1')!;
const TRON = findChain('tron:0x00000000000000000000000000000000')!;
const XRP = findChain('xrpl:mainnet')!;
const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const GWEI = 1_000_000_000n;
const FEE = 21_000n * 2n * GWEI;

const bip32 = BIP32Factory(ecc);
const testRoot = bip32.fromSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'));
const userKey = (chain: ChainDefinition, index: number) => {
  const node = testRoot.derivePath(addressCodecs[chain.family].accountPath(chain.network)).derive(0).derive(index);
  return { address: addressCodecs[chain.family].addressFromPublicKey(node.publicKey, chain.network), privateKey: node.privateKey! };
};
const evmTransfer = (privateKey: Uint8Array, params: { to: string; amount: bigint; nonce: number }) =>
  signEvmTransfer(privateKey, { chainId: 1, to: params.to, asset: 'native', amount: params.amount, nonce: params.nonce, gasLimit: 21_000n, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI });

/**
 * The devnet's confirmed balances and nonces are running totals kept by mining and reorgs
 * (devnet_balances, devnet_nonces). What they must always equal: the same figures summed over the
 * whole history, as the devnet computed them before it kept totals.
 */
describe('devnet running totals', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  let devnet: Devnet;
  const now = new Date('2026-11-22T10:00:00.000Z');
  const clock = () => now;

  beforeAll(async () => {
    database = await createTestDatabase('devnet_totals');
    await migrateServiceTables(database.pool);
    db = createDatabase(database.pool);
    devnet = createDevnet({ db, clock, blockTimeMs: 3_600_000, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await devnet.stopProducer();
    await database.drop();
  });

  /** every address's confirmed balances and used nonces summed over the history, nonzero ones only */
  const fromHistory = async () => {
    const { rows: balances } = await sql<{ chain_id: string; address: string; asset: string; amount: string }>`
      select chain_id, address, asset, sum(delta)::text as amount from (
        select t.chain_id, t.to_address as address, t.asset, t.amount as delta
          from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash where x.status = 'mined'
        union all
        select t.chain_id, t.from_address, t.asset, -t.amount
          from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash where x.status = 'mined' and x.kind = 'signed'
        union all
        select x.chain_id, x.sender, 'native', -x.fee from devnet_transactions x where x.kind = 'signed' and x.status in ('mined', 'failed')
      ) moved group by chain_id, address, asset having sum(delta) <> 0 order by 1, 2, 3`.execute(db);
    const { rows: nonces } = await sql<{ chain_id: string; address: string; used: number }>`
      select chain_id, sender as address, count(*)::int as used from devnet_transactions
       where kind = 'signed' and status in ('mined', 'failed') group by chain_id, sender order by 1, 2`.execute(db);
    return { balances, nonces };
  };
  const kept = async () => {
    const { rows: balances } = await sql<{ chain_id: string; address: string; asset: string; amount: string }>`
      select chain_id, address, asset, amount::text from devnet_balances where amount <> 0 order by 1, 2, 3`.execute(db);
    const { rows: nonces } = await sql<{ chain_id: string; address: string; used: number }>`
      select chain_id, address, used from devnet_nonces where used <> 0 order by 1, 2`.execute(db);
    return { balances, nonces };
  };

  it('equal the history after deposits, spends, failed transactions and reorgs; the migration fills them the same from the history', async () => {
    const eth = devnet.controls(ETHEREUM.id);
    const gateway = devnet.gateway(ETHEREUM.id);
    const alice = userKey(ETHEREUM, 40);
    const bob = userKey(ETHEREUM, 41);
    await eth.deposit({ toAddress: alice.address, asset: 'native', amount: 10n ** 17n });
    await eth.deposit({ toAddress: alice.address, asset: USDT_ETHEREUM, amount: 5_000_000n });
    await eth.deposit({ toAddress: bob.address, asset: 'native', amount: 9n, fromAddress: userKey(ETHEREUM, 42).address });
    await devnet.controls(TRON.id).deposit({ toAddress: userKey(TRON, 40).address, asset: 'native', amount: 3_000_000n });
    await devnet.controls(XRP.id).deposit({ toAddress: userKey(XRP, 40).address, asset: 'native', amount: 50_000_000n });
    let nonce = await gateway.nextNonce(alice.address);
    await gateway.broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 1000n, nonce }));
    await eth.mine();
    // two mined as failed (fee charged, nothing moved), one mined
    await eth.setFault('revert', 2);
    nonce = await gateway.nextNonce(alice.address);
    for (let offset = 0; offset < 3; offset++) await gateway.broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 5n, nonce: nonce + offset }), { purpose: 'withdrawal' });
    await eth.mine();
    expect(await kept()).toEqual(await fromHistory());

    // a reorg gives back what its blocks moved; a re-broadcast counts again once mined
    nonce = await gateway.nextNonce(alice.address);
    const raw = evmTransfer(alice.privateKey, { to: bob.address, amount: 77n, nonce });
    await gateway.broadcast(raw);
    await eth.mine();
    await eth.mine();
    const before = { alice: await gateway.balance(alice.address, 'native'), bob: await gateway.balance(bob.address, 'native') };
    await eth.reorg(2);
    expect(await kept()).toEqual(await fromHistory());
    expect(await gateway.balance(bob.address, 'native')).toBe(before.bob - 77n);
    expect(await gateway.nextNonce(alice.address)).toBe(nonce);
    await gateway.broadcast(raw);
    await eth.mine();
    expect(await gateway.balance(alice.address, 'native')).toBe(before.alice);
    expect(await kept()).toEqual(await fromHistory());

    // the migration's fill from the history gives the same totals
    const expected = await kept();
    await runningTotals.down(db as unknown as Kysely<unknown>);
    await runningTotals.up(db as unknown as Kysely<unknown>);
    expect(await kept()).toEqual(expected);
  });

  it('a block whose transaction rolls back (a crash after mining, before the commit) leaves the totals and statuses as they were', async () => {
    const gateway = devnet.gateway(ETHEREUM.id);
    const alice = userKey(ETHEREUM, 43);
    const bob = userKey(ETHEREUM, 44);
    await devnet.controls(ETHEREUM.id).deposit({ toAddress: alice.address, asset: 'native', amount: 10n ** 16n });
    const { txHash } = await gateway.broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 5n, nonce: 0 }));
    const totals = await kept();
    const crash = new Error('crash between mining and its commit');
    await expect(
      withLockedChain(devnetDb(db), ETHEREUM, async (trx, state) => {
        await mineBlock(trx, state, clock());
        throw crash;
      }),
    ).rejects.toBe(crash);
    expect(await kept()).toEqual(totals);
    expect(await gateway.transactionStatus(txHash)).toEqual({ status: 'pending' });
    expect(await gateway.nextNonce(alice.address)).toBe(1);
    await devnet.controls(ETHEREUM.id).mine();
    expect(await gateway.balance(bob.address, 'native')).toBe(5n);
    expect(await kept()).toEqual(await fromHistory());
  });

  it('a block re-checks each transaction against those it took before it: a second spend the first left unfunded is dropped', async () => {
    const eth = devnet.controls(ETHEREUM.id);
    const gateway = devnet.gateway(ETHEREUM.id);
    const carol = userKey(ETHEREUM, 45);
    const dave = userKey(ETHEREUM, 46);
    const unit = 10n ** 15n;
    await eth.deposit({ toAddress: carol.address, asset: 'native', amount: unit + FEE + 1n });
    await eth.deposit({ toAddress: carol.address, asset: 'native', amount: unit + FEE + 1n });
    // admitted against both deposits: each spends one
    const first = await gateway.broadcast(evmTransfer(carol.privateKey, { to: dave.address, amount: unit, nonce: 0 }));
    const second = await gateway.broadcast(evmTransfer(carol.privateKey, { to: dave.address, amount: unit, nonce: 1 }));
    // the second deposit's block is replaced: the block funds the first spend only
    await eth.reorg(1);
    await eth.mine();
    expect(await gateway.transactionStatus(first.txHash)).toMatchObject({ status: 'confirmed' });
    expect(await gateway.transactionStatus(second.txHash)).toEqual({ status: 'not_found' });
    const dropped = await devnetDb(db).selectFrom('devnet_transactions').select('error').where('hash', '=', second.txHash).executeTakeFirstOrThrow();
    expect(dropped.error).toBe(`insufficient funds: ${carol.address} holds 1 of native, the transaction needs ${unit + FEE}`);
    expect(await gateway.balance(dave.address, 'native')).toBe(unit);
    expect(await gateway.balance(carol.address, 'native')).toBe(1n);
    expect(await kept()).toEqual(await fromHistory());
  });
});
