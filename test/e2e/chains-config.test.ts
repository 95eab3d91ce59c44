import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateMnemonic } from 'bip39';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAINS } from '../../src/catalog/registry.js';
import { createSigner } from '../../src/chains/signer/signer.js';
import { startAnvil, type Anvil } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const ETHEREUM = 'eip155:1';

/** `npm start` in production with a CHAINS_CONFIG naming only Ethereum, on a real node (anvil). */
describe('production with CHAINS_CONFIG', () => {
  let anvil: Anvil;
  let database: TestDatabase;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  const mnemonic = generateMnemonic(256);
  let env: Record<string, string>;

  const writeConfig = async (name: string, document: unknown) => {
    const file = path.join(dataDir, name);
    await fs.writeFile(file, JSON.stringify(document));
    return file;
  };

  beforeAll(async () => {
    anvil = await startAnvil(1);
    database = await createTestDatabase('chains-config');
    const { host, user, password, database: name } = database.config;
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-chains-config-'));
    env = {
      NODE_ENV: 'production',
      DATABASE_URL: `postgresql://${user}:${encodeURIComponent(String(password))}@localhost/${name}?host=${encodeURIComponent(String(host))}`,
      EVENTSTORE_URL: '',
      DATA_DIR: dataDir,
      LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'),
      LEDGERGATE_SIGNER_MNEMONIC: mnemonic,
    };
  }, 60_000);
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await anvil?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  });

  it('serves Ethereum on its node and lists the 10 other chains as disabled', async () => {
    const accountXpub = createSigner(mnemonic).accountXpub('evm', 'mainnet');
    const CHAINS_CONFIG = await writeConfig('chains.json', { chains: { [ETHEREUM]: { rpcUrls: [anvil.url], confirmations: 2, accountXpub } } });
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], { ...env, CHAINS_CONFIG });
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    const { apiKey } = JSON.parse(bootstrap.stdout) as { apiKey: string };

    service = await startServiceProcess({ ...env, CHAINS_CONFIG });
    const response = await fetch(`${service.url}/chains?enabledOnly=false`, { headers: { 'x-api-key': apiKey } });
    expect(response.status).toBe(200);
    const { chains } = (await response.json()) as { chains: { id: string; enabled: boolean; properties: { confirmations: number } }[] };
    expect(chains.map((chain) => chain.id)).toEqual(CHAINS.map((chain) => chain.id));
    expect(chains.filter((chain) => chain.enabled).map((chain) => chain.id)).toEqual([ETHEREUM]);
    expect(chains.find((chain) => chain.id === ETHEREUM)!.properties.confirmations).toBe(2);

    // a disabled chain is refused by name; no devnet in production
    const polygon = await fetch(`${service.url}/payments/deposit-address?chainId=eip155:137&tokenId=eip155:137/slip44:60&userId=u1`, { headers: { 'x-api-key': apiKey } });
    expect(polygon.status).toBe(422);
    expect(await polygon.json()).toMatchObject({ error: 'CHAIN_NOT_ENABLED' });
    expect((await fetch(`${service.url}/devnet/blocks`, { method: 'POST', headers: { 'x-api-key': apiKey } })).status).toBe(404);

    // Ethereum runs: a deposit address from the signer's keys, and a real deposit on anvil is seen
    const answer = await fetch(`${service.url}/payments/deposit-address?chainId=${ETHEREUM}&tokenId=${ETHEREUM}/slip44:60&userId=u1`, { headers: { 'x-api-key': apiKey } });
    expect(answer.status).toBe(200);
    const { address } = (await answer.json()) as { address: { properties: { address: string } } };
    const sent = await anvil.funded.sendTransaction({ to: address.properties.address, value: 10n ** 17n });
    await sent.wait();
    const deadline = Date.now() + 20_000;
    let deposits: unknown[] = [];
    while (Date.now() < deadline) {
      ({ deposits } = (await (await fetch(`${service.url}/payments/u1/deposits`, { headers: { 'x-api-key': apiKey } })).json()) as { deposits: unknown[] });
      if (deposits.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(deposits).toMatchObject([{ txnHash: sent.hash.toLowerCase() }]);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    service = undefined;
  }, 90_000);

  it('refuses to start when the configured xpub is not the signer’s, or the file names an unknown chain', async () => {
    const otherXpub = createSigner(generateMnemonic(256)).accountXpub('evm', 'mainnet');
    const mismatched = await writeConfig('mismatched.json', { chains: { [ETHEREUM]: { rpcUrls: [anvil.url], accountXpub: otherXpub } } });
    const refused = await runCli(['serve'], { ...env, PORT: '0', CHAINS_CONFIG: mismatched });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`chains.${ETHEREUM}.accountXpub: is not the signer's evm mainnet account key`);

    const unknown = await writeConfig('unknown.json', { chains: { 'eip155:2': { rpcUrls: [anvil.url] }, [ETHEREUM]: { rpcUrls: ['ftp://node'] } } });
    const invalid = await runCli(['serve'], { ...env, PORT: '0', CHAINS_CONFIG: unknown });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('CHAINS_CONFIG chains.eip155:2: unknown chain id');
    expect(invalid.stderr).toContain(`CHAINS_CONFIG chains.${ETHEREUM}.rpcUrls.0: an http:// or https:// JSON-RPC endpoint`);
  }, 60_000);
});
