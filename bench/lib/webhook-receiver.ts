import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The integrator's end of the webhooks, as README's example does it: the HMAC over the raw bytes
 * is checked before anything else (401 otherwise), and deliveries are deduplicated on
 * `x-webhook-id`. It records when each distinct id first arrived, to measure deliveries per second.
 */
export interface BenchWebhookReceiver {
  url: string;
  /** set once the organization exists: requests before that are refused (401) and retried by the service */
  setSecret(secret: string): void;
  /** first-arrival times (performance.now(), ms) of distinct ids, in arrival order */
  readonly firstArrivals: number[];
  /** each first arrival's delay behind its event (the body's `timestamp`), ms, in the same order */
  readonly firstArrivalDelaysMs: number[];
  /** requests answered 200, repeats included */
  readonly accepted: () => number;
  readonly badSignatures: () => number;
  /** distinct ids by webhook type */
  readonly byType: Map<string, number>;
  close(): Promise<void>;
}

export const startBenchWebhookReceiver = async (): Promise<BenchWebhookReceiver> => {
  let secret: Buffer | null = null;
  const seen = new Set<string>();
  const firstArrivals: number[] = [];
  const firstArrivalDelaysMs: number[] = [];
  const byType = new Map<string, number>();
  let accepted = 0;
  let badSignatures = 0;

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const given = Buffer.from(String(request.headers['x-webhook-signature'] ?? ''), 'hex');
      const expected = secret ? createHmac('sha256', secret).update(body).digest() : null;
      if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        badSignatures++;
        response.writeHead(401).end();
        return;
      }
      const id = String(request.headers['x-webhook-id'] ?? '');
      if (id && !seen.has(id)) {
        seen.add(id);
        firstArrivals.push(performance.now());
        const { type, timestamp } = JSON.parse(body.toString('utf8')) as { type: string; timestamp: string };
        firstArrivalDelaysMs.push(Date.now() - Date.parse(timestamp));
        byType.set(type, (byType.get(type) ?? 0) + 1);
      }
      accepted++;
      response.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    setSecret: (value) => void (secret = Buffer.from(value)),
    firstArrivals,
    firstArrivalDelaysMs,
    accepted: () => accepted,
    badSignatures: () => badSignatures,
    byType,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Distinct deliveries whose first arrival lies in [fromMs, toMs) (performance.now() times). */
export const arrivalsBetween = (arrivals: readonly number[], fromMs: number, toMs: number): number => {
  let count = 0;
  for (const at of arrivals) if (at >= fromMs && at < toMs) count++;
  return count;
};

/** The delays behind their events of the distinct deliveries whose first arrival lies in [fromMs, toMs). */
export const delaysOfArrivalsBetween = (receiver: BenchWebhookReceiver, fromMs: number, toMs: number): number[] =>
  receiver.firstArrivals.flatMap((at, index) => (at >= fromMs && at < toMs ? [receiver.firstArrivalDelaysMs[index]!] : []));
