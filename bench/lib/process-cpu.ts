import fs from 'node:fs/promises';
import type { ServiceDb } from './service-db.js';
import type { BenchService, ServiceProcessInfo } from './service.js';

const CLOCK_TICKS_PER_SECOND = 100;

/** user + system CPU of a process, ms; `children`: with its reaped children's (a server's exited backends) */
export const cpuMs = async (pid: number, children = false): Promise<number> => {
  const text = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (text === null) return 0;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields from the state (3rd of stat): utime is the 14th of stat, so index 11 here
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number) as [number, number, number, number];
  return ((utime + stime + (children ? cutime + cstime : 0)) * 1000) / CLOCK_TICKS_PER_SECOND;
};

export const parentOf = async (pid: number): Promise<number> => {
  const text = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
};

/** every process of the PostgreSQL server: the postmaster (with its reaped children) and its live children */
export const serverCpuMs = async (postmaster: number): Promise<number> => {
  let total = await cpuMs(postmaster, true);
  for (const entry of await fs.readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    const parent = await parentOf(pid).catch(() => -1);
    if (parent === postmaster) total += await cpuMs(pid);
  }
  return total;
};

/** CPU (user + system, ms) each of the service's processes has used since its spawn, by role */
export const serviceCpuMs = async (service: Pick<BenchService, 'processes'>): Promise<Map<ServiceProcessInfo['role'], number>> =>
  new Map(await Promise.all(service.processes.map(async ({ role, pid }) => [role, await cpuMs(pid)] as const)));

/** A sampler of the CPU used so far by each of the service's processes and by its PostgreSQL (`postgres`), ms. */
export const serviceAndServerCpu = async (service: Pick<BenchService, 'processes'>, db: ServiceDb): Promise<() => Promise<Map<string, number>>> => {
  const [session] = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
  const postmaster = await parentOf(session!.pid);
  return async () => new Map<string, number>([...(await serviceCpuMs(service)), ['postgres', await serverCpuMs(postmaster)]]);
};
