import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ecc from '@bitcoinerlab/secp256k1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsvRecord } from '../../src/audit/csv.js';
import type { ExportLine } from '../../src/audit/export-line.js';
import { verifyExport } from '../../src/audit/verify.js';
import { addressCodecs } from '../../src/chains/families.js';
import { findChain } from '../../src/catalog/registry.js';
import { streams } from '../../src/domain/streams.js';
import { headSignedBy } from '../../src/audit/head.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { waitUntil } from '../support/webhook-receiver.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const BTC = `${BITCOIN}/slip44:0`;
const ENV = { DEVNET_BLOCK_TIME_MS: '3600000', RATE_LIMIT_PER_MINUTE: '1000000' };
const run = promisify(execFile);

type User = { id: string; username: string; password: string; totpSecret: string };

const externalBitcoinAddress = () => {
  const chain = findChain(BITCOIN)!;
  let publicKey: Uint8Array | null = null;
  while (!publicKey) publicKey = ecc.pointFromScalar(randomBytes(32), true);
  return addressCodecs[chain.family].addressFromPublicKey(publicKey, chain.network);
};

/**
 * CONTRACT §9 over HTTP: a two-signer withdrawal's history (state after each event, the last one
 * what GET answers), and the organization's export: hash chain, tenant isolation, no secrets, CSV.
 */
describe('audit: withdrawal history and the hash-chained export', () => {
  let service: TestService;
  let acme: { orgId: string; apiKey: string; alice: User; bob: User; webhookSecret: string };
  let globex: { orgId: string; apiKey: string };
  let withdrawalId: string;

  const ok = async (method: 'GET' | 'POST', url: string, apiKey: string, body?: unknown) => {
    const response = await service.request(method, url, { apiKey, ...(body === undefined ? {} : { body }) });
    expect(response.status, `${method} ${url} → ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body as Record<string, unknown>;
  };
  const exportText = async (apiKey: string, query = '') => {
    const response = await service.app.request(`/audit/events${query}`, { headers: { 'x-api-key': apiKey } });
    expect(response.status).toBe(200);
    return { text: await response.text(), contentType: response.headers.get('content-type') };
  };
  const linesOf = (text: string) => text.split('\n').filter((line) => line !== '');
  const parsed = (text: string) => linesOf(text).map((line) => JSON.parse(line) as ExportLine);

  beforeAll(async () => {
    service = await startTestService(ENV);
    const a = await service.bootstrap('Acme', ['alice', 'bob'], { minWithdrawalSigners: 2 });
    const g = await service.bootstrap('Globex', ['erin']);
    const [alice, bob] = a.users as unknown as [User, User];
    acme = { orgId: a.organization.id, apiKey: a.apiKey, alice, bob, webhookSecret: a.webhookSigningSecret };
    globex = { orgId: g.organization.id, apiKey: g.apiKey };

    // a deposit the watcher records (its events carry no metadata.orgId), then a withdrawal two people approve
    const { address } = (await ok('GET', `/payments/deposit-address?${new URLSearchParams({ chainId: BITCOIN, tokenId: BTC, userId: 'u1' })}`, acme.apiKey)) as { address: { properties: { address: string } } };
    await ok('POST', '/devnet/deposits', acme.apiKey, { chainId: BITCOIN, tokenId: BTC, toAddress: address.properties.address, amount: '300000' });
    await ok('POST', '/devnet/blocks', acme.apiKey, { chainId: BITCOIN, count: 2 });
    await waitUntil(async () => {
      const { balances } = (await ok('GET', '/portfolio', acme.apiKey)) as { balances: { tokenId: string; available: string }[] };
      return balances.some((balance) => balance.tokenId === BTC && balance.available === '300000');
    }, 30_000, 'the deposit credited');
    // Globex has events of its own, which Acme's export must never show
    await ok('GET', `/payments/deposit-address?${new URLSearchParams({ chainId: BITCOIN, tokenId: BTC, userId: 'g1' })}`, globex.apiKey);

    const created = (await ok('POST', '/withdrawals', acme.apiKey, { chainId: BITCOIN, tokenId: BTC, amount: '100000', recipient: externalBitcoinAddress(), reference: 'audit-1' })) as { withdrawal: { id: string; status: string } };
    expect(created.withdrawal.status).toBe('PendingApproval');
    withdrawalId = created.withdrawal.id;
    service.advance(30_000);
    const token = (await service.login(acme.bob)).body!.accessToken as string;
    service.advance(30_000);
    const approved = await service.request('POST', `/withdrawals/${withdrawalId}/approve`, { token, body: { totpCode: service.totp(acme.bob.totpSecret) } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await waitUntil(async () => (await ok('GET', `/withdrawals/${withdrawalId}`, acme.apiKey)).status === 'Processing', 30_000, 'Processing');
    await ok('POST', '/devnet/blocks', acme.apiKey, { chainId: BITCOIN, count: 2 });
    await waitUntil(async () => (await ok('GET', `/withdrawals/${withdrawalId}`, acme.apiKey)).status === 'Completed', 30_000, 'Completed');
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('GET /withdrawals/:id/history: each event with the state after it; the last state is what GET /withdrawals/:id answers', async () => {
    const { events } = (await ok('GET', `/withdrawals/${withdrawalId}/history`, acme.apiKey)) as {
      events: { revision: number; type: string; data: Record<string, unknown>; metadata: { actor: string; requestId: string | null; at: string }; state: { status: string; approvers: string[] } }[];
    };
    expect(events.map((event) => [event.revision, event.type, event.state.status])).toEqual([
      [0, 'WithdrawalRequested', 'PendingApproval'],
      [1, 'WithdrawalApproved', 'Pending'],
      [2, 'WithdrawalTransactionSigned', 'Pending'],
      [3, 'WithdrawalBroadcast', 'Processing'],
      [4, 'WithdrawalCompleted', 'Completed'],
    ]);
    expect(events[0]!.state.approvers).toEqual([acme.alice.id]);
    expect(events[1]!.state.approvers).toEqual([acme.alice.id, acme.bob.id]);
    expect(events[1]!.metadata).toMatchObject({ actor: acme.bob.id, requestId: expect.any(String), at: expect.any(String) });
    expect(events.at(-1)!.state).toEqual(await ok('GET', `/withdrawals/${withdrawalId}`, acme.apiKey));
  });

  it('the history says who and how, and leaves the signed bytes out (the export keeps them)', async () => {
    const { body } = await service.request('GET', `/withdrawals/${withdrawalId}/history`, { apiKey: acme.apiKey });
    const events = (body as { events: { type: string; data: Record<string, unknown>; metadata: Record<string, unknown> }[] }).events;
    expect(events[0]!.metadata).toMatchObject({ credential: 'api-key', username: 'alice' });
    const signed = events.find((event) => event.type === 'WithdrawalTransactionSigned');
    expect(signed).toBeDefined();
    expect(signed!.data).not.toHaveProperty('raw');
    expect(signed!.data).toHaveProperty('txHash');
    const exported = linesOf((await exportText(acme.apiKey, '?category=withdrawal')).text).map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
    expect(exported.find((line) => line.type === 'WithdrawalTransactionSigned')?.data).toHaveProperty('raw');
  });

  it('answers 404 WITHDRAWAL_NOT_FOUND for another organization’s withdrawal and an unknown id', async () => {
    for (const [id, apiKey] of [[withdrawalId, globex.apiKey], ['no-such-withdrawal', acme.apiKey]] as const) {
      const response = await service.request('GET', `/withdrawals/${id}/history`, { apiKey });
      expect(response).toMatchObject({ status: 404, body: { error: 'WITHDRAWAL_NOT_FOUND', statusCode: 404 } });
    }
    expect((await service.request('GET', `/withdrawals/${withdrawalId}/history`)).status).toBe(401);
  });

  it('exports the organization’s events, all of them and only them, with a hash chain that verifies', async () => {
    const { text, contentType } = await exportText(acme.apiKey);
    expect(contentType).toContain('application/x-ndjson');
    const lines = parsed(text);
    const result = await verifyExport(linesOf(text));
    expect(result).toEqual({ ok: true, count: lines.length, lastHash: lines.at(-1)!.hash, format: 'ndjson' });
    // every category, the watcher's deposit events and the withdrawal processor's included
    const streamsSeen = new Set(lines.map((line) => line.stream.slice(0, line.stream.indexOf('-'))));
    expect([...streamsSeen].sort()).toEqual(expect.arrayContaining(['account', 'deposit', 'ledger', 'organization', 'withdrawal', 'withdrawalReference']));
    expect(lines.filter((line) => line.stream === streams.withdrawal(withdrawalId)).map((line) => line.type)).toEqual([
      'WithdrawalRequested', 'WithdrawalApproved', 'WithdrawalTransactionSigned', 'WithdrawalBroadcast', 'WithdrawalCompleted',
    ]);
    expect(lines.some((line) => line.type === 'DepositDetected')).toBe(true);
    // the store's own events of those streams, in global order, none left out
    const all = await service.infrastructure.store.readAll({ maxCount: 100_000 });
    const acmeStreams = new Set(lines.map((line) => line.stream));
    expect(lines.map((line) => line.position)).toEqual(all.filter((event) => acmeStreams.has(event.stream)).map((event) => event.position.toString()));
    // tenant scoping: nothing of Globex in Acme's export, nothing of Acme in Globex's
    expect(text).not.toContain(globex.orgId);
    const other = await exportText(globex.apiKey);
    expect(other.text).not.toContain(acme.orgId);
    expect(other.text).not.toContain(withdrawalId);
    expect(await verifyExport(linesOf(other.text))).toMatchObject({ ok: true });
  });

  it('never exports a secret: no digest, password hash, sealed seed or signing secret, sealed or plain', async () => {
    const { text } = await exportText(acme.apiKey);
    const organization = await service.infrastructure.store.readStream(streams.organization(acme.orgId));
    const sealed = organization.flatMap((event) =>
      ['passwordHash', 'totpSeedEncrypted', 'keyDigest', 'webhookSigningSecretEncrypted'].map((field) => event.data[field]).filter((value): value is string => typeof value === 'string'),
    );
    expect(sealed.length).toBeGreaterThanOrEqual(6); // 2 users × 2, the API key's digest, the webhook secret
    for (const secret of [...sealed, acme.apiKey, acme.webhookSecret, acme.alice.password, acme.alice.totpSecret, acme.bob.password, acme.bob.totpSecret]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/passwordHash|totpSeedEncrypted|keyDigest|SecretEncrypted/);
    // login bookkeeping streams are not part of an export
    expect(text).not.toMatch(/"stream":"(username|totpUse)-/);
  });

  it('CSV carries the same lines (RFC 4180) and verifies the same way', async () => {
    const ndjson = parsed((await exportText(acme.apiKey)).text);
    const { text, contentType } = await exportText(acme.apiKey, '?format=csv');
    expect(contentType).toContain('text/csv');
    const records = text.split('\r\n').slice(0, -1);
    expect(records[0]).toBe('position,stream,revision,type,data,metadata,prevHash,hash');
    const fromCsv = records.slice(1).map((record) => {
      const [position, stream, revision, type, data, metadata, prevHash, hash] = parseCsvRecord(record)!;
      return { position, stream, revision: Number(revision), type, data: JSON.parse(data!), metadata: JSON.parse(metadata!), prevHash, hash };
    });
    expect(fromCsv).toEqual(ndjson);
    expect(await verifyExport(records)).toMatchObject({ ok: true, count: ndjson.length, format: 'csv' });
  });

  it('filters by category, position and time, and continues an export from its last hash', async () => {
    const full = parsed((await exportText(acme.apiKey)).text);
    const withdrawals = parsed((await exportText(acme.apiKey, '?category=withdrawal')).text);
    expect(withdrawals.length).toBeGreaterThan(0);
    expect(withdrawals.every((line) => /^withdrawal(Reference|Gas)?-/.test(line.stream))).toBe(true);
    const twoCategories = parsed((await exportText(acme.apiKey, '?category=organization,ledger')).text);
    expect(new Set(twoCategories.map((line) => line.stream.split('-')[0]))).toEqual(new Set(['organization', 'ledger']));

    const cut = Math.floor(full.length / 2);
    const tail = parsed((await exportText(acme.apiKey, `?fromPosition=${full[cut]!.position}&prevHash=${full[cut - 1]!.hash}`)).text);
    expect(tail).toEqual(full.slice(cut));
    const head = parsed((await exportText(acme.apiKey, `?toPosition=${full[cut - 1]!.position}`)).text);
    expect(head).toEqual(full.slice(0, cut));

    const at = full[cut]!.metadata.at as string;
    const since = parsed((await exportText(acme.apiKey, `?from=${encodeURIComponent(at)}`)).text);
    expect(since.every((line) => Date.parse(line.metadata.at as string) >= Date.parse(at))).toBe(true);
    expect(since.length).toBeGreaterThan(0);

    const bad = await service.request('GET', '/audit/events?category=username', { apiKey: acme.apiKey });
    expect(bad).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    expect((await service.request('GET', '/audit/events?format=xml', { apiKey: acme.apiKey })).status).toBe(400);
    expect((await service.request('GET', '/audit/events')).status).toBe(401);
  });

  it('a signed head shows where the export ends: `verify --head` fails on a file cut short or extended, and on a forged head', async () => {
    const headOf = async () => (await service.request('GET', '/audit/head', { apiKey: acme.apiKey })).body as { position: string; hash: string; lines: number; at: string; signature: string };
    const head = await headOf();
    const { text } = await exportText(acme.apiKey);
    const lines = linesOf(text);
    expect(head).toMatchObject({ lines: lines.length, hash: JSON.parse(lines.at(-1)!).hash, position: JSON.parse(lines.at(-1)!).position });
    const publicKey = await service.app.request('/audit/public-key');
    expect(publicKey.status).toBe(200);
    const pem = await publicKey.text();
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(headSignedBy(head, pem)).toBe(true);
    expect(headSignedBy({ ...head, lines: head.lines + 1 }, pem)).toBe(false);
    expect((await service.request('GET', '/audit/head')).status).toBe(401);

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-head-'));
    const verifyAgainst = async (content: string, headContent: object, withKey = true) => {
      const file = path.join(dir, `${randomBytes(4).toString('hex')}.ndjson`);
      const headFile = path.join(dir, `${randomBytes(4).toString('hex')}.json`);
      const keyFile = path.join(dir, 'audit.pem');
      await Promise.all([fs.writeFile(file, content), fs.writeFile(headFile, JSON.stringify(headContent)), fs.writeFile(keyFile, pem)]);
      try {
        const { stdout } = await run(process.execPath, ['bin/ledgergate.mjs', 'verify', file, '--head', headFile, ...(withKey ? ['--public-key', keyFile] : [])], { env: { ...process.env, DATA_DIR: dir } });
        return { code: 0, stdout };
      } catch (error) {
        const failed = error as { code: number; stdout: string };
        return { code: failed.code, stdout: failed.stdout };
      }
    };
    try {
      expect(await verifyAgainst(text, head)).toEqual({ code: 0, stdout: `OK ${lines.length} ${head.hash}\n` });
      // the last two lines cut off: the chain alone still verifies, the head does not
      const cut = lines.slice(0, -2).join('\n') + '\n';
      expect(await verifyAgainst(cut, head)).toEqual({ code: 1, stdout: `FAILED line ${lines.length - 1}: the file ends after ${lines.length - 2} lines; the head says ${lines.length}: it was cut short\n` });
      // a later export (one more event) checked against the earlier head: extended past it
      await service.request('PATCH', '/organisation/webhook/signing-secret', { apiKey: acme.apiKey });
      const later = linesOf((await exportText(acme.apiKey)).text);
      expect(later.length).toBeGreaterThan(lines.length);
      expect(await verifyAgainst(later.join('\n') + '\n', head)).toMatchObject({ code: 1, stdout: expect.stringMatching(new RegExp(`^FAILED line ${lines.length + 1}: the head ends after ${lines.length} lines`)) });
      // a head whose numbers were changed no longer carries the audit key's signature
      expect(await verifyAgainst(cut, { ...head, lines: lines.length - 2, hash: JSON.parse(lines.at(-3)!).hash })).toEqual({ code: 1, stdout: 'FAILED head: its signature is not the audit key’s\n' });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('`ledgergate verify <file>`: OK <count> <lastHash>, exit 1 naming the first bad line', async () => {
    const { text } = await exportText(acme.apiKey);
    const lines = linesOf(text);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-verify-'));
    const verify = async (content: string) => {
      const file = path.join(dir, `${randomBytes(4).toString('hex')}.ndjson`);
      await fs.writeFile(file, content);
      try {
        const { stdout } = await run(process.execPath, ['bin/ledgergate.mjs', 'verify', file], { env: { ...process.env, DATA_DIR: dir } });
        return { code: 0, stdout };
      } catch (error) {
        const failed = error as { code: number; stdout: string };
        return { code: failed.code, stdout: failed.stdout };
      }
    };
    try {
      expect(await verify(text)).toEqual({ code: 0, stdout: `OK ${lines.length} ${JSON.parse(lines.at(-1)!).hash}\n` });
      const edited = [...lines];
      edited[4] = edited[4]!.replace('"revision":', '"revision":1');
      expect((await verify(edited.join('\n') + '\n')).stdout).toMatch(/^FAILED line 5: /);
      const bytes = Buffer.from(text);
      const offset = Buffer.byteLength(lines.slice(0, 7).join('\n')) + 40; // a byte inside line 8
      bytes[offset] = bytes[offset]! ^ 0x02;
      expect(await verify(bytes.toString())).toMatchObject({ code: 1, stdout: expect.stringMatching(/^FAILED line 8: /) });
      expect(await verify(lines.filter((_, index) => index !== 2).join('\n'))).toMatchObject({ code: 1, stdout: expect.stringMatching(/^FAILED line 3: .*prevHash/) });
      const swapped = [...lines];
      [swapped[5], swapped[6]] = [swapped[6]!, swapped[5]!];
      expect(await verify(swapped.join('\n'))).toMatchObject({ code: 1, stdout: expect.stringMatching(/^FAILED line 6: /) });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
