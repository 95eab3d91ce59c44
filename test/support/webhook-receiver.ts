import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver saw it: the raw body bytes and when it arrived. */
export interface ReceivedWebhook {
  receivedAtMs: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** How to answer the n-th request (0-based): a status code, at once or after a delay, or never */
export type ReceiverScript = (request: ReceivedWebhook, index: number) => number | { status: number; afterMs: number } | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  script: ReceiverScript;
  /** resolves once `count` requests have arrived */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 (port 0) whose answers each test scripts. */
export const startWebhookReceiver = async (script: ReceiverScript = () => 200): Promise<WebhookReceiver> => {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((request, response) => {
    const receivedAtMs = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook = { receivedAtMs, headers: request.headers, body: Buffer.concat(chunks) };
      const index = received.push(webhook) - 1;
      const answer = receiver.script(webhook, index);
      if (answer === 'hang') return;
      const { status, afterMs } = typeof answer === 'number' ? { status: answer, afterMs: 0 } : answer;
      const respond = () => response.writeHead(status, status >= 300 && status < 400 ? { location: `${receiver.url}/elsewhere` } : {}).end();
      if (afterMs > 0) setTimeout(respond, afterMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    script,
    waitForRequests: (count, timeoutMs = 20_000) => waitUntil(() => received.length >= count, timeoutMs, `${count} webhook requests`),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
};

/** polls `condition` every 10 ms; fails after `timeoutMs` naming what it waited for */
export const waitUntil = async (condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
