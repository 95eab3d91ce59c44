import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, stopWithdrawalProcessors } from '../support/withdrawals.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { loadAggregate } from '../../src/application/command-handler.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import { WITHDRAWALS_PROJECTION } from '../../src/projections/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

/**
 * CONTRACT §3: an API key lives on a server and is the credential that leaks. With it alone an
 * attacker must never be able to switch the approvals off: lowering minWithdrawalSigners needs a
 * person; raising it works with either credential; every change says who and how.
 */
describe('governance: a leaked API key cannot switch the approvals off', () => {
  let service: TestService;
  let acme: Awaited<ReturnType<TestService['bootstrap']>>;

  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_MINUTE: '1000000' });
    await stopWithdrawalProcessors(service);
    acme = await service.bootstrap('Acme', ['alice', 'bob'], { minWithdrawalSigners: 2 });
    await fundLedger(service, acme.organization.id, 'eip155:1', 10n ** 18n);
    await fundGasWallet(service, acme.apiKey, acme.organization.id, 'eip155:1', 10n ** 16n);
  });
  afterAll(async () => {
    await service?.stop();
  });

  const threshold = async () => (await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body!.minWithdrawalSigners;
  const lower = (credential: { apiKey: string } | { token: string }) => service.request('PATCH', '/organisation/min-withdrawal-signers', { ...credential, body: { minWithdrawalSigners: 1 } });
  const thresholdChanges = async () => {
    const response = await service.app.request('/audit/events?category=organization', { headers: { 'x-api-key': acme.apiKey } });
    return (await response.text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown>; metadata: Record<string, unknown> })
      .filter((line) => line.type === 'MinWithdrawalSignersChanged');
  };

  it('the key lowers the threshold: 403 FORBIDDEN, nothing changed, and its withdrawal still waits for a person', async () => {
    const refused = await lower({ apiKey: acme.apiKey });
    expect(refused).toMatchObject({ status: 403, body: { error: 'FORBIDDEN', statusCode: 403, details: { current: 2, requested: 1 } } });
    expect(await threshold()).toBe(2);
    expect(await thresholdChanges()).toEqual([]);

    const created = await service.request('POST', '/withdrawals', { apiKey: acme.apiKey, body: { chainId: 'eip155:1', tokenId: ETH, amount: '5000000000000000', recipient: RECIPIENT, reference: 'leaked-key' } });
    expect(created).toMatchObject({ status: 201, body: { withdrawal: { status: 'PendingApproval', approvers: [acme.users[0]!.id] } } });
  });

  it('the key may raise the threshold or keep it; a person may lower it; each change names who and how', async () => {
    expect(await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey: acme.apiKey, body: { minWithdrawalSigners: 2 } })).toMatchObject({ status: 200 });
    const bob = String((await service.login(acme.users[1]!)).body!.accessToken);
    expect(await lower({ token: bob })).toMatchObject({ status: 200, body: {} });
    expect(await threshold()).toBe(1);
    expect(await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey: acme.apiKey, body: { minWithdrawalSigners: 2 } })).toMatchObject({ status: 200 });
    expect(await threshold()).toBe(2);

    const changes = await thresholdChanges();
    expect(changes.map((change) => [change.data.minWithdrawalSigners, change.data.credential, change.data.changedBy, change.metadata.credential, change.metadata.username])).toEqual([
      [2, 'api-key', acme.users[0]!.id, 'api-key', 'alice'],
      [1, 'person', acme.users[1]!.id, 'person', 'bob'],
      [2, 'api-key', acme.users[0]!.id, 'api-key', 'alice'],
    ]);
    // the service's own events say so too: the organization's creation was the CLI's (bootstrap), no person
    const { text } = { text: await (await service.app.request('/audit/events?category=organization', { headers: { 'x-api-key': acme.apiKey } })).text() };
    const created = JSON.parse(text.split('\n')[0]!) as { type: string; metadata: Record<string, unknown> };
    expect(created).toMatchObject({ type: 'OrganizationCreated', metadata: { credential: 'system', username: null } });
  });

  describe('one code clears a queue (POST /withdrawals/approve)', () => {
    let team: Awaited<ReturnType<TestService['bootstrap']>>;
    let reference = 0;
    beforeAll(async () => {
      team = await service.bootstrap('Team', ['tina', 'uma', 'vic'], { minWithdrawalSigners: 3 });
      await fundLedger(service, team.organization.id, 'eip155:1', 10n ** 18n);
      await fundGasWallet(service, team.apiKey, team.organization.id, 'eip155:1', 10n ** 16n);
    });
    const queue = async (count: number) => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++) {
        const created = await service.request('POST', '/withdrawals', { apiKey: team.apiKey, body: { chainId: 'eip155:1', tokenId: ETH, amount: '5000000000000000', recipient: RECIPIENT, reference: `q-${++reference}` } });
        ids.push((created.body!.withdrawal as { id: string }).id);
      }
      return ids;
    };
    /** a person's access token; the clock moves a step first, so the login's code is one not used yet */
    const tokenOf = async (index: number) => {
      service.advance(30_000);
      return String((await service.login(team.users[index]!)).body!.accessToken);
    };
    const approveMany = (token: string, ids: string[], index: number) => service.request('POST', '/withdrawals/approve', { token, body: { ids, totpCode: service.totp(team.users[index]!.totpSecret) } });
    const approvedWebhooks = async (id: string) =>
      (await service.infrastructure.db.selectFrom('webhook_deliveries').select('body').where('event_type', '=', 'withdrawal.approved').execute()).filter((row) => row.body.includes(id)).length;

    it('answers one result per id in order: an id given twice counts once, an unknown one is 404, the others go on', async () => {
      const [first, second] = await queue(2);
      const uma = await tokenOf(1);
      service.advance(30_000); // the login spent this step's code
      const unknown = '00000000-0000-4000-8000-000000000000';
      const answer = await approveMany(uma, [first!, first!, unknown, second!], 1);
      expect(answer.status).toBe(200);
      expect((answer.body!.results as unknown[]).map((result) => ('withdrawal' in (result as object) ? 'ok' : (result as { error: { error: string } }).error.error))).toEqual([
        'ok',
        'DUPLICATE_APPROVAL',
        'WITHDRAWAL_NOT_FOUND',
        'ok',
      ]);
      expect(answer.body!.results).toMatchObject([
        { id: first, withdrawal: { approvers: [team.users[0]!.id, team.users[1]!.id], status: 'PendingApproval' } },
        { id: first, error: { statusCode: 409 } },
        { id: unknown, error: { statusCode: 404 } },
        { id: second },
      ]);
      // one code, spent once: the same code again is refused, nothing approved
      const again = await service.request('POST', '/withdrawals/approve', { token: uma, body: { ids: [second!], totpCode: service.totp(team.users[1]!.totpSecret) } });
      expect(again).toMatchObject({ status: 401, body: { error: 'INVALID_TOTP' } });
      // a person's act: an API key is 403
      expect(await service.request('POST', '/withdrawals/approve', { apiKey: team.apiKey, body: { ids: [second!], totpCode: '123456' } })).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
      expect(await service.request('POST', '/withdrawals/approve', { token: uma, body: { ids: [], totpCode: '123456' } })).toMatchObject({ status: 400 });
      expect(await service.request('POST', '/withdrawals/approve', { token: uma, body: { ids: Array.from({ length: 101 }, () => first!), totpCode: '123456' } })).toMatchObject({ status: 400 });
    });

    it('two approvers batching overlapping sets at once: each counts once per withdrawal, one withdrawal.approved each', async () => {
      const ids = await queue(6);
      const [uma, vic] = [await tokenOf(1), await tokenOf(2)];
      service.advance(30_000);
      const [byUma, byVic] = await Promise.all([approveMany(uma, ids.slice(0, 4), 1), approveMany(vic, ids.slice(2), 2)]);
      expect(byUma.status).toBe(200);
      expect(byVic.status).toBe(200);
      for (const id of ids) {
        const read = (await service.request('GET', `/withdrawals/${id}`, { apiKey: team.apiKey })).body as { status: string; approvers: string[] };
        expect(new Set(read.approvers).size).toBe(read.approvers.length);
        const both = ids.slice(2, 4).includes(id);
        expect(read.status).toBe(both ? 'Pending' : 'PendingApproval');
      }
      await waitUntilDelivered();
      for (const id of ids.slice(2, 4)) expect(await approvedWebhooks(id)).toBe(1);
      for (const id of [...ids.slice(0, 2), ...ids.slice(4)]) expect(await approvedWebhooks(id)).toBe(0);
    });

    it('a batch racing a cancel: the withdrawal ends cancelled with its hold released, or approved, never both', async () => {
      const [id] = await queue(1);
      const balanceBefore = await ledgerHeld();
      const uma = await tokenOf(1);
      service.advance(30_000);
      const [batch, cancel] = await Promise.all([approveMany(uma, [id!], 1), service.request('DELETE', `/withdrawals/${id}`, { apiKey: team.apiKey })]);
      expect(batch.status).toBe(200);
      const read = (await service.request('GET', `/withdrawals/${id}`, { apiKey: team.apiKey })).body as { status: string; approvers: string[] };
      if (cancel.status === 200) {
        expect(read.status).toBe('Cancelled');
        expect(await ledgerHeld()).toBe(balanceBefore - 5_000_000_000_000_000n);
      } else {
        expect(read).toMatchObject({ status: 'PendingApproval', approvers: [team.users[0]!.id, team.users[1]!.id] });
      }
    });

    /** the ledger as its stream holds it (the read model may lag) */
    const ledgerHeld = async () => (await loadAggregate(service.infrastructure.store, streams.ledger(team.organization.id, ETH), ledgerDecider)).state.held;
    const waitUntilDelivered = async () => {
      const head = await service.infrastructure.store.headPosition();
      await waitForProjection(service.infrastructure.db, WITHDRAWALS_PROJECTION, head, 20_000);
    };
  });

  it('nobody can lock an approver out: failures from one address are refused there (429); from their own address the person logs in', async () => {
    const limited = await startTestService({ LOGIN_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const org = await limited.bootstrap('Locked', ['lena']);
      const lena = org.users[0]!;
      const from = (remoteAddress: string, body: object) =>
        limited.app.request('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, { incoming: { socket: { remoteAddress } } });
      for (let n = 0; n < 3; n++) expect((await from('203.0.113.9', { username: 'lena', password: 'wrong', totpCode: '000000' })).status).toBe(401);
      const refused = await from('203.0.113.9', { username: 'lena', password: lena.password, totpCode: limited.totp(lena.totpSecret) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const mine = await from('198.51.100.7', { username: 'lena', password: lena.password, totpCode: limited.totp(lena.totpSecret) });
      expect(mine.status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});
