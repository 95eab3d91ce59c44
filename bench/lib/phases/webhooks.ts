import { pollUntil } from '../api.js';
import type { Lifecycle } from '../lifecycle.js';
import { runLoad, summarizeLoad } from '../load.js';
import type { OutboxMonitor, OutboxSample } from '../outbox-monitor.js';
import { sustainedRate } from '../outbox-monitor.js';
import { bootstrapOrganization, fundOrganization, type BenchOrganization, type TokenInfo } from '../organization.js';
import type { BenchService } from '../service.js';
import { summarize, type LatencySummary } from '../stats.js';
import { arrivalsBetween, delaysOfArrivalsBetween, startBenchWebhookReceiver, type BenchWebhookReceiver } from '../webhook-receiver.js';
import { withdrawalTemplates } from './withdrawals.js';

export interface WebhookPhaseFigures {
  /**
   * The dispatcher's capacity while the withdrawal load runs: deliveries per second (every
   * organization's) over the readings, during the load, that saw deliveries due. A parked backlog
   * is released as the load starts, so the dispatcher always has more than the load produces.
   */
  underLoadPerSecond: number;
  underLoadBacklogSeconds: number;
  /** deliveries parked (organization without a URL) and released when the load began */
  released: number;
  /** the load's own production, delivered: its organization's deliveries during the load, per second of it */
  producedPerSecond: number;
  /** while the outbox had deliveries due, over the whole run so far (round 5's figure) */
  sustainedPerSecond: number;
  backlogSeconds: number;
  /** distinct deliveries that arrived during this phase (both receivers), and per second of it */
  deliveredInPhase: number;
  phasePerSecond: number;
  /** distinct deliveries received over the whole run (both receivers) */
  deliveredTotal: number;
  /** deliveries still due when the phase gave up waiting (0: drained) */
  leftDue: number;
  /**
   * Fairness between the two organizations: how many of each one's deliveries arrived while the
   * load ran (one organization's released backlog must not hold the loaded one's back), and how far
   * behind its events each of the loaded organization's webhooks arrived, from the load's start
   * until the outbox drained.
   */
  loadedArrivedDuringLoad: number;
  releasedArrivedDuringLoad: number;
  loadedDelayMs: LatencySummary;
}

/** arrival times of several receivers, in one ascending list */
const mergedArrivals = (receivers: readonly BenchWebhookReceiver[]): number[] => receivers.flatMap((receiver) => receiver.firstArrivals).sort((a, b) => a - b);

const samplesWithin = (samples: readonly OutboxSample[], fromMs: number, toMs: number): OutboxSample[] => samples.filter((sample) => sample.atMs >= fromMs && sample.atMs <= toMs);

/**
 * The dispatcher's throughput while the load runs, not the load's production rate (which the
 * dispatcher keeps pace with, so a rate bounded by it says nothing of the dispatcher's capacity):
 *
 * 1. a second organization, bootstrapped without a webhook URL, runs `seconds` of withdrawals:
 *    its deliveries wait in the outbox, unattempted (CONTRACT §7);
 * 2. the withdrawal load starts again on the bench's organization and, as it starts, the second
 *    organization's URL is set (its own receiver, which checks every signature): its backlog is
 *    due at once, beside what the load produces;
 * 3. the outbox drains (nothing due two readings in a row, at most 5 minutes).
 *
 * Answers the rate while the load ran and deliveries were due (the dispatcher's capacity under
 * load), the load's own deliveries per second (what it produced, delivered), and round 5's figure.
 */
export const runWebhookPhase = async (options: {
  lifecycle: Lifecycle;
  service: BenchService;
  org: BenchOrganization;
  tokens: TokenInfo[];
  seconds: number;
  connections: number;
  receiver: BenchWebhookReceiver;
  monitor: OutboxMonitor;
  progress: (message: string) => void;
}): Promise<WebhookPhaseFigures> => {
  const { lifecycle, receiver, monitor, progress } = options;
  const startedMs = performance.now();
  const parkedReceiver = await startBenchWebhookReceiver();
  lifecycle.onTeardown('close the parked organization’s webhook receiver', () => parkedReceiver.close());
  const parked = await bootstrapOrganization(options.service, null);
  parkedReceiver.setSecret(parked.webhookSigningSecret);
  progress('webhooks: funding an organization without a webhook URL, to park a backlog');
  await fundOrganization(lifecycle, parked.api, options.tokens, progress);
  const load = (org: BenchOrganization, prefix: string) =>
    runLoad(lifecycle, {
      url: org.api.url,
      apiKey: org.api.apiKey,
      seconds: options.seconds,
      connections: options.connections,
      referencePrefix: `${prefix}-${Date.now().toString(36)}`,
      templates: withdrawalTemplates(options.tokens),
    });
  progress(`webhooks: parking a backlog with ${options.seconds} s of withdrawals`);
  const parking = summarizeLoad(await load(parked, 'webhooks-parked'));
  progress(`webhooks: ${parking.created} withdrawals parked their deliveries (${parking.errors} errors)`);

  progress(`webhooks: the load again, and the parked backlog released as it starts`);
  const loadStartedMs = performance.now();
  const loading = load(options.org, 'webhooks-load');
  await parked.api.expect(200, 'PATCH', '/organisation/webhook', { webhookUrl: parkedReceiver.url });
  const releasedMs = performance.now();
  const loaded = summarizeLoad(await loading);
  const loadEndedMs = performance.now();
  progress(`webhooks: the load made ${loaded.created} withdrawals (${loaded.createdPerSecond.toFixed(0)}/s, ${loaded.errors} errors) beside the released backlog`);

  progress(`webhooks: draining the outbox (${monitor.latest()?.due ?? 0} due, ${receiver.firstArrivals.length + parkedReceiver.firstArrivals.length} delivered so far)`);
  let quietReadings = 0;
  let lastSeen = monitor.samples.length;
  const drained = await pollUntil(
    'the webhook outbox to drain',
    async () => {
      for (; lastSeen < monitor.samples.length; lastSeen++) quietReadings = monitor.samples[lastSeen]!.due === 0 ? quietReadings + 1 : 0;
      return quietReadings >= 2;
    },
    { timeoutMs: 300_000, intervalMs: 250, signal: lifecycle.signal },
  ).then(
    () => true,
    (error: unknown) => {
      if (lifecycle.signal.aborted) throw error;
      return false;
    },
  );
  const endedMs = performance.now();
  const arrivals = mergedArrivals([receiver, parkedReceiver]);
  const underLoad = sustainedRate(samplesWithin(monitor.samples, releasedMs, loadEndedMs), arrivals);
  const sustained = sustainedRate(monitor.samples, arrivals);
  const deliveredInPhase = arrivalsBetween(arrivals, startedMs, endedMs);
  return {
    underLoadPerSecond: underLoad.perSecond,
    underLoadBacklogSeconds: underLoad.backlogSeconds,
    released: parkedReceiver.firstArrivals.length,
    producedPerSecond: (arrivalsBetween(receiver.firstArrivals, loadStartedMs, loadEndedMs) * 1000) / (loadEndedMs - loadStartedMs),
    sustainedPerSecond: sustained.perSecond,
    backlogSeconds: sustained.backlogSeconds,
    deliveredInPhase,
    phasePerSecond: (deliveredInPhase * 1000) / (endedMs - startedMs),
    deliveredTotal: arrivals.length,
    leftDue: drained ? 0 : (monitor.latest()?.due ?? Number.NaN),
    loadedArrivedDuringLoad: arrivalsBetween(receiver.firstArrivals, loadStartedMs, loadEndedMs),
    releasedArrivedDuringLoad: arrivalsBetween(parkedReceiver.firstArrivals, loadStartedMs, loadEndedMs),
    loadedDelayMs: summarize(delaysOfArrivalsBetween(receiver, loadStartedMs, endedMs)),
  };
};
