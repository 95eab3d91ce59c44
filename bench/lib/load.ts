import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Lifecycle } from './lifecycle.js';

/** One withdrawal body without its reference (the generator adds a fresh one per request). */
export interface WithdrawalTemplate {
  chainId: string;
  tokenId: string;
  amount: string;
  recipient: string;
  memo?: string;
}

export interface LoadPlan {
  url: string;
  apiKey: string;
  seconds: number;
  connections: number;
  referencePrefix: string;
  templates: WithdrawalTemplate[];
}

export interface LoadReport {
  durationSeconds: number;
  /** HTTP status → responses */
  statusCounts: Record<string, number>;
  /** connection errors, time-outs included (autocannon's `errors`) */
  socketErrors: number;
  timeouts: number;
  /** `<status> <error code>` → responses, for every status but 201 */
  errorCodes: Record<string, number>;
  /** over every response, whatever its status */
  latencyMs: { p50: number; p99: number; max: number };
}

const generator = path.join(import.meta.dirname, 'load-generator.ts');

/** Runs the load generator in its own node process and answers its report. Interrupting the bench stops it. */
export const runLoad = (lifecycle: Lifecycle, plan: LoadPlan): Promise<LoadReport> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', generator], {
      env: { ...process.env, LOAD_PLAN: JSON.stringify(plan) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const stop = () => child.kill('SIGTERM');
    lifecycle.signal.addEventListener('abort', stop, { once: true });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      lifecycle.signal.removeEventListener('abort', stop);
      if (lifecycle.signal.aborted) return reject(lifecycle.signal.reason as Error);
      if (code !== 0) return reject(new Error(`the load generator exited with ${code}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as LoadReport);
    });
  });

/** Created withdrawals are the 201s; everything else, and every connection error, is an error. */
export const summarizeLoad = (report: LoadReport) => {
  const created = report.statusCounts['201'] ?? 0;
  const other = Object.entries(report.statusCounts).filter(([status]) => status !== '201');
  const errors = other.reduce((sum, [, count]) => sum + count, 0) + report.socketErrors;
  const breakdown = [...Object.entries(report.errorCodes).map(([code, count]) => `${code}: ${count}`), ...(report.socketErrors ? [`socket errors: ${report.socketErrors} (time-outs ${report.timeouts})`] : [])];
  return { created, createdPerSecond: created / report.durationSeconds, errors, breakdown };
};
