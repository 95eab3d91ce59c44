import { pollUntil } from '../api.js';
import type { Lifecycle } from '../lifecycle.js';
import { runLoad } from '../load.js';
import type { OutboxMonitor } from '../outbox-monitor.js';
import { sustainedRate } from '../outbox-monitor.js';
import type { BenchOrganization, TokenInfo } from '../organization.js';
import { arrivalsBetween, type BenchWebhookReceiver } from '../webhook-receiver.js';
import { withdrawalTemplates } from './withdrawals.js';

export interface WebhookPhaseFigures {
  /** while the outbox had deliveries due, over the whole run so far */
  sustainedPerSecond: number;
  backlogSeconds: number;
  /** distinct deliveries that arrived during this phase, and per second of it */
  deliveredInPhase: number;
  phasePerSecond: number;
  /** distinct deliveries received over the whole run */
  deliveredTotal: number;
  /** deliveries still due when the phase gave up waiting (0: drained) */
  leftDue: number;
}

const ENOUGH_BACKLOG = 1000;

/**
 * The receiver's rate while the dispatcher has a backlog. The withdrawal phases leave one; run
 * alone, this phase first makes one with `seconds` of withdrawals over all tokens. Then it waits
 * for the outbox to drain (nothing due two readings in a row, at most 5 minutes).
 */
export const runWebhookPhase = async (options: {
  lifecycle: Lifecycle;
  org: BenchOrganization;
  tokens: TokenInfo[];
  seconds: number;
  connections: number;
  receiver: BenchWebhookReceiver;
  monitor: OutboxMonitor;
  progress: (message: string) => void;
}): Promise<WebhookPhaseFigures> => {
  const { receiver, monitor, progress } = options;
  const startedMs = performance.now();
  if ((monitor.latest()?.due ?? 0) < ENOUGH_BACKLOG) {
    progress(`webhooks: the outbox has little due; making a backlog with ${options.seconds} s of withdrawals`);
    await runLoad(options.lifecycle, {
      url: options.org.api.url,
      apiKey: options.org.api.apiKey,
      seconds: options.seconds,
      connections: options.connections,
      referencePrefix: `webhooks-${Date.now().toString(36)}`,
      templates: withdrawalTemplates(options.tokens),
    });
  }
  progress(`webhooks: draining the outbox (${monitor.latest()?.due ?? 0} due, ${receiver.firstArrivals.length} delivered so far)`);
  let quietReadings = 0;
  let lastSeen = monitor.samples.length;
  const drained = await pollUntil(
    'the webhook outbox to drain',
    async () => {
      for (; lastSeen < monitor.samples.length; lastSeen++) quietReadings = monitor.samples[lastSeen]!.due === 0 ? quietReadings + 1 : 0;
      return quietReadings >= 2;
    },
    { timeoutMs: 300_000, intervalMs: 250, signal: options.lifecycle.signal },
  ).then(
    () => true,
    (error: unknown) => {
      if (options.lifecycle.signal.aborted) throw error;
      return false;
    },
  );
  const endedMs = performance.now();
  const deliveredInPhase = arrivalsBetween(receiver.firstArrivals, startedMs, endedMs);
  const sustained = sustainedRate(monitor.samples, receiver.firstArrivals);
  return {
    sustainedPerSecond: sustained.perSecond,
    backlogSeconds: sustained.backlogSeconds,
    deliveredInPhase,
    phasePerSecond: (deliveredInPhase * 1000) / (endedMs - startedMs),
    deliveredTotal: receiver.firstArrivals.length,
    leftDue: drained ? 0 : (monitor.latest()?.due ?? Number.NaN),
  };
};
