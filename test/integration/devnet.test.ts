import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBitcoinTransfer } from '../../src/chains/bitcoin/transactions.js';
import type { ChainDefinition, PreviousOutput } from '../../src/catalog/chain.js';
import { createDevnet, DepositRefusedError, devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import { DEVNET_HEAD_CHANNEL, withLockedChain } from '../../src/chains/devnet/chain-state.js';
import { mineDueChains } from '../../src/chains/devnet/producer.js';
import { signEvmTransfer } from '../../src/chains/evm/transactions.js';
import { addressCodecs, transactionCodecs } from '../../src/chains/families.js';
import { BroadcastRejectedError } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { signXrpPayment } from '../../src/chains/xrp/transactions.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateServiceTables } from '../../src/infrastructure.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const ETHEREUM = findChain('eip155:1')!;
const BITCOIN = findChain('bip122:000000000019d6689c085ae165831e93')!;
const TRON = findChain('tron:0x00000000000000000000000000000000')!;
const XRP = findChain('xrpl:mainnet')!;
const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const GWEI = 1_000_000_000n;

/** Users' keys from the BIP39 test vector mnemonic: the test signs their transactions itself. */
const bip32 = BIP32Factory(ecc);
const testRoot = bip32.fromSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'));
const userKey = (chain: ChainDefinition, index: number) => {
  const node = testRoot.derivePath(addressCodecs[chain.family].accountPath(chain.network)).derive(0).derive(index);
  return { address: addressCodecs[chain.family].addressFromPublicKey(node.publicKey, chain.network), privateKey: node.privateKey! };
};

const evmTransfer = (privateKey: Uint8Array, params: { to: string; amount: bigint; nonce: number; maxFeePerGas?: bigint }) =>
  signEvmTransfer(privateKey, {
    chainId: 1,
    to: params.to,
    asset: 'native',
    amount: params.amount,
    nonce: params.nonce,
    gasLimit: 21_000n,
    maxFeePerGas: params.maxFeePerGas ?? 2n * GWEI,
    maxPriorityFeePerGas: GWEI,
  });

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (error: unknown) => (error instanceof BroadcastRejectedError ? error.message : `unexpected ${String(error)}`),
  );

describe('devnet', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  let devnet: Devnet;
  let now = new Date('2026-11-22T10:00:00.000Z');
  const clock = () => now;
  const open = (kysely: Kysely<Database>) => createDevnet({ db: kysely, clock, blockTimeMs: 3_600_000, logger: createLogger('silent') });

  beforeAll(async () => {
    database = await createTestDatabase('devnet');
    await migrateServiceTables(database.pool);
    db = createDatabase(database.pool);
    devnet = open(db);
  });
  afterAll(async () => {
    await devnet.stopProducer();
    await database.drop();
  });

  /** The raw transaction the devnet stored, decoded again by the family's codec (Bitcoin with the outputs it spends). */
  const decodeStored = async (chain: ChainDefinition, txHash: string) => {
    const row = await devnetDb(db).selectFrom('devnet_transactions').select(['raw', 'kind']).where('chain_id', '=', chain.id).where('hash', '=', txHash).executeTakeFirstOrThrow();
    const outputs = await devnetDb(db).selectFrom('devnet_transfers').selectAll().where('chain_id', '=', chain.id).execute();
    const previousOutput = (hash: string, index: number): PreviousOutput | undefined => {
      const found = outputs.find((output) => output.tx_hash === hash && output.transfer_index === index);
      return found ? { address: found.to_address, amount: BigInt(found.amount) } : undefined;
    };
    expect(row.kind).toBe('signed');
    return transactionCodecs[chain.family].decodeSignedTransaction(row.raw!, { chain, previousOutput });
  };

  describe('a faucet deposit is a real signed transaction of the family', () => {
    const cases = [
      { name: 'Ether', chain: ETHEREUM, asset: 'native', amount: 10n ** 18n, tag: null, index: 1 },
      { name: 'USDT on Ethereum', chain: ETHEREUM, asset: USDT_ETHEREUM.toLowerCase(), amount: 25_000_000n, tag: null, index: 2 },
      { name: 'bitcoin', chain: BITCOIN, asset: 'native', amount: 150_000n, tag: null, index: 1 },
      { name: 'TRX', chain: TRON, asset: 'native', amount: 5_000_000n, tag: null, index: 1 },
      { name: 'USDT on Tron', chain: TRON, asset: USDT_TRON, amount: 7_000_000n, tag: null, index: 2 },
      { name: 'XRP with a destination tag', chain: XRP, asset: 'native', amount: 20_000_000n, tag: 12345, index: 1 },
    ];
    for (const { name, chain, asset, amount, tag, index } of cases) {
      it(`${name}: decodes to the transfer asked for, shows in transfersInBlock and the balance`, async () => {
        const gateway = devnet.gateway(chain.id);
        const controls = devnet.controls(chain.id);
        const to = userKey(chain, index).address;
        const before = await gateway.head();

        const { txHash, blockNumber } = await controls.deposit({ toAddress: to, asset: asset === 'native' ? 'native' : asset, amount, destinationTag: tag });

        expect(blockNumber).toBe(before.number + 1);
        expect((await gateway.head()).number).toBe(blockNumber);
        const decoded = await decodeStored(chain, txHash);
        expect(decoded.hash).toBe(txHash);
        expect(decoded.from).toBe(controls.faucetAddress);
        expect(decoded.transfers.filter((transfer) => transfer.to === to)).toEqual([
          { index: 0, from: controls.faucetAddress, to, asset, amount, destinationTag: tag },
        ]);
        const block = (await gateway.block(blockNumber))!;
        expect(block.parentHash).toBe(before.hash);
        expect(block.hash).toMatch(chain.family === 'evm' ? /^0x[0-9a-f]{64}$/ : /^[0-9a-fA-F]{64}$/);
        expect(await gateway.transfersInBlock(blockNumber, new Set([to]))).toEqual([
          { txHash, blockNumber, blockHash: block.hash, index: 0, from: controls.faucetAddress, to, asset, amount, destinationTag: tag },
        ]);
        expect(await gateway.balance(to, asset)).toBe(amount);
        expect(await gateway.transactionStatus(txHash)).toMatchObject({ status: 'confirmed', blockNumber, blockHash: block.hash, confirmations: 1 });
        await controls.mine(2);
        expect(await gateway.transactionStatus(txHash)).toMatchObject({ status: 'confirmed', confirmations: 3 });
      });
    }

    it('a deposit with fromAddress is an external transfer from that address (no key, no fee)', async () => {
      const gateway = devnet.gateway(ETHEREUM.id);
      const from = userKey(ETHEREUM, 90).address;
      const to = userKey(ETHEREUM, 91).address;
      const { txHash, blockNumber } = await devnet.controls(ETHEREUM.id).deposit({ toAddress: to.toLowerCase(), asset: 'native', amount: 5n, fromAddress: from });
      expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);
      const [transfer] = await gateway.transfersInBlock(blockNumber, new Set([to]));
      expect(transfer).toMatchObject({ txHash, from, to, asset: 'native', amount: 5n, destinationTag: null });
      expect(await gateway.balance(to, 'native')).toBe(5n);
      expect(await gateway.balance(from, 'native')).toBe(0n);
    });

    it('concurrent deposits share blocks: each is mined, with its own transfer, and faucet nonces never collide', async () => {
      const gateway = devnet.gateway(ETHEREUM.id);
      const recipients = Array.from({ length: 30 }, (_, n) => userKey(ETHEREUM, 100 + n).address);
      const paid = await Promise.all(recipients.map((to, n) => devnet.controls(ETHEREUM.id).deposit({ toAddress: to, asset: 'native', amount: BigInt(n + 1) })));
      expect(new Set(paid.map(({ txHash }) => txHash)).size).toBe(30);
      expect(new Set(paid.map(({ blockNumber }) => blockNumber)).size).toBeLessThan(30); // coalesced: fewer blocks than deposits
      for (const [n, { txHash, blockNumber }] of paid.entries()) {
        const [transfer] = await gateway.transfersInBlock(blockNumber, new Set([recipients[n]!]));
        expect(transfer).toMatchObject({ txHash, to: recipients[n], amount: BigInt(n + 1) });
        expect(await gateway.balance(recipients[n]!, 'native')).toBe(BigInt(n + 1));
      }
    });
  });

  it('mining advances the head, each block on its parent', async () => {
    const gateway = devnet.gateway(ETHEREUM.id);
    const before = await gateway.head();
    now = new Date(now.getTime() + 12_000);
    const head = await devnet.controls(ETHEREUM.id).mine(3);
    expect(head.number).toBe(before.number + 3);
    expect(await gateway.head()).toEqual(head);
    const blocks = await Promise.all([1, 2, 3].map((offset) => gateway.block(before.number + offset)));
    expect(blocks.map((block) => block!.parentHash)).toEqual([before.hash, blocks[0]!.hash, blocks[1]!.hash]);
    expect(blocks[2]!.timestamp).toBe(now.toISOString());
    expect(await gateway.block(head.number + 1)).toBeNull();
  });

  it('a reorg of depth 2 removes a deposit’s transfer and gives the replaced blocks new hashes', async () => {
    const gateway = devnet.gateway(TRON.id);
    const controls = devnet.controls(TRON.id);
    const to = userKey(TRON, 7).address;
    const { txHash, blockNumber } = await controls.deposit({ toAddress: to, asset: 'native', amount: 3_000_000n });
    const head = await controls.mine(1);
    const replaced = await Promise.all([blockNumber, head.number].map((number) => gateway.block(number)));

    const after = await controls.reorg(2);

    expect(after.number).toBe(head.number);
    const replacements = await Promise.all([blockNumber, head.number].map((number) => gateway.block(number)));
    expect(replacements.map((block) => block!.number)).toEqual([blockNumber, head.number]);
    expect(replacements[0]!.hash).not.toBe(replaced[0]!.hash);
    expect(replacements[1]!.hash).not.toBe(replaced[1]!.hash);
    expect(replacements[0]!.parentHash).toBe(replaced[0]!.parentHash);
    expect(replacements[1]!.parentHash).toBe(replacements[0]!.hash);
    expect(await gateway.transfersInBlock(blockNumber)).toEqual([]);
    expect(await gateway.balance(to, 'native')).toBe(0n);
    expect(await gateway.transactionStatus(txHash)).toEqual({ status: 'not_found' });
    await expect(controls.reorg(101)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  describe('deposits in a batch (CONTRACT §8): each chain\'s in its next block, all or none', () => {
    it('mines every transfer in the next block of its chain, answering in the order given', async () => {
      const heads = { eth: (await devnet.gateway(ETHEREUM.id).head()).number, btc: (await devnet.gateway(BITCOIN.id).head()).number };
      const [first, second, third] = [userKey(ETHEREUM, 40).address, userKey(BITCOIN, 40).address, userKey(ETHEREUM, 41).address];
      const made = await devnet.depositAll([
        { chainId: ETHEREUM.id, deposit: { toAddress: first, asset: 'native', amount: 1_000n } },
        { chainId: BITCOIN.id, deposit: { toAddress: second, asset: 'native', amount: 50_000n } },
        { chainId: ETHEREUM.id, deposit: { toAddress: third, asset: USDT_ETHEREUM.toLowerCase(), amount: 3_000n } },
      ]);
      expect(made.map((deposit) => deposit.blockNumber)).toEqual([heads.eth + 1, heads.btc + 1, heads.eth + 1]);
      expect(new Set(made.map((deposit) => deposit.txHash)).size).toBe(3);
      expect(await devnet.gateway(ETHEREUM.id).balance(first, 'native')).toBe(1_000n);
      expect(await devnet.gateway(BITCOIN.id).balance(second, 'native')).toBe(50_000n);
      expect(await devnet.gateway(ETHEREUM.id).balance(third, USDT_ETHEREUM.toLowerCase())).toBe(3_000n);
      expect((await devnet.gateway(ETHEREUM.id).transfersInBlock(heads.eth + 1, new Set([first, third]))).map((transfer) => transfer.txHash).sort()).toEqual([made[0]!.txHash, made[2]!.txHash].sort());
    });

    it('one transfer the chain cannot carry: refused with its index, and nothing is mined on any chain', async () => {
      const heads = [(await devnet.gateway(ETHEREUM.id).head()).number, (await devnet.gateway(BITCOIN.id).head()).number];
      const to = userKey(ETHEREUM, 42).address;
      const refused = await devnet
        .depositAll([
          { chainId: ETHEREUM.id, deposit: { toAddress: to, asset: 'native', amount: 1_000n } },
          // 1 sat: below Bitcoin's dust limit
          { chainId: BITCOIN.id, deposit: { toAddress: userKey(BITCOIN, 42).address, asset: 'native', amount: 1n } },
        ])
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(DepositRefusedError);
      expect((refused as DepositRefusedError).index).toBe(1);
      expect([(await devnet.gateway(ETHEREUM.id).head()).number, (await devnet.gateway(BITCOIN.id).head()).number]).toEqual(heads);
      expect(await devnet.gateway(ETHEREUM.id).balance(to, 'native')).toBe(0n);
    });
  });

  describe('broadcasts', () => {
    const alice = userKey(ETHEREUM, 20);
    const bob = userKey(ETHEREUM, 21);
    const gateway = () => devnet.gateway(ETHEREUM.id);
    const FEE = 21_000n * 2n * GWEI;

    beforeAll(async () => {
      await devnet.controls(ETHEREUM.id).deposit({ toAddress: alice.address, asset: 'native', amount: 10n ** 17n });
    });

    it('mines a broadcast in the next block and charges the devnet fee; the same transaction again gives the same hash', async () => {
      const nonce = await gateway().nextNonce(alice.address);
      expect(nonce).toBe(0);
      const estimate = await gateway().estimateFee({ from: alice.address, to: bob.address, asset: 'native', amount: 1000n });
      expect(estimate).toEqual({ fee: FEE, parameters: { gasLimit: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' } });
      const raw = evmTransfer(alice.privateKey, { to: bob.address, amount: 1000n, nonce });
      const { txHash } = await gateway().broadcast(raw);
      expect(await gateway().broadcast(raw)).toEqual({ txHash });
      expect(await gateway().transactionStatus(txHash)).toEqual({ status: 'pending' });
      expect(await gateway().nextNonce(alice.address)).toBe(1);
      const block = await devnet.controls(ETHEREUM.id).mine();
      expect(await gateway().transactionStatus(txHash)).toEqual({ status: 'confirmed', blockNumber: block.number, blockHash: block.hash, confirmations: 1, fee: FEE });
      expect(await gateway().balance(bob.address, 'native')).toBe(1000n);
      expect(await gateway().balance(alice.address, 'native')).toBe(10n ** 17n - 1000n - FEE);
    });

    it('refuses a bad signature, a reused nonce, an unaffordable amount and an underpriced fee', async () => {
      const nonce = await gateway().nextNonce(alice.address);
      const good = evmTransfer(alice.privateKey, { to: bob.address, amount: 1n, nonce });
      // flip one byte of s: the signature recovers some other (empty) account, or none
      const tampered = good.slice(0, -2) + (good.slice(-2) === '00' ? '01' : '00');
      expect(await rejection(gateway().broadcast(tampered))).toMatch(/insufficient funds|signature|nonce/);
      expect(await rejection(gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 2n, nonce: nonce - 1 })))).toBe(
        `nonce ${nonce - 1} is not the account's next nonce (${nonce})`,
      );
      const balance = await gateway().balance(alice.address, 'native');
      expect(await rejection(gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: balance, nonce })))).toBe(
        `insufficient funds: ${alice.address} holds ${balance} of native, the transaction needs ${balance + FEE}`,
      );
      expect(await rejection(gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 1n, nonce, maxFeePerGas: GWEI })))).toMatch(/offers at most/);
      expect(await rejection(gateway().broadcast('0xdeadbeef'))).toMatch(/malformed EVM transaction/);
      expect(await gateway().nextNonce(alice.address)).toBe(nonce);
    });

    it('faults: broadcast_error rejects the next broadcasts; revert mines them as failed with the fee charged', async () => {
      const controls = devnet.controls(ETHEREUM.id);
      // CONTRACT §8: faults are for withdrawal transactions
      const withdrawal = { purpose: 'withdrawal' } as const;
      await controls.setFault('broadcast_error', 1);
      let nonce = await gateway().nextNonce(alice.address);
      expect(await rejection(gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 7n, nonce }), withdrawal))).toBe(
        'the node rejected the transaction (devnet fault: broadcast_error)',
      );
      // one fault, one failure: the same transaction goes through now
      const { txHash: accepted } = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 7n, nonce }), withdrawal);
      await controls.mine();
      expect(await gateway().transactionStatus(accepted)).toMatchObject({ status: 'confirmed' });

      await controls.setFault('revert', 2);
      const aliceBefore = await gateway().balance(alice.address, 'native');
      const bobBefore = await gateway().balance(bob.address, 'native');
      nonce = await gateway().nextNonce(alice.address);
      const first = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 11n, nonce }), withdrawal);
      const second = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 13n, nonce: nonce + 1 }), withdrawal);
      const third = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 17n, nonce: nonce + 2 }), withdrawal);
      const block = await controls.mine();
      const failed = { status: 'failed', blockNumber: block.number, error: 'execution reverted (devnet fault: revert)', fee: FEE, confirmations: 1 };
      expect(await gateway().transactionStatus(first.txHash)).toEqual(failed);
      expect(await gateway().transactionStatus(second.txHash)).toEqual(failed);
      expect(await gateway().transactionStatus(third.txHash)).toMatchObject({ status: 'confirmed', blockNumber: block.number });
      expect(await gateway().balance(bob.address, 'native')).toBe(bobBefore + 17n);
      expect(await gateway().balance(alice.address, 'native')).toBe(aliceBefore - 3n * FEE - 17n);
      expect(await gateway().nextNonce(alice.address)).toBe(nonce + 3);
    });

    it('a reorg drops mined transactions; a pending one that relied on them is dropped when the next block is mined', async () => {
      const controls = devnet.controls(ETHEREUM.id);
      const nonce = await gateway().nextNonce(alice.address);
      const mined = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 3n, nonce }));
      await controls.mine();
      const follower = await gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 4n, nonce: nonce + 1 }));
      await controls.reorg(1);
      expect(await gateway().transactionStatus(mined.txHash)).toEqual({ status: 'not_found' });
      expect(await gateway().transactionStatus(follower.txHash)).toEqual({ status: 'pending' });
      await controls.mine();
      expect(await gateway().transactionStatus(follower.txHash)).toEqual({ status: 'not_found' });
      expect(await gateway().nextNonce(alice.address)).toBe(nonce);
      const dropped = await devnetDb(db).selectFrom('devnet_transactions').select('error').where('hash', '=', follower.txHash).executeTakeFirstOrThrow();
      expect(dropped.error).toBe(`nonce ${nonce + 1} is not the account's next nonce (${nonce})`);
      // a re-broadcast of the dropped transaction puts it back in the mempool
      const raw = (await devnetDb(db).selectFrom('devnet_transactions').select('raw').where('hash', '=', mined.txHash).executeTakeFirstOrThrow()).raw!;
      expect(await gateway().broadcast(raw)).toEqual({ txHash: mined.txHash });
      await controls.mine();
      expect(await gateway().transactionStatus(mined.txHash)).toMatchObject({ status: 'confirmed', confirmations: 1 });
    });

    it('faults do not touch the devnet’s own deposits', async () => {
      const controls = devnet.controls(ETHEREUM.id);
      await controls.setFault('broadcast_error', 1);
      const { txHash } = await controls.deposit({ toAddress: bob.address, asset: 'native', amount: 1n });
      expect(await gateway().transactionStatus(txHash)).toMatchObject({ status: 'confirmed' });
      expect(
        await rejection(gateway().broadcast(evmTransfer(alice.privateKey, { to: bob.address, amount: 1n, nonce: await gateway().nextNonce(alice.address) }), { purpose: 'withdrawal' })),
      ).toMatch(/devnet fault: broadcast_error/);
    });
  });

  describe('Bitcoin', () => {
    const carol = userKey(BITCOIN, 30);
    const dave = userKey(BITCOIN, 31);

    it('lists unspent outputs, refuses a double spend and a bad signature, and spends by outputs', async () => {
      const gateway = devnet.gateway(BITCOIN.id);
      const { txHash, blockNumber } = await devnet.controls(BITCOIN.id).deposit({ toAddress: carol.address, asset: 'native', amount: 200_000n });
      const [output] = await gateway.unspentOutputs([carol.address]);
      expect(output).toEqual({ txHash, index: 0, address: carol.address, amount: 200_000n, confirmations: 1 });
      expect(blockNumber).toBe((await gateway.head()).number);

      const spend = (to: string, amount: bigint) =>
        signBitcoinTransfer({ network: 'mainnet', inputs: [{ txHash, index: 0, amount: 200_000n, privateKey: carol.privateKey }], outputs: [{ address: to, amount }] });
      const first = spend(dave.address, 190_000n);
      expect(await gateway.broadcast(first.raw)).toEqual({ txHash: first.txHash });
      const doubleSpend = spend(carol.address, 195_000n);
      expect(await rejection(gateway.broadcast(doubleSpend.raw))).toBe(`input ${txHash}:0 is already spent by ${first.txHash}`);

      // the signature commits to the amount of the output spent: signing for a different amount does not verify
      const wrongAmount = signBitcoinTransfer({
        network: 'mainnet',
        inputs: [{ txHash, index: 0, amount: 300_000n, privateKey: carol.privateKey }],
        outputs: [{ address: dave.address, amount: 250_000n }],
      });
      expect(await rejection(gateway.broadcast(wrongAmount.raw))).toBe('input 0: the signature does not verify');

      expect(await gateway.unspentOutputs([dave.address])).toEqual([{ txHash: first.txHash, index: 0, address: dave.address, amount: 190_000n, confirmations: 0 }]);
      expect(await gateway.balance(dave.address, 'native')).toBe(0n);
      await devnet.controls(BITCOIN.id).mine();
      expect(await gateway.balance(dave.address, 'native')).toBe(190_000n);
      expect(await gateway.balance(carol.address, 'native')).toBe(0n);
      expect(await gateway.transactionStatus(first.txHash)).toMatchObject({ status: 'confirmed', fee: 10_000n });
    });
  });

  describe('XRP', () => {
    const erin = userKey(XRP, 40);
    const frank = userKey(XRP, 41);

    it('RequireDest: a payment without a tag is mined as failed (tecDST_TAG_NEEDED), with one it lands', async () => {
      const gateway = devnet.gateway(XRP.id);
      const controls = devnet.controls(XRP.id);
      await controls.deposit({ toAddress: erin.address, asset: 'native', amount: 50_000_000n });
      expect(await gateway.requiresDestinationTag(frank.address)).toBe(false);
      await controls.requireDestinationTag(frank.address);
      expect(await gateway.requiresDestinationTag(frank.address)).toBe(true);
      const sequence = await gateway.nextNonce(erin.address);
      expect(sequence).toBe(1);
      const pay = (seq: number, destinationTag?: number) =>
        signXrpPayment(erin.privateKey, { account: erin.address, destination: frank.address, amountDrops: 1_000_000n, fee: 12n, sequence: seq, lastLedgerSequence: 1000, ...(destinationTag === undefined ? {} : { destinationTag }) });
      const untagged = await gateway.broadcast(pay(sequence));
      const tagged = await gateway.broadcast(pay(sequence + 1, 7));
      expect(await rejection(gateway.broadcast(pay(sequence + 1, 8)))).toBe(`sequence ${sequence + 1} is not the account's next sequence (${sequence + 2})`);
      const block = await controls.mine();
      expect(await gateway.transactionStatus(untagged.txHash)).toEqual({ status: 'failed', blockNumber: block.number, error: `tecDST_TAG_NEEDED: ${frank.address} requires a destination tag`, fee: 12n, confirmations: 1 });
      expect(await gateway.transactionStatus(tagged.txHash)).toMatchObject({ status: 'confirmed', fee: 12n });
      expect(await gateway.balance(frank.address, 'native')).toBe(1_000_000n);
      expect(await gateway.balance(erin.address, 'native')).toBe(50_000_000n - 1_000_000n - 24n);
      // a tampered blob no longer verifies
      const blob = pay(sequence + 2);
      const tampered = blob.replace(/F4240/, 'F4241');
      expect(await rejection(gateway.broadcast(tampered))).toMatch(/signature/);
    });
  });

  it('the block producer mines only when the head is a block time old', async () => {
    const chain = findChain('bip122:000000000933ea01ad0ee984209779ba')!;
    const controls = devnet.controls(chain.id);
    const head = await controls.mine();
    expect(await controls.mineIfDue(60_000)).toBeNull();
    now = new Date(now.getTime() + 60_000);
    expect(await controls.mineIfDue(60_000)).toMatchObject({ number: head.number + 1, parentHash: head.hash, timestamp: now.toISOString() });
    expect(await controls.mineIfDue(60_000)).toBeNull();
  });

  it('the block producer mines every due chain in one look, and looks again when the next one is due', async () => {
    const [first, second, later] = ['eip155:56', 'eip155:97', 'tron:shasta'].map((chainId) => devnet.controls(chainId));
    const chains = [first!, second!, later!];
    const producer = { chains, db: devnetDb(db), clock, blockTimeMs: 60_000, logger: createLogger('silent') };
    const heads = () => Promise.all(chains.map(async (controls) => (await devnet.gateway(controls.chain.id).head()).number));
    await first!.mine();
    await second!.mine();
    now = new Date(now.getTime() + 30_000);
    await later!.mine();
    now = new Date(now.getTime() + 30_000);
    const before = await heads();
    // the first two are a block time old, the third half of one: it is due in 30 s
    expect(await mineDueChains(producer)).toBe(30_000);
    expect(await heads()).toEqual([before[0]! + 1, before[1]! + 1, before[2]!]);
    expect(await mineDueChains(producer)).toBe(30_000);
    expect(await heads()).toEqual([before[0]! + 1, before[1]! + 1, before[2]!]);
    now = new Date(now.getTime() + 30_000);
    expect(await mineDueChains(producer)).toBe(30_000);
    expect(await heads()).toEqual([before[0]! + 1, before[1]! + 1, before[2]! + 1]);
  });

  it('the block producer mines a chain with a pending transaction and an empty one in one look, each block on its head, each head announced', async () => {
    const [busy, empty] = [ETHEREUM, TRON].map((chain) => devnet.controls(chain.id));
    const chains = [busy!, empty!];
    const producer = { chains, db: devnetDb(db), clock, blockTimeMs: 60_000, logger: createLogger('silent') };
    const sender = userKey(ETHEREUM, 9);
    await busy!.deposit({ toAddress: sender.address, asset: 'native', amount: 10n ** 17n });
    const { txHash } = await devnet.gateway(ETHEREUM.id).broadcast(evmTransfer(sender.privateKey, { to: userKey(ETHEREUM, 10).address, amount: 1000n, nonce: 0 }));
    await empty!.mine();
    const before = await Promise.all(chains.map((controls) => devnet.gateway(controls.chain.id).head()));
    const listener = await database.pool.connect();
    const announced: string[] = [];
    listener.on('notification', (message) => announced.push(String(message.payload)));
    await listener.query(`listen ${DEVNET_HEAD_CHANNEL}`);
    try {
      now = new Date(now.getTime() + 60_000);
      await mineDueChains(producer);
      const after = await Promise.all(chains.map((controls) => devnet.gateway(controls.chain.id).head()));
      expect(after.map((head) => head.number)).toEqual(before.map((head) => head.number + 1));
      expect(after.map((head) => head.parentHash)).toEqual(before.map((head) => head.hash));
      expect(after.map((head) => head.timestamp)).toEqual([now.toISOString(), now.toISOString()]);
      expect(await devnet.gateway(ETHEREUM.id).transactionStatus(txHash)).toMatchObject({ status: 'confirmed', blockNumber: after[0]!.number, blockHash: after[0]!.hash });
      expect(await devnet.gateway(TRON.id).block(after[1]!.number)).toEqual(after[1]);
      // announced at the commit: wait for both, in whichever order they come
      const deadline = Date.now() + 10_000;
      while (!(announced.includes(ETHEREUM.id) && announced.includes(TRON.id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect([...new Set(announced)].sort()).toEqual([ETHEREUM.id, TRON.id].sort());
    } finally {
      await listener.query(`unlisten ${DEVNET_HEAD_CHANNEL}`);
      listener.release();
    }
  });

  it('the block producer passes over a chain whose lock another transaction holds, without waiting, and mines it on a later look', async () => {
    const [free, held] = ['eip155:11155111', 'xrpl:testnet'].map((chainId) => devnet.controls(chainId));
    const chains = [free!, held!];
    const producer = { chains, db: devnetDb(db), clock, blockTimeMs: 60_000, logger: createLogger('silent') };
    const heads = () => Promise.all(chains.map(async (controls) => (await devnet.gateway(controls.chain.id).head()).number));
    await free!.mine();
    await held!.mine();
    now = new Date(now.getTime() + 60_000);
    const before = await heads();
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // a batch of deposits (or a broadcast) holding the chain's lock meanwhile
    const holder = withLockedChain(devnetDb(db), held!.chain, async () => {
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await isLocked;
    await mineDueChains(producer);
    expect(await heads()).toEqual([before[0]! + 1, before[1]!]);
    release();
    await holder;
    await mineDueChains(producer);
    expect(await heads()).toEqual([before[0]! + 1, before[1]! + 1]);
  });

  it('never mines two blocks at one height: 20 concurrent mine calls give 20 consecutive blocks', async () => {
    const chain = findChain('eip155:137')!;
    const start = (await devnet.gateway(chain.id).head()).number;
    const heads = await Promise.all(Array.from({ length: 20 }, () => devnet.controls(chain.id).mine()));
    expect(heads.map((head) => head.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, offset) => start + 1 + offset));
    const rows = await devnetDb(db).selectFrom('devnet_blocks').select('number').where('chain_id', '=', chain.id).orderBy('number').execute();
    expect(rows.map((row) => row.number)).toEqual(Array.from({ length: start + 21 }, (_, number) => number));
  });

  it('keeps its state across a restart over the same database', async () => {
    const gateway = devnet.gateway(ETHEREUM.id);
    const head = await gateway.head();
    const user = userKey(ETHEREUM, 2);
    const balance = await gateway.balance(user.address, USDT_ETHEREUM);
    expect(balance).toBe(25_000_000n);

    const pool = createPool(database.config, { max: 2, purpose: 'test-reopen' });
    const reopened = open(createDatabase(pool));
    try {
      expect(await reopened.gateway(ETHEREUM.id).head()).toEqual(head);
      expect(await reopened.gateway(ETHEREUM.id).balance(user.address, USDT_ETHEREUM)).toBe(25_000_000n);
      const next = await reopened.controls(ETHEREUM.id).mine();
      expect(next.parentHash).toBe(head.hash);
    } finally {
      await pool.end();
    }
  });
});
