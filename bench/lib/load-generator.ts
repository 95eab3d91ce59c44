/**
 * The load generator, run as its own process (bench/lib/load.ts starts it) so the load never
 * shares a thread with the bench's samplers or with the service. It reads a LoadPlan as JSON
 * from the LOAD_PLAN variable, fires POST /withdrawals with autocannon for `seconds`, each request
 * with a fresh reference and the next template round-robin, and prints a LoadReport as JSON.
 */
import autocannon from 'autocannon';
import type { LoadPlan, LoadReport } from './load.js';

const plan = JSON.parse(process.env.LOAD_PLAN ?? 'null') as LoadPlan | null;
if (!plan || plan.templates.length === 0) throw new Error('LOAD_PLAN names no withdrawal templates');

let sent = 0;
/** `<status> <error code>` → responses, for everything but 201 */
const errorCodes: Record<string, number> = {};
const instance = autocannon({
  url: plan.url,
  connections: plan.connections,
  duration: plan.seconds,
  timeout: 30,
  requests: [
    {
      method: 'POST',
      path: '/withdrawals',
      headers: { 'content-type': 'application/json', 'x-api-key': plan.apiKey },
      setupRequest: (request) => {
        const template = plan.templates[sent % plan.templates.length]!;
        sent++;
        return { ...request, body: JSON.stringify({ ...template, reference: `${plan.referencePrefix}-${sent}` }) };
      },
      onResponse: (status, body) => {
        if (status === 201) return;
        let code = '?';
        try {
          code = String((JSON.parse(body) as { error?: unknown }).error ?? '?');
        } catch {
          // not JSON: keep '?'
        }
        const key = `${status} ${code}`;
        errorCodes[key] = (errorCodes[key] ?? 0) + 1;
      },
    },
  ],
});
process.once('SIGTERM', () => instance.stop());

const result = await instance;
const report: LoadReport = {
  durationSeconds: result.duration,
  statusCounts: Object.fromEntries(Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count])),
  socketErrors: result.errors,
  timeouts: result.timeouts,
  errorCodes,
  latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
};
process.stdout.write(JSON.stringify(report) + '\n');
