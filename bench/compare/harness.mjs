// What the Node sides of the comparison (bullmq-bench.mjs, beequeue-bench.mjs)
// share with each other and with `redq bench` (console/src/bench/): the flags,
// the measuring rules, and the one-JSON-line main. Each system's file holds
// only its cases, written the way that system's users would write them.

import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import IORedis from 'ioredis';

export { performance, sleep };

export class UsageError extends Error {}

// ---- flags: the same rules as console/src/bench/args.rs ----------------------

export function parseArgs(argv, cases) {
  const known = ['case', 'n', 'c', 'redis', 'queue', 'lat-n', 'lat-gap-ms', 'window', 'batch', 'pad-bytes'];
  const seen = new Map();
  for (let i = 0; i < argv.length; ) {
    const arg = argv[i++];
    if (!arg.startsWith('--')) continue;
    const flag = arg.slice(2);
    const eq = flag.indexOf('=');
    const name = eq >= 0 ? flag.slice(0, eq) : flag;
    if (!known.includes(name)) continue;
    let value;
    if (eq >= 0) value = flag.slice(eq + 1);
    else if (i < argv.length) value = argv[i++];
    else throw new UsageError(`--${name} needs a value`);
    if (!seen.has(name)) seen.set(name, value);
  }
  const number = (name, dflt) => {
    if (!seen.has(name)) return dflt;
    const v = seen.get(name);
    if (!/^\+?\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  if (!seen.has('case')) {
    throw new UsageError(`--case is required: ${cases.slice(0, -1).join(', ')} or ${cases[cases.length - 1]}`);
  }
  const redis = seen.get('redis') ?? process.env.REDIS_URL;
  if (redis === undefined) throw new UsageError('--redis URL is required');
  const args = {
    case: seen.get('case'),
    n: number('n', 50_000),
    c: number('c', 50),
    redis,
    queue: seen.get('queue') ?? 'bench',
    latN: number('lat-n', 1000),
    latGapMs: number('lat-gap-ms', 1),
    window: number('window', 100),
    batch: number('batch', 1000),
    padBytes: number('pad-bytes', 0),
  };
  pad = args.padBytes > 0 ? 'x'.repeat(args.padBytes) : undefined;
  if (args.n === 0 || args.c === 0 || args.window === 0 || args.batch === 0 || args.latN === 0) {
    throw new UsageError('--n, --c, --window, --batch and --lat-n must be at least 1');
  }
  return args;
}

// ---- the payload: the same as console/src/bench/cases.rs `job` ---------------

// Set once by parseArgs from --pad-bytes (one case runs a process).
let pad;

/** Job i's data: `{ i }`, with --pad-bytes P also a `pad` of P x's. */
export const data = (i) => (pad === undefined ? { i } : { i, pad });

// ---- measuring: the same rules as console/src/bench/measure.rs ----------------

const round = (x) => Math.round(x * 1000) / 1000;

/** p50/p90/p99/max (ms) by nearest rank, like the Rust side. */
function percentiles(samples) {
  if (samples.length === 0) return [0, 0, 0, 0];
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(Math.max(Math.ceil(q * samples.length), 1), samples.length) - 1];
  return [at(0.5), at(0.9), at(0.99), samples[samples.length - 1]];
}

export function latencyFields(out, samples) {
  const [p50, p90, p99, max] = percentiles(samples);
  Object.assign(out, { p50_ms: round(p50), p90_ms: round(p90), p99_ms: round(p99), max_ms: round(max) });
}

export function throughput(out, jobs, elapsedMs) {
  const s = elapsedMs / 1000;
  out.elapsed_s = round(s);
  out.jobs_per_s = Math.round(jobs / s);
}

/** used_cpu_user, used_cpu_sys (s) and used_memory (bytes) from INFO cpu + INFO memory. */
export async function serverStats(client) {
  const text = (await client.info('cpu')) + (await client.info('memory'));
  const stats = { cpu_user: 0, cpu_sys: 0, used_memory: 0 };
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const key = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (key === 'used_cpu_user') stats.cpu_user = Number(value);
    else if (key === 'used_cpu_sys') stats.cpu_sys = Number(value);
    else if (key === 'used_memory') stats.used_memory = Number(value);
  }
  return stats;
}

/** This process's and Redis's CPU across a timed section. */
export class Meter {
  static async start(info) {
    const m = new Meter();
    m.info = info;
    m.client = process.cpuUsage();
    m.redis = await serverStats(info);
    return m;
  }
  async finish(jobs, out) {
    const c = process.cpuUsage(this.client);
    out.client_cpu_s = round((c.user + c.system) / 1e6);
    const after = await serverStats(this.info);
    const used = after.cpu_user + after.cpu_sys - (this.redis.cpu_user + this.redis.cpu_sys);
    out.redis_cpu_s = round(used);
    out.redis_cpu_us_per_job = round((used * 1e6) / jobs);
  }
}

/** `used_memory` growth per job across `enqueue()` (enqueue_bulk's memory figure). */
export async function memoryPerJob(info, jobs, enqueue) {
  const before = await serverStats(info);
  await enqueue();
  const after = await serverStats(info);
  return Math.round(Math.max(0, after.used_memory - before.used_memory) / jobs);
}

/**
 * Runs one case and prints its JSON line: `cases` maps a case name to
 * `async (ctx, out) => …`, which fills `out` and registers what to close in
 * `ctx.closers`. Usage errors exit 2, any other failure 1, with the reason on
 * stderr.
 */
export async function main({ system, version, prefix, cases }) {
  const names = Object.keys(cases);
  let args;
  try {
    args = parseArgs(process.argv.slice(2), names);
  } catch (e) {
    process.stderr.write(`${prefix}: ${e.message}\n`);
    process.exit(2);
  }
  try {
    const line = await run(args, system, version, cases);
    process.stdout.write(line + '\n');
    process.exit(0);
  } catch (e) {
    process.stderr.write(`${prefix}: ${e?.message ?? e}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  }
}

async function run(args, system, version, cases) {
  const info = new IORedis(args.redis, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: (times) => (times > 3 ? null : 200),
  });
  info.on('error', () => {}); // surfaced by the commands that fail
  let fail;
  const failed = new Promise((_, reject) => (fail = reject));
  failed.catch(() => {});
  const ctx = {
    args,
    info,
    // Each run uses a fresh queue, so runs never see each other's jobs.
    name: `${args.queue}-${randomBytes(6).toString('hex')}`,
    closers: [],
    failed,
    fail: (err) => fail(err),
    /** `promise`, unless a failure or the timeout comes first. */
    within: (promise, ms, why) =>
      Promise.race([
        promise,
        failed,
        sleep(ms, undefined, { ref: false }).then(() => Promise.reject(new Error(why()))),
      ]),
  };
  const out = {};
  const runCase = cases[args.case];
  if (!runCase) {
    throw new UsageError(`unknown case ${JSON.stringify(args.case)}: accepted are ${Object.keys(cases).join(', ')}`);
  }
  try {
    await info.connect();
    // A case's own, clearer deadlines (10 minutes) come first.
    await ctx.within(runCase(ctx, out), 660_000, () => `${args.case} took over 11 minutes`);
  } finally {
    for (const close of ctx.closers) {
      await Promise.race([close().catch(() => {}), sleep(5000, undefined, { ref: false })]);
    }
    info.disconnect();
  }
  const jobs = args.case === 'latency' ? args.latN : args.n;
  return JSON.stringify({ system, version, case: args.case, jobs, pad_bytes: args.padBytes, ...out });
}
