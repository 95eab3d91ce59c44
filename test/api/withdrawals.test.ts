import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xAddressToClassicAddress, classicAddressToXAddress } from 'xrpl';
import { setTokenEnabled } from '../../src/application/chain-switches.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { supportedChainIds } from '../../src/catalog/registry.js';
import { ORGANIZATIONS_PROJECTION } from '../../src/projections/organizations.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { settleDeposits, webhooksOf } from '../support/deposits.js';
import { fundGasWallet, fundLedger, ledgerBalances, settleWithdrawals, stopWithdrawalProcessors } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const ETH_TOKEN = { id: ETH, name: 'Ether', symbol: 'ETH', decimals: 18, address: '' };
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const BTC_CHAIN = 'bip122:000000000019d6689c085ae165831e93';
const BTC = `${BTC_CHAIN}/slip44:0`;
const XRP_TESTNET = 'xrpl:testnet';
const XRP_ACCOUNT = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe';
const FUNDED = 10n ** 18n; // 1 ETH
const AMOUNT = '5000000000000000'; // 0.005 ETH

type User = { id: string; username: string; password: string; totpSecret: string };
const errorBody = (error: string, statusCode: number, details?: Record<string, unknown>) => ({
  error,
  message: expect.any(String),
  statusCode,
  ...(details ? { details } : {}),
});

describe('withdrawals over HTTP', () => {
  let service: TestService;
  let acme: { orgId: string; apiKey: string; alice: User; bob: User; carol: User };
  let solo: { orgId: string; apiKey: string; dave: User };
  let globex: { orgId: string; apiKey: string };
  let reference = 0;

  const create = (apiKey: string, overrides: Record<string, unknown> = {}) =>
    service.request('POST', '/withdrawals', { apiKey, body: { chainId: 'eip155:1', tokenId: ETH, amount: AMOUNT, recipient: RECIPIENT, reference: `ref-${++reference}`, ...overrides } });
  /** a person's access token; the clock moves a step first, so the login's code is one not used yet */
  const tokenOf = async (user: User) => {
    service.advance(30_000);
    return (await service.login(user)).body!.accessToken as string;
  };
  /** a fresh TOTP code: the clock moves to the next 30 s step first */
  const freshCode = (user: User) => {
    service.advance(30_000);
    return service.totp(user.totpSecret);
  };
  const approve = async (id: string, user: User, token?: string) =>
    service.request('POST', `/withdrawals/${id}/approve`, { token: token ?? (await tokenOf(user)), body: { totpCode: freshCode(user) } });

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    await stopWithdrawalProcessors(service);
    const a = await service.bootstrap('Acme', ['alice', 'bob', 'carol'], { minWithdrawalSigners: 2 });
    const s = await service.bootstrap('Solo', ['dave']);
    const g = await service.bootstrap('Globex', ['erin']);
    const [alice, bob, carol] = a.users as unknown as [User, User, User];
    acme = { orgId: a.organization.id, apiKey: a.apiKey, alice, bob, carol };
    solo = { orgId: s.organization.id, apiKey: s.apiKey, dave: s.users[0] as User };
    globex = { orgId: g.organization.id, apiKey: g.apiKey };
    for (const org of [acme, solo, globex]) {
      await fundLedger(service, org.orgId, 'eip155:1', FUNDED);
      await fundGasWallet(service, org.apiKey, org.orgId, 'eip155:1', 10n ** 16n);
    }
    await settleDeposits(service);
  });
  afterAll(async () => service.stop());

  describe('POST /withdrawals', () => {
    it('creates a PendingApproval withdrawal when two signers are needed, and holds its funds', async () => {
      const before = service.now().toISOString();
      const response = await create(acme.apiKey, { reference: 'payout-1', internalNote: 'november payout', externalUserId: 'user-7' });
      expect(response.status).toBe(201);
      const id = (response.body!.withdrawal as { id: string }).id;
      expect(response.body).toEqual({
        withdrawal: {
          id,
          orgId: acme.orgId,
          chainId: 'eip155:1',
          tokenId: ETH,
          amount: AMOUNT,
          recipient: RECIPIENT,
          memo: null,
          reference: 'payout-1',
          internalNote: 'november payout',
          status: 'PendingApproval',
          txnHash: null,
          txnError: null,
          initiator: acme.alice.id,
          approvers: [acme.alice.id],
          fee: null,
          createdAt: before,
          updatedAt: before,
        },
      });
      expect(await ledgerBalances(service, acme.orgId, ETH)).toEqual({ available: FUNDED - 5_000_000_000_000_000n, pending: 0n, held: 5_000_000_000_000_000n });

      const read = await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey });
      expect(read).toMatchObject({ status: 200, body: { ...(response.body!.withdrawal as object), externalUserId: 'user-7', Token: ETH_TOKEN } });
      expect(Object.keys(read.body!).sort()).toEqual([...Object.keys(response.body!.withdrawal as object), 'externalUserId', 'Token'].sort());
      // and it was the last free part of the balance for nobody else: the hold is released on cancel
      const cancelled = await service.request('DELETE', `/withdrawals/${id}`, { apiKey: acme.apiKey });
      expect(cancelled.status).toBe(200);
      expect(await ledgerBalances(service, acme.orgId, ETH)).toEqual({ available: FUNDED, pending: 0n, held: 0n });
    });

    it('creates a Pending withdrawal with one signer; the single read says externalUserId null', async () => {
      const response = await create(solo.apiKey);
      expect(response).toMatchObject({ status: 201, body: { withdrawal: { status: 'Pending', approvers: [solo.dave.id], initiator: solo.dave.id, txnHash: null, txnError: null } } });
      const read = await service.request('GET', `/withdrawals/${(response.body!.withdrawal as { id: string }).id}`, { apiKey: solo.apiKey });
      expect(read.body).toMatchObject({ status: 'Pending', externalUserId: null, Token: ETH_TOKEN });
    });

    it('refuses malformed bodies with 400 BAD_REQUEST and details.issues', async () => {
      const unknownField = await create(acme.apiKey, { extra: 1 });
      expect(unknownField).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', statusCode: 400, details: { issues: expect.any(Array) } } });
      const missing = await service.request('POST', '/withdrawals', { apiKey: acme.apiKey, body: { chainId: 'eip155:1', tokenId: ETH, amount: AMOUNT, recipient: RECIPIENT } });
      expect(missing).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', details: { issues: [expect.objectContaining({ path: 'reference' })] } } });
      const wrongType = await create(acme.apiKey, { amount: 5 });
      expect(wrongType).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    });

    it('refuses each creation error with its status, body and details', async () => {
      const balancesBefore = await ledgerBalances(service, acme.orgId, ETH);
      expect(await create(acme.apiKey, { externalUserId: '' })).toEqual(expect.objectContaining({ status: 400, body: errorBody('INVALID_USER_ID', 400) }));
      expect(await create(acme.apiKey, { chainId: 'eip155:999' })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('INVALID_CHAIN', 422, { providedChainId: 'eip155:999', supportedChains: supportedChainIds() }) }),
      );
      expect(await create(acme.apiKey, { tokenId: 'eip155:1/erc20:0x0000000000000000000000000000000000000001' })).toMatchObject({ status: 422, body: { error: 'INVALID_TOKEN' } });
      expect(await create(acme.apiKey, { tokenId: 'eip155:137/slip44:60' })).toMatchObject({ status: 422, body: { error: 'INVALID_TOKEN_CHAIN' } });
      for (const amount of ['0', '-1', '1.5', '1e18', '+5']) {
        expect(await create(acme.apiKey, { amount })).toEqual(expect.objectContaining({ status: 400, body: errorBody('INVALID_AMOUNT', 400, { amount }) }));
      }
      expect(await create(acme.apiKey, { recipient: '0x1234' })).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('INVALID_RECIPIENT_ADDRESS', 400, { chainId: 'eip155:1', recipient: '0x1234' }) }),
      );
      expect(await create(acme.apiKey, { recipient: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' })).toMatchObject({ status: 400, body: { error: 'INVALID_RECIPIENT_ADDRESS' } });
      expect(await create(acme.apiKey, { amount: '999999999999999' })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('WITHDRAWAL_BELOW_MINIMUM', 422, { tokenId: ETH, amount: '999999999999999', minimumWithdrawal: '1000000000000000' }) }),
      );
      expect(await create(acme.apiKey, { amount: '1000000000000000000001' })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('WITHDRAWAL_ABOVE_MAXIMUM', 422, { tokenId: ETH, amount: '1000000000000000000001', maximumWithdrawal: '1000000000000000000000' }) }),
      );
      expect(await create(acme.apiKey, { amount: '2000000000000000000' })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('INSUFFICIENT_BALANCE', 422, { tokenId: ETH, available: FUNDED.toString(), required: '2000000000000000000' }) }),
      );
      // Polygon: no gas in the organization's gas wallet there
      expect(await create(acme.apiKey, { chainId: 'eip155:137', tokenId: 'eip155:137/slip44:60', amount: '100000000000000000' })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('INSUFFICIENT_GAS', 422, { chainId: 'eip155:137', gasWalletBalance: '0', estimatedGasNeeded: '42000000000000', nativeToken: 'POL' }) }),
      );
      // nothing of this held any funds
      expect(await ledgerBalances(service, acme.orgId, ETH)).toEqual(balancesBefore);
    });

    it('refuses a switched-off token with TOKEN_NOT_ENABLED', async () => {
      const { position } = await setTokenEnabled(service.services, globex.orgId, ETH, false, { actor: 'test' });
      await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, position!);
      expect(await create(globex.apiKey)).toEqual(expect.objectContaining({ status: 422, body: errorBody('TOKEN_NOT_ENABLED', 422, { tokenId: ETH }) }));
      const enabled = await setTokenEnabled(service.services, globex.orgId, ETH, true, { actor: 'test' });
      await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, enabled.position!);
    });

    it('refuses a reused reference with 409 DUPLICATE_REFERENCE naming the withdrawal that has it', async () => {
      const first = await create(solo.apiKey, { reference: 'once' });
      const id = (first.body!.withdrawal as { id: string }).id;
      const balances = await ledgerBalances(service, solo.orgId, ETH);
      expect(await create(solo.apiKey, { reference: 'once', amount: '1000000000000000' })).toEqual(
        expect.objectContaining({ status: 409, body: errorBody('DUPLICATE_REFERENCE', 409, { withdrawalId: id, reference: 'once' }) }),
      );
      expect(await ledgerBalances(service, solo.orgId, ETH)).toEqual(balances);
      // references are the organization's: another may use the same one
      expect((await create(globex.apiKey, { reference: 'once' })).status).toBe(201);
    });

    it('XRP: memo is the destination tag; an account that requires one refuses a withdrawal without it', async () => {
      const xrp = { chainId: XRP_TESTNET, tokenId: `${XRP_TESTNET}/slip44:144`, amount: '2000000', recipient: XRP_ACCOUNT };
      expect(await create(acme.apiKey, { ...xrp, memo: 'abc' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', details: { issues: [expect.objectContaining({ path: 'memo' })] } } });
      expect(await create(acme.apiKey, { ...xrp, memo: '4294967296' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      // not required yet: the next check (the balance) answers
      expect(await create(acme.apiKey, xrp)).toMatchObject({ status: 422, body: { error: 'INSUFFICIENT_BALANCE' } });
      expect((await service.request('POST', '/devnet/require-tag', { apiKey: acme.apiKey, body: { chainId: XRP_TESTNET, address: XRP_ACCOUNT } })).status).toBe(200);
      expect(await create(acme.apiKey, xrp)).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('MISSING_DESTINATION_TAG', 400, { chainId: XRP_TESTNET, toAddress: XRP_ACCOUNT }) }),
      );
      expect(await create(acme.apiKey, { ...xrp, memo: '4294967295' })).toMatchObject({ status: 422, body: { error: 'INSUFFICIENT_BALANCE' } });
      const xAddress = classicAddressToXAddress(XRP_ACCOUNT, 42, true);
      expect(xAddressToClassicAddress(xAddress).tag).toBe(42);
      expect(await create(acme.apiKey, { ...xrp, recipient: xAddress })).toMatchObject({ status: 422, body: { error: 'INSUFFICIENT_BALANCE' } });
      expect(await create(acme.apiKey, { ...xrp, recipient: xAddress, memo: '43' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      // funded, it is created with the tag as its memo
      await fundLedger(service, acme.orgId, XRP_TESTNET, 10_000_000n);
      expect(await create(acme.apiKey, { ...xrp, memo: '7' })).toMatchObject({ status: 201, body: { withdrawal: { memo: '7', status: 'PendingApproval' } } });
    });

    it('Bitcoin: funds still unconfirmed give INSUFFICIENT_CONFIRMED_BALANCE', async () => {
      await fundLedger(service, solo.orgId, BTC_CHAIN, 100_000n);
      await fundLedger(service, solo.orgId, BTC_CHAIN, 900_000n, { confirmed: false });
      const btc = { chainId: BTC_CHAIN, tokenId: BTC, recipient: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' };
      expect(await create(solo.apiKey, { ...btc, amount: '500000' })).toEqual(
        expect.objectContaining({
          status: 422,
          body: errorBody('INSUFFICIENT_CONFIRMED_BALANCE', 422, { chainId: BTC_CHAIN, totalBalance: '1000000', confirmedBalance: '100000', unconfirmedBalance: '900000' }),
        }),
      );
      expect(await create(solo.apiKey, { ...btc, amount: '1000001' })).toMatchObject({ status: 422, body: { error: 'INSUFFICIENT_BALANCE' } });
      expect(await create(solo.apiKey, { ...btc, amount: '100000' })).toMatchObject({ status: 201, body: { withdrawal: { status: 'Pending' } } });
    });
  });

  describe('approval and cancellation', () => {
    const newWithdrawal = async () => ((await create(acme.apiKey)).body!.withdrawal as { id: string }).id;

    it('a second user with a fresh TOTP code makes it Pending; the same user again is 409', async () => {
      const id = await newWithdrawal();
      const bobToken = await tokenOf(acme.bob);
      const approved = await approve(id, acme.bob, bobToken);
      expect(approved).toMatchObject({ status: 200, body: { withdrawal: { id, status: 'Pending', approvers: [acme.alice.id, acme.bob.id] } } });
      expect((await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey })).body).toMatchObject({ status: 'Pending', approvers: [acme.alice.id, acme.bob.id] });
      // the initiator approving her own PendingApproval withdrawal: already counted
      const other = await newWithdrawal();
      expect(await approve(other, acme.alice)).toEqual(expect.objectContaining({ status: 409, body: errorBody('DUPLICATE_APPROVAL', 409, { withdrawalId: other, userId: acme.alice.id }) }));
      // once approved, further approvals are refused as processed
      expect(await approve(id, acme.carol)).toMatchObject({ status: 409, body: { error: 'WITHDRAWAL_ALREADY_PROCESSED' } });
    });

    it('needs a person: an API key is 403 FORBIDDEN; a wrong or reused code is 401 INVALID_TOTP', async () => {
      const id = await newWithdrawal();
      const viaKey = await service.request('POST', `/withdrawals/${id}/approve`, { apiKey: acme.apiKey, body: { totpCode: '123456' } });
      expect(viaKey).toEqual(expect.objectContaining({ status: 403, body: errorBody('FORBIDDEN', 403) }));
      const token = await tokenOf(acme.bob);
      expect(await service.request('POST', `/withdrawals/${id}/approve`, { token, body: { totpCode: String((Number(service.totp(acme.bob.totpSecret)) + 1) % 1_000_000).padStart(6, '0') } })).toEqual(
        expect.objectContaining({ status: 401, body: errorBody('INVALID_TOTP', 401) }),
      );
      expect(await service.request('POST', `/withdrawals/${id}/approve`, { token, body: {} })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      const code = freshCode(acme.bob);
      const other = await newWithdrawal();
      expect((await service.request('POST', `/withdrawals/${other}/approve`, { token, body: { totpCode: code } })).status).toBe(200);
      expect(await service.request('POST', `/withdrawals/${id}/approve`, { token, body: { totpCode: code } })).toEqual(
        expect.objectContaining({ status: 401, body: errorBody('INVALID_TOTP', 401) }),
      );
      expect((await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey })).body).toMatchObject({ status: 'PendingApproval', approvers: [acme.alice.id] });
    });

    it('cancels PendingApproval and Pending withdrawals, naming the user and releasing the hold', async () => {
      const before = await ledgerBalances(service, acme.orgId, ETH);
      const waiting = await newWithdrawal();
      const pending = await newWithdrawal();
      expect((await approve(pending, acme.bob)).status).toBe(200);
      const bobToken = await tokenOf(acme.bob);
      service.advance(1_000);
      const at = service.now().toISOString();
      expect(await service.request('DELETE', `/withdrawals/${waiting}`, { apiKey: acme.apiKey })).toEqual(
        expect.objectContaining({ status: 200, body: { withdrawal: { id: waiting, status: 'Cancelled', txnError: 'Cancelled by alice', updatedAt: at } } }),
      );
      expect(await service.request('DELETE', `/withdrawals/${pending}`, { token: bobToken })).toEqual(
        expect.objectContaining({ status: 200, body: { withdrawal: { id: pending, status: 'Cancelled', txnError: 'Cancelled by bob', updatedAt: at } } }),
      );
      expect(await ledgerBalances(service, acme.orgId, ETH)).toEqual(before);
      expect(await service.request('DELETE', `/withdrawals/${pending}`, { apiKey: acme.apiKey })).toEqual(
        expect.objectContaining({ status: 409, body: errorBody('WITHDRAWAL_NOT_PENDING', 409, { withdrawalId: pending, status: 'Cancelled' }) }),
      );
      expect(await approve(waiting, acme.carol)).toEqual(
        expect.objectContaining({ status: 409, body: errorBody('WITHDRAWAL_ALREADY_PROCESSED', 409, { withdrawalId: waiting, status: 'Cancelled' }) }),
      );
      expect((await service.request('GET', `/withdrawals/${waiting}`, { apiKey: acme.apiKey })).body).toMatchObject({ status: 'Cancelled', txnError: 'Cancelled by alice' });
    });

    it('an unknown id, or another organization’s, is 404 WITHDRAWAL_NOT_FOUND everywhere', async () => {
      const theirs = await newWithdrawal();
      const token = await tokenOf(acme.bob);
      for (const id of ['no-such-withdrawal', theirs]) {
        const notFound = expect.objectContaining({ status: 404, body: errorBody('WITHDRAWAL_NOT_FOUND', 404, { withdrawalId: id }) });
        expect(await service.request('GET', `/withdrawals/${id}`, { apiKey: globex.apiKey })).toEqual(notFound);
        expect(await service.request('DELETE', `/withdrawals/${id}`, { apiKey: globex.apiKey })).toEqual(notFound);
        if (id !== theirs) expect(await service.request('POST', `/withdrawals/${id}/approve`, { token, body: { totpCode: freshCode(acme.bob) } })).toEqual(notFound);
      }
      const globexUser = await service.request('GET', `/withdrawals/${theirs}`, { apiKey: acme.apiKey });
      expect(globexUser.status).toBe(200);
    });

    it('needs credentials', async () => {
      expect(await service.request('GET', '/withdrawals')).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      expect(await service.request('POST', '/withdrawals/x/approve', { body: { totpCode: '1' } })).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    });
  });

  describe('GET /withdrawals and webhooks', () => {
    it('lists the organization’s withdrawals newest first, by status, in pages', async () => {
      await settleWithdrawals(service);
      const all = await service.request('GET', '/withdrawals?limit=1000', { apiKey: acme.apiKey });
      expect(all.status).toBe(200);
      const withdrawals = all.body!.withdrawals as { id: string; orgId: string; status: string; createdAt: string }[];
      expect(all.body!.nextCursor).toBeNull();
      expect(withdrawals.length).toBeGreaterThan(5);
      expect(withdrawals.every((withdrawal) => withdrawal.orgId === acme.orgId)).toBe(true);
      // each answer equals what the stream says now
      for (const withdrawal of withdrawals.slice(0, 3)) {
        const { externalUserId: _e, Token: _t, ...single } = (await service.request('GET', `/withdrawals/${withdrawal.id}`, { apiKey: acme.apiKey })).body!;
        expect(withdrawal).toEqual(single);
      }
      const cancelled = await service.request('GET', '/withdrawals?status=Cancelled', { apiKey: acme.apiKey });
      expect((cancelled.body!.withdrawals as { status: string }[]).map((w) => w.status)).toEqual(withdrawals.filter((w) => w.status === 'Cancelled').map(() => 'Cancelled'));
      expect((cancelled.body!.withdrawals as { id: string }[]).map((w) => w.id)).toEqual(withdrawals.filter((w) => w.status === 'Cancelled').map((w) => w.id));

      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await service.request('GET', `/withdrawals?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { apiKey: acme.apiKey });
        paged.push(...(page.body!.withdrawals as { id: string }[]).map((w) => w.id));
        cursor = page.body!.nextCursor as string | null;
      } while (cursor !== null);
      expect(paged).toEqual(withdrawals.map((w) => w.id));
      expect(await service.request('GET', '/withdrawals?status=Done', { apiKey: acme.apiKey })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    });

    it('sends withdrawal.created, .approved and .cancelled with the single read of that moment, and balance.updated', async () => {
      const created = await create(acme.apiKey, { externalUserId: 'hook-user' });
      const id = (created.body!.withdrawal as { id: string }).id;
      const createdRead = (await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey })).body;
      expect((await approve(id, acme.carol)).status).toBe(200);
      const approvedRead = (await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey })).body;
      expect((await service.request('DELETE', `/withdrawals/${id}`, { apiKey: acme.apiKey })).status).toBe(200);
      const cancelledRead = (await service.request('GET', `/withdrawals/${id}`, { apiKey: acme.apiKey })).body;
      await settleWithdrawals(service);
      await settleDeposits(service);
      const payloadsOf = async (type: string) => (await webhooksOf(service, acme.orgId, type)).map((hook) => hook.payload).filter((payload) => payload.id === id);
      expect(await payloadsOf('withdrawal.created')).toEqual([createdRead]);
      expect(await payloadsOf('withdrawal.approved')).toEqual([approvedRead]);
      expect(await payloadsOf('withdrawal.cancelled')).toEqual([cancelledRead]);
      const balanceHooks = (await webhooksOf(service, acme.orgId, 'balance.updated')).map((hook) => hook.payload).filter((payload) => payload.reason === 'withdrawal');
      expect(balanceHooks.length).toBeGreaterThan(2);
      expect(balanceHooks[0]).toEqual({ chainId: 'eip155:1', tokenId: ETH, available: expect.any(String), pending: '0', reason: 'withdrawal', Token: ETH_TOKEN });
    });

    it('100 concurrent POSTs over the balance: 201 for exactly the affordable ones, 422 for the rest, never a 5xx', async () => {
      const crowd = await service.bootstrap('Crowd', ['frank']);
      const orgId = crowd.organization.id;
      await fundLedger(service, orgId, 'eip155:1', 25n * 5_000_000_000_000_000n);
      await fundGasWallet(service, crowd.apiKey, orgId, 'eip155:1', 10n ** 16n);
      const responses = await Promise.all(Array.from({ length: 100 }, () => create(crowd.apiKey)));
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(25);
      expect(responses.filter((response) => response.status !== 201).map((response) => response.body!.error)).toEqual(Array.from({ length: 75 }, () => 'INSUFFICIENT_BALANCE'));
      expect(await ledgerBalances(service, orgId, ETH)).toEqual({ available: 0n, pending: 0n, held: 25n * 5_000_000_000_000_000n });
    });

    it('documents every withdrawal route in /openapi.json', async () => {
      const document = (await service.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
      expect(Object.keys(document.paths['/withdrawals']!).sort()).toEqual(['get', 'post']);
      expect(Object.keys(document.paths['/withdrawals/{id}']!).sort()).toEqual(['delete', 'get']);
      expect(Object.keys(document.paths['/withdrawals/{id}/approve']!)).toEqual(['post']);
      expect(Object.keys(document.paths['/withdrawals']!.post!.responses).sort()).toEqual(['201', '400', '401', '409', '413', '422', '429', '500', '503']);
      expect(Object.keys(document.paths['/withdrawals/{id}/approve']!.post!.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '409']));
    });
  });
});
