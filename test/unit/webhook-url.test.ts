import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from '../../src/application/webhook-url.js';

const refusedWith = async (url: string, options: Parameters<typeof checkWebhookUrl>[1]) => {
  const error = await checkWebhookUrl(url, options).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, url).toMatchObject({ code: 'INVALID_WEBHOOK_URL' });
  return (error as Error).message;
};

describe('webhook URL rules (CONTRACT §7)', () => {
  const development = { isProduction: false };

  it('accepts https anywhere and plain http only to this machine, outside production', async () => {
    for (const url of ['https://hooks.example.com/x', 'http://localhost:3000/h', 'http://127.0.0.1/h', 'http://[::1]:8080/h']) {
      await expect(checkWebhookUrl(url, development)).resolves.toBe(url);
    }
    for (const url of ['http://example.com', 'http://10.1.2.3/h', 'ftp://example.com/x', 'https://u:p@example.com', 'nope', `https://x.example/${'a'.repeat(2100)}`]) {
      await refusedWith(url, development);
    }
  });

  it('refuses every plain http URL in production, localhost included', async () => {
    await refusedWith('http://localhost:3000/h', { isProduction: true, resolve: async () => ['93.184.216.34'] });
  });

  it('in production refuses hosts that resolve to loopback, private or link-local addresses', async () => {
    const resolvingTo = (addresses: string[]) => ({ isProduction: true, resolve: async () => addresses });
    for (const addresses of [['127.0.0.1'], ['10.0.0.8'], ['172.20.1.1'], ['192.168.1.10'], ['169.254.169.254'], ['::1'], ['fd00::1'], ['fe80::1'], ['::ffff:127.0.0.1'], ['::7f00:1'], ['::ffff:7f00:1'], ['64:ff9b::a00:1'], ['2002:a00:1::1'], ['100.64.0.1'], ['93.184.216.34', '10.0.0.1']]) {
      const message = await refusedWith('https://hooks.example.com/x', resolvingTo(addresses));
      expect(message).toContain('loopback, private or link-local');
    }
    await refusedWith('https://[::1]/x', { isProduction: true });
    await refusedWith('https://10.0.0.1/x', { isProduction: true });
    await refusedWith('https://does-not-resolve.example/x', { isProduction: true, resolve: async () => [] });
    await expect(checkWebhookUrl('https://hooks.example.com/x', resolvingTo(['93.184.216.34', '2606:2800:220:1::1']))).resolves.toBe('https://hooks.example.com/x');
  });
});
