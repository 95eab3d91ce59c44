import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestService } from './api-harness.js';

/** Debian's chromium (apt-get install chromium), driven by playwright-core: no browser download. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run. In CI a missing chromium fails them loudly (the suite must
 * not pass without them); on a workstation they are skipped, with the reason in their title.
 */
export const chromiumAvailable = existsSync(CHROMIUM);
export const browserTestsRun = chromiumAvailable || process.env.CI === 'true' || process.env.CI === '1';
export const browserTestsTitle = (title: string) => (browserTestsRun ? title : `${title} (skipped: no chromium at ${CHROMIUM}; apt-get install -y chromium)`);

export const launchChromium = async (): Promise<Browser> => {
  if (!chromiumAvailable) throw new Error(`No chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  // root in a container has no user namespace for chromium's sandbox
  return chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
};

/** The test service's app on a real socket, so a browser can load /console from it. */
export const listen = (service: TestService): Promise<{ baseUrl: string; close: () => Promise<void> }> =>
  new Promise((resolve) => {
    const server: ServerType = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ baseUrl: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) });
    });
  });

/**
 * Where page screenshots go: docs/console/ (committed, shown in the README) when
 * UPDATE_CONSOLE_SCREENSHOTS=1, else a temporary folder, so an ordinary test run changes no file.
 */
export const screenshotsDir = async () =>
  process.env.UPDATE_CONSOLE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/console') : fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-console-'));

export const screenshot = async (page: Page, dir: string, name: string) => {
  await fs.mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
};
