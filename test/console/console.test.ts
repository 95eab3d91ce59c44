import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';
import { browserTestsRun, browserTestsTitle, launchChromium, listen, screenshot, screenshotsDir } from '../support/console-browser.js';
import { fundGasWallet, fundLedger, settleWithdrawals, stopWithdrawalProcessors } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const XSS = '<img src=x onerror=alert(1)>';
/** a bounded wait for the page to show something (sign-in hashes a password: slow on a busy machine) */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 50 });

/**
 * CONTRACT §10 in a real browser: Debian's chromium loads /console from the service and a person
 * signs in, approves with fresh codes, cancels, reads a history, rotates the API key and signs
 * out, through the same HTTP API an integrator uses.
 */
describe.skipIf(!browserTestsRun)(browserTestsTitle('the console in chromium'), () => {
  let service: TestService;
  let acme: Awaited<ReturnType<TestService['bootstrap']>>;
  let server: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  let page: Page;
  let shots: string;
  const dialogs: string[] = [];
  let apiKey: string;

  const bob = () => acme.users[1]!;
  const withdraw = async (reference: string, amount: string, internalNote?: string) => {
    const created = await service.request('POST', '/withdrawals', { apiKey, body: { chainId: 'eip155:1', tokenId: ETH, amount, recipient: RECIPIENT, reference, ...(internalNote ? { internalNote } : {}) } });
    expect(created.status).toBe(201);
    return (created.body!.withdrawal as { id: string }).id;
  };
  const statusOf = async (id: string) => {
    await settleWithdrawals(service);
    return (await service.request('GET', `/withdrawals/${id}`, { apiKey })).body as { status: string; approvers: string[]; txnError: string | null };
  };
  /** the next 30 s step: a TOTP code is accepted once per user, so each step-up gets a new one */
  const freshCode = () => {
    service.advance(30_000);
    return service.totp(bob().totpSecret);
  };
  const signIn = async (code = service.totp(bob().totpSecret)) => {
    await page.getByLabel('Username').fill(bob().username);
    await page.getByLabel('Password').fill(bob().password);
    await page.getByLabel('Authentication code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const rowOf = (reference: string) => page.getByRole('table').getByRole('row').filter({ hasText: reference });
  const goTo = async (link: string) => {
    await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(link);
  };

  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_MINUTE: '1000000' });
    await stopWithdrawalProcessors(service);
    acme = await service.bootstrap('Acme', ['alice', 'bob'], { minWithdrawalSigners: 2 });
    apiKey = acme.apiKey;
    await fundLedger(service, acme.organization.id, 'eip155:1', 10n ** 19n);
    await fundGasWallet(service, apiKey, acme.organization.id, 'eip155:1', 10n ** 16n);
    server = await listen(service);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    shots = await screenshotsDir();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.stop();
  });

  it('serves /console with a strict Content-Security-Policy, and leaves /docs without it', async () => {
    const response = await fetch(`${server.baseUrl}/console`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const script = await fetch(`${server.baseUrl}/console/console.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('content-security-policy')).toBe(csp);
    expect((await fetch(`${server.baseUrl}/docs`)).headers.get('content-security-policy')).toBeNull();
    const slash = await fetch(`${server.baseUrl}/console/`, { redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([301, '/console']);
  });

  it('a wrong code is refused in role="alert"; the right one signs in to the approvals', async () => {
    await page.goto(`${server.baseUrl}/console`);
    await screenshot(page, shots, 'sign-in');
    const code = service.totp(bob().totpSecret);
    await signIn(code === '000000' ? '111111' : '000000');
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/code/i);
    await signIn();
    service.advance(30_000);
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Approvals');
    for (const link of ['Approvals', 'Withdrawals', 'Deposits', 'Balances', 'Webhooks', 'Audit', 'Settings']) await expect(page.getByRole('navigation').getByRole('link', { name: link, exact: true }).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(1);
  });

  it('approves one withdrawal with a fresh code: it moves on to Pending; a reused code is refused', async () => {
    const id = await withdraw('payout-1', '1500000000000000000', 'Invoice 2026-11');
    await goTo('Withdrawals');
    await goTo('Approvals');
    const row = rowOf('payout-1');
    await eventually(() => row.textContent()).toContain('1.5 ETH');
    expect(await row.textContent()).toContain('1500000000000000000 base units');
    expect(await row.textContent()).toContain('1 of 2');
    expect(await row.textContent()).toContain('alice');
    await screenshot(page, shots, 'approvals');

    await row.getByRole('button', { name: 'Approve' }).click();
    const used = service.totp(bob().totpSecret);
    await page.getByLabel('Authentication code').fill(used === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/code/i);
    expect((await statusOf(id)).status).toBe('PendingApproval');
    await screenshot(page, shots, 'approve-code');

    await page.getByLabel('Authentication code').fill(freshCode());
    await page.getByRole('button', { name: 'Confirm' }).click();
    await eventually(() => page.getByRole('status').first().textContent()).toContain('payout-1');
    expect(await statusOf(id)).toMatchObject({ status: 'Pending', approvers: [acme.users[0]!.id, bob().id] });
    await eventually(() => rowOf('payout-1').count()).toBe(0);
  });

  it('approves several selected withdrawals with one code', async () => {
    const ids = [await withdraw('batch-a', '100000000000000000'), await withdraw('batch-b', '200000000000000000')];
    await goTo('Withdrawals');
    await goTo('Approvals');
    await eventually(() => rowOf('batch-b').count()).toBe(1);
    await page.getByRole('checkbox', { name: 'Select batch-a' }).check();
    await page.getByRole('checkbox', { name: 'Select batch-b' }).check();
    await page.getByRole('button', { name: /Approve selected/ }).click();
    await page.getByLabel('Authentication code').fill(freshCode());
    await page.getByRole('button', { name: 'Confirm' }).click();
    await eventually(() => page.getByRole('status').count()).toBe(2);
    for (const id of ids) expect((await statusOf(id)).status).toBe('Pending');
  });

  it('cancels a withdrawal: Cancelled by bob', async () => {
    const id = await withdraw('payout-2', '250000000000000000');
    await goTo('Withdrawals');
    await goTo('Approvals');
    await rowOf('payout-2').getByRole('button', { name: 'Cancel' }).click();
    await rowOf('payout-2').getByRole('button', { name: 'Yes, cancel it' }).click();
    await eventually(() => page.getByRole('status').first().textContent()).toContain('Cancelled by bob');
    expect(await statusOf(id)).toMatchObject({ status: 'Cancelled', txnError: 'Cancelled by bob' });
  });

  it('shows an XSS-shaped reference and note as text: no element made, no script run', async () => {
    await withdraw(XSS, '300000000000000000', `<script>alert(2)</script>${XSS}`);
    await goTo('Withdrawals');
    await goTo('Approvals');
    await eventually(() => rowOf(XSS).count()).toBe(1);
    expect(await rowOf(XSS).getByRole('link').textContent()).toBe(XSS);
    expect(await rowOf(XSS).locator('.note').first().textContent()).toBe(`<script>alert(2)</script>${XSS}`);
    expect(await page.locator('#page img, #page script').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('lists withdrawals with a status filter, and a reference opens its history: each event, who, when, the state after', async () => {
    await goTo('Withdrawals');
    await page.getByLabel('Status').selectOption('Cancelled');
    await eventually(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    expect(await rowOf('payout-2').textContent()).toContain('Cancelled by bob');
    await page.getByLabel('Status').selectOption('');
    await eventually(() => rowOf('payout-1').count()).toBe(1);
    await screenshot(page, shots, 'withdrawals');

    await rowOf('payout-1').getByRole('link', { name: 'payout-1' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Withdrawal history');
    const events = page.getByRole('list', { name: 'History' }).getByRole('listitem');
    await eventually(() => events.count()).toBe(2);
    expect(await events.nth(0).textContent()).toMatch(/WithdrawalRequested.*alice with the API key.*State after: PendingApproval/);
    expect(await events.nth(1).textContent()).toMatch(/WithdrawalApproved.*bob signed in.*State after: Pending\b/);
    await screenshot(page, shots, 'history');
  });

  it('shows deposits, balances in token units, and webhook deliveries with Redeliver', async () => {
    await goTo('Deposits');
    await eventually(() => page.getByRole('table').getByRole('row').count()).toBeGreaterThan(1);
    expect(await page.getByRole('table').textContent()).toContain('10 ETH');
    await screenshot(page, shots, 'deposits');

    await goTo('Balances');
    // 10 ETH in, 1.5 + 0.1 + 0.2 + 0.3 held by withdrawals (the cancelled 0.25 released)
    await eventually(() => page.getByRole('table').getByRole('row').filter({ hasText: 'ETH' }).first().textContent()).toContain('7.9 ETH');
    await screenshot(page, shots, 'balances');

    await goTo('Webhooks');
    await eventually(() => page.getByRole('button', { name: 'Redeliver' }).count()).toBeGreaterThan(0);
    await screenshot(page, shots, 'webhooks');
    await page.getByRole('button', { name: 'Redeliver' }).first().click();
    await eventually(() => page.getByRole('status').textContent()).toContain('will be sent again');
  });

  it('the audit export verifies in the browser against the signed head, and downloads as NDJSON', async () => {
    await goTo('Audit');
    await eventually(() => page.getByRole('status').textContent()).toMatch(/^Verified: \d+ lines.*signature is the service’s audit key’s/);
    await screenshot(page, shots, 'audit');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download export' }).click()]);
    const text = await (await import('node:fs/promises')).readFile((await download.path())!, 'utf8');
    const lines = text.split('\n').filter((line) => line !== '');
    const head = (await service.request('GET', '/audit/head', { apiKey })).body!;
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.length).toBeLessThanOrEqual(head.lines as number);
    expect((JSON.parse(lines[0]!) as { prevHash: string }).prevHash).toBe('0'.repeat(64));
  });

  it('settings: saves the webhook URL, rotates the signing secret and the API key (the old key refused at once)', async () => {
    await goTo('Settings');
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hooks');
    await page.getByRole('form', { name: 'Webhook' }).getByRole('button', { name: 'Save' }).click();
    await eventually(() => page.getByRole('form', { name: 'Webhook' }).getByRole('status').textContent()).toBe('Webhook URL saved.');
    expect((await service.request('GET', '/organisation', { apiKey })).body!.webhookUrl).toBe('http://127.0.0.1:9/hooks');
    expect(await page.getByLabel('Minimum signers').inputValue()).toBe('2');

    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'signing secret' }).count()).toBe(1);

    await page.getByRole('button', { name: 'Rotate API key' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'API key' }).locator('output');
    await eventually(() => shown.count()).toBe(1);
    const newKey = (await shown.textContent())!;
    expect(newKey).not.toBe(apiKey);
    expect(await service.request('GET', '/organisation', { apiKey })).toMatchObject({ status: 401, body: { error: 'INVALID_API_KEY' } });
    expect((await service.request('GET', '/organisation', { apiKey: newKey })).status).toBe(200);
    apiKey = newKey;
    await screenshot(page, shots, 'settings');
  });

  it('sign out forgets the session: the next page asks to sign in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await eventually(() => page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toBe('You are signed out.');
    await page.goto(`${server.baseUrl}/console#/settings`);
    await eventually(() => page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    expect(await page.getByRole('navigation').count()).toBe(0);
  });

  it('an expired session (401 INVALID_TOKEN) returns to the sign-in form and says so', async () => {
    await signIn(freshCode());
    // signed in again where the address pointed: Settings
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings');
    service.advance(2 * 60 * 60 * 1000); // the token lives one hour
    await page.getByRole('navigation').getByRole('link', { name: 'Balances', exact: true }).click();
    await eventually(() => page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toMatch(/session has expired/);
    expect(dialogs).toEqual([]);
  });

  it('a session left open returns to sign-in by itself when its hour is over', async () => {
    const idle = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await idle.clock.install();
      await idle.goto(`${server.baseUrl}/console#/balances`);
      await idle.getByLabel('Username').fill(bob().username);
      await idle.getByLabel('Password').fill(bob().password);
      await idle.getByLabel('Authentication code').fill(freshCode());
      await idle.getByRole('button', { name: 'Sign in' }).click();
      await eventually(() => idle.getByRole('heading', { level: 1 }).textContent()).toBe('Balances');
      await idle.clock.fastForward('59:00');
      expect(await idle.getByRole('heading', { level: 1 }).textContent()).toBe('Balances');
      await idle.clock.fastForward('01:01');
      await eventually(() => idle.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
      expect(await idle.getByRole('alert').textContent()).toMatch(/session has expired/);
    } finally {
      await idle.close();
    }
  });
});
