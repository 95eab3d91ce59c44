import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allProjections } from '../../src/projections/registry.js';
import { isAlive, postmasterPid, runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';

/** `npm start` as a user meets it: the real process, its embedded PostgreSQL, signals and restarts. */
describe('service lifecycle (embedded PostgreSQL, no DATABASE_URL)', () => {
  let dataDir: string;
  let service: ServiceProcess | undefined;
  const env = () => ({ DATA_DIR: dataDir, DATABASE_URL: '', EVENTSTORE_URL: '' });

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-e2e-'));
    await fs.chmod(dataDir, 0o755);
  });
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    const pid = await postmasterPid(dataDir);
    if (pid && isAlive(pid)) process.kill(pid, 'SIGINT');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('starts on a fresh DATA_DIR and answers /healthz', async () => {
    service = await startServiceProcess(env());
    const response = await fetch(`${service.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(service.logs.some((record) => record.msg === 'embedded postgres: initialising a new cluster')).toBe(true);
  });

  it('answers unknown routes with the SPEC error body and logs one JSON line per request', async () => {
    const response = await fetch(`${service!.url}/no/such/route?apiKey=secret`, { headers: { 'x-request-id': 'trace-123' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    expect(await response.json()).toEqual({ error: 'NOT_FOUND', message: 'No such route', statusCode: 404, details: { requestId: 'trace-123' } });
    // log lines are written asynchronously: wait for this request's, however busy the machine
    const line = await service!.logged((record) => record.requestId === 'trace-123');
    expect(line).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/no/such/route', status: 404 });
    expect(JSON.stringify(service!.logs)).not.toContain('secret');
  });

  it('lets the CLI use the running server’s database instead of starting a second one', async () => {
    const pidBefore = await postmasterPid(dataDir);
    const result = await runCli(['projections', 'status'], env());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      headPosition: '0',
      projections: allProjections().map((projection) => ({ projection: projection.name, position: '0' })),
    });
    expect(await postmasterPid(dataDir)).toBe(pidBefore);
    expect(isAlive(pidBefore!)).toBe(true);
    expect((await fetch(`${service!.url}/healthz`)).status).toBe(200);
  });

  it('exits 0 on SIGTERM and leaves no PostgreSQL process behind', async () => {
    const pid = await postmasterPid(dataDir);
    // leave a mark in the database to find after the restart
    const password = (await fs.readFile(path.join(dataDir, 'secrets', 'postgres-password'), 'utf8')).trim();
    const client = new pg.Client({ host: path.join(dataDir, 'postgres'), user: 'postgres', password, database: 'ledgergate' });
    await client.connect();
    await client.query('create table lifecycle_mark (note text); insert into lifecycle_mark values ($$kept$$)');
    await client.end();

    service!.child.kill('SIGTERM');
    expect(await service!.exited).toBe(0);
    // log lines are written asynchronously: the last, logged just before the exit, still arrives
    await service!.closed;
    expect(service!.logs.at(-1)).toMatchObject({ level: 'info', msg: 'stopped' });
    expect(isAlive(pid!)).toBe(false);
    expect(await postmasterPid(dataDir)).toBeNull();
  });

  it('finds its data again on a second start, and a doubled SIGINT still stops cleanly', async () => {
    service = await startServiceProcess(env());
    expect(service.logs.some((record) => record.msg === 'embedded postgres: initialising a new cluster')).toBe(false);
    const password = (await fs.readFile(path.join(dataDir, 'secrets', 'postgres-password'), 'utf8')).trim();
    const client = new pg.Client({ host: path.join(dataDir, 'postgres'), user: 'postgres', password, database: 'ledgergate' });
    await client.connect();
    expect((await client.query('select note from lifecycle_mark')).rows).toEqual([{ note: 'kept' }]);
    await client.end();
    // Ctrl-C under npm delivers SIGINT twice (the process group, and npm forwarding it)
    service.child.kill('SIGINT');
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(0);
    expect(await postmasterPid(dataDir)).toBeNull();
  });
});
