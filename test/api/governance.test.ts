import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, stopWithdrawalProcessors } from '../support/withdrawals.js';

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
    expect(changes.map((change) => [change.data.minWithdrawalSigners, change.data.credential, change.data.changedBy, change.metadata.credential])).toEqual([
      [2, 'api-key', acme.users[0]!.id, 'api-key'],
      [1, 'person', acme.users[1]!.id, 'person'],
      [2, 'api-key', acme.users[0]!.id, 'api-key'],
    ]);
  });
});
