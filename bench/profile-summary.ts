/**
 * Where a CPU profile's time went, summed by where the code lives: a package under node_modules,
 * a file of the service's own, or V8's own work (garbage collection, the idle loop, programs).
 *
 *   BENCH_SERVICE_NODE_OPTIONS=--cpu-prof BENCH_PHASES=withdrawals-one-token npm run bench
 *   npm run bench:profile -- CPU.*.cpuprofile            # the top 25 places and the top 15 functions
 *   npm run bench:profile -- --top 40 CPU.x.cpuprofile
 *
 * Self time only (a function's own samples, not its callees'), so the rows add up to the whole.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** the place a URL belongs to: `pkg:<name>`, `src/<dir>/<file>`, `node:<module>`, or V8's own */
const placeOf = (url: string, functionName: string): string => {
  if (!url) return `(${functionName || 'anonymous'})`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return `pkg:${first?.startsWith('@') ? `${first}/${second}` : first}`;
  }
  if (url.startsWith('node:')) return url;
  const own = url.match(/\/(src|dist|bench|bin)\/(.*)$/);
  return own ? `${own[1]}/${own[2]}` : url;
};

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`.padStart(7);

const summarize = (profile: CpuProfile, top: number): string => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (!node) return;
    total += micros;
    const { url, functionName, lineNumber } = node.callFrame;
    const place = placeOf(url, functionName);
    places.set(place, (places.get(place) ?? 0) + micros);
    const where = `${functionName || '(anonymous)'}  ${place}:${lineNumber + 1}`;
    functions.set(where, (functions.get(where) ?? 0) + micros);
  });
  const table = (title: string, rows: Map<string, number>, count: number) =>
    [
      title,
      ...[...rows]
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([name, micros]) => `${percent(micros, total)}  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`),
    ].join('\n');
  return [`${(total / 1e6).toFixed(1)} s sampled`, table('by place (self time)', places, top), table('by function (self time)', functions, Math.ceil(top * 0.6))].join('\n\n');
};

const main = async () => {
  const args = process.argv.slice(2);
  let top = 25;
  const files: string[] = [];
  for (let index = 0; index < args.length; index++) {
    if (args[index] === '--top') top = Number(args[++index]);
    else files.push(args[index]!);
  }
  if (files.length === 0 || !Number.isInteger(top) || top < 1) {
    process.stderr.write('usage: npm run bench:profile -- [--top N] FILE.cpuprofile...\n');
    process.exitCode = 2;
    return;
  }
  for (const file of files) {
    const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
    process.stdout.write(`# ${file}\n${summarize(profile, top)}\n\n`);
  }
};

await main();
