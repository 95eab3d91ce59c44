import { describe, expect, it } from 'vitest';
import { decode } from 'xrpl';
import { checkXrpReserve } from '../../../src/application/withdrawal-checks.js';
import { CannotPayError, signXrpWithdrawal, type FamilyServices } from '../../../src/processes/withdrawal-processor/transactions.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createSigner } from '../../../src/chains/signer/signer.js';
import { nativeToken } from '../../../src/catalog/tokens.js';
import { createXrpGateway } from '../../../src/chains/xrp/gateway.js';
import { streams } from '../../../src/domain/streams.js';
import type { WithdrawalRecord } from '../../../src/domain/withdrawal/withdrawal.js';
import type { EventStore, RecordedEvent } from '../../../src/eventstore/port.js';
import { silentLogger } from '../../../src/log.js';
import { loadFixture, replayXrpl, type XrplExchange } from '../../support/node-replay.js';

/**
 * The account reserve in the XRP balance checks, over recorded rippled responses: the organization's
 * address (BIP44 'abandon … about' receive 0 in the fixture) holds 125 XRP with OwnerCount 2, and
 * server_state's validated ledger states the reserves (1 XRP base + 0.2 XRP per owned object), so
 * 123.6 XRP can leave it, fee included. The fee is the open ledger's 12 drops.
 */
const xrp = findChain('xrpl:mainnet')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const ORGANIZATION_ADDRESS = 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3';
const RECIPIENT = 'rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn';
const REQUIRES_TAG = ORGANIZATION_ADDRESS; // its account flags carry lsfRequireDestTag
const FEE = 12n;
const SPENDABLE = 125_000_000n - 1_000_000n - 2n * 200_000n;
const ORG_ID = 'org-1';

const fixture = loadFixture<XrplExchange>('xrp', 'rippled');
/** server_state of a ledger with other reserves (the pre-2021 10 XRP + 2 XRP per object) */
const oldReserves: XrplExchange = {
  request: { command: 'server_state' },
  response: { result: { state: { server_state: 'full', validated_ledger: { age: 2, base_fee: 10, close_time: 772617620, hash: 'D3DF3FB30984831B955279E1DC9703CE363B2E3394B60D6D07889521220E546E', reserve_base: 10_000_000, reserve_inc: 2_000_000, seq: 90000005 } } } },
};
const gatewayOver = (extra: XrplExchange[] = []) => createXrpGateway({ chain: xrp, request: replayXrpl([...extra, ...fixture.exchanges]).request, logger: silentLogger });

/** The one stream signXrpWithdrawal reads: the organization's derivation index in the XRP key space (0). */
const storeWithOrganizationIndex = (): EventStore => {
  const assigned: RecordedEvent = {
    id: 'e1',
    stream: streams.derivationOwner(xrp.keySpace, ORG_ID, '(organization)'),
    revision: 0n,
    position: 1n,
    type: 'DerivationIndexAssigned',
    data: { space: xrp.keySpace, index: 0, orgId: ORG_ID, owner: '(organization)', assignedAt: '2026-01-01T00:00:00.000Z' },
    metadata: { actor: 'test' } as RecordedEvent['metadata'],
    recordedAt: new Date('2026-01-01T00:00:00.000Z'),
  };
  return { readStream: async (stream: string) => (stream === assigned.stream ? [assigned] : []) } as unknown as EventStore;
};

const withdrawalOf = (amount: bigint, recipient = RECIPIENT, memo: string | null = null): WithdrawalRecord =>
  ({ id: 'w-1', orgId: ORG_ID, chainId: xrp.id, tokenId: nativeToken(xrp.id).id, amount: amount.toString(), recipient, memo, status: 'Pending' }) as WithdrawalRecord;

const servicesOver = (extra: XrplExchange[] = []) => ({ chain: xrp, gateway: gatewayOver(extra), signer, store: storeWithOrganizationIndex() }) as unknown as FamilyServices;

describe('XRP withdrawals and the account reserve (recorded rippled responses)', () => {
  it('the fixture address is the organization\'s (receive 0), so the processor signs from it', () => {
    expect(signer.addressOf(xrp, { branch: 'receive', index: 0 })).toBe(ORGANIZATION_ADDRESS);
  });

  it('signs a payment that leaves exactly the reserve: amount + fee = balance − reserve', async () => {
    const signed = await signXrpWithdrawal(servicesOver(), withdrawalOf(SPENDABLE - FEE));
    const fields = decode(signed.raw);
    expect(fields).toMatchObject({ TransactionType: 'Payment', Account: ORGANIZATION_ADDRESS, Destination: RECIPIENT, Amount: (SPENDABLE - FEE).toString(), Fee: '12', Sequence: 93, LastLedgerSequence: 90000005 + 1000 });
    expect(signed).toMatchObject({ nonce: 93, fee: FEE });
  });

  it('one drop into the reserve is not signed: a final CannotPayError (the withdrawal fails, its hold released)', async () => {
    const refused = await signXrpWithdrawal(servicesOver(), withdrawalOf(SPENDABLE - FEE + 1n)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CannotPayError);
    expect(refused).toMatchObject({ final: true, message: expect.stringContaining(`can spend ${SPENDABLE} drops above its account reserve`) });
  });

  it('the reserve is the ledger\'s, not a constant: with 10 XRP + 2 XRP per object, 111 XRP is all that can leave', async () => {
    const spendable = 125_000_000n - 10_000_000n - 2n * 2_000_000n;
    await expect(signXrpWithdrawal(servicesOver([oldReserves]), withdrawalOf(spendable - FEE + 1n))).rejects.toBeInstanceOf(CannotPayError);
    expect(decode((await signXrpWithdrawal(servicesOver([oldReserves]), withdrawalOf(spendable - FEE))).raw).Amount).toBe((spendable - FEE).toString());
  });

  it('a recipient that requires a tag and gets none fails before the balance is asked', async () => {
    await expect(signXrpWithdrawal(servicesOver(), withdrawalOf(1_000_000n, REQUIRES_TAG))).rejects.toMatchObject({ final: true, message: expect.stringContaining('requires a destination tag') });
  });

  describe('at creation (checkXrpReserve)', () => {
    it('INSUFFICIENT_BALANCE naming what the account can spend above its reserve', async () => {
      await expect(checkXrpReserve(xrp, gatewayOver(), ORGANIZATION_ADDRESS, RECIPIENT, SPENDABLE - FEE)).resolves.toBeUndefined();
      await expect(checkXrpReserve(xrp, gatewayOver(), ORGANIZATION_ADDRESS, RECIPIENT, SPENDABLE - FEE + 1n)).rejects.toMatchObject({
        code: 'INSUFFICIENT_BALANCE',
        details: { chainId: xrp.id, tokenId: nativeToken(xrp.id).id, spendableAboveReserve: SPENDABLE.toString(), required: (SPENDABLE + 1n).toString(), estimatedFee: '12' },
      });
    });

    it('an account not on the ledger yet can send nothing (all of it would be reserve)', async () => {
      await expect(checkXrpReserve(xrp, gatewayOver(), 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', RECIPIENT, 1n)).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE', details: { spendableAboveReserve: '0' } });
    });

    it('asks nothing on other chains, or before the organization has an XRP address', async () => {
      const unused = createXrpGateway({ chain: xrp, request: async () => Promise.reject(new Error('not asked')), logger: silentLogger });
      await expect(checkXrpReserve(findChain('eip155:1')!, unused, ORGANIZATION_ADDRESS, RECIPIENT, 1n)).resolves.toBeUndefined();
      await expect(checkXrpReserve(xrp, unused, null, RECIPIENT, 1n)).resolves.toBeUndefined();
    });
  });
});
