import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Hono, type MiddlewareHandler } from 'hono';
import { bundleConsoleClient } from './bundle.js';

const STATIC_DIR = path.join(import.meta.dirname, 'static');

/**
 * CONTRACT §10: scripts and styles only from the service itself, no inline script, no framing,
 * no form posting elsewhere. Only the console's responses carry it (/docs has its own needs).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('content-security-policy', CONSOLE_CSP);
  c.header('x-content-type-options', 'nosniff');
  c.header('x-frame-options', 'DENY');
  c.header('referrer-policy', 'no-referrer');
  c.header('cache-control', 'no-store');
};

/** Reads a file or builds a bundle once, on first use; a failure is retried on the next request. */
const once = (load: () => Promise<string>) => {
  let pending: Promise<string> | null = null;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = null;
      throw error;
    });
    return pending;
  };
};

const page = once(() => readFile(path.join(STATIC_DIR, 'index.html'), 'utf8'));
const styles = once(() => readFile(path.join(STATIC_DIR, 'console.css'), 'utf8'));
const script = once(bundleConsoleClient);

/** GET /console: the page for approvers, auditors and compliance, a client of the same HTTP API. */
export const consoleRoutes = () =>
  new Hono()
    // '/console/*' also matches '/console' itself
    .use('/console/*', securityHeaders)
    .get('/console', async (c) => c.html(await page()))
    .get('/console/', (c) => c.redirect('/console', 301))
    .get('/console/console.css', async (c) => c.body(await styles(), 200, { 'content-type': 'text/css; charset=utf-8' }))
    .get('/console/console.js', async (c) => c.body(await script(), 200, { 'content-type': 'text/javascript; charset=utf-8' }));
