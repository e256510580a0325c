#!/usr/bin/env node
// The BullMQ side of the redq/BullMQ comparison: the same flags and the same
// JSON line as `redq bench` (console/src/bench/), with each case written the
// way BullMQ users would write it.
//
//   node bullmq-bench.mjs --case CASE --n N --c C --redis URL --queue NAME
//                         [--lat-n K] [--lat-gap-ms G] [--window W] [--batch B]
//
// Unknown flags are ignored, the first occurrence of a flag wins, one JSON line
// goes to stdout, and any failure exits non-zero with the reason on stderr.
// Each run uses a fresh queue (NAME plus a random suffix), so runs never see
// each other's jobs.

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';

const require = createRequire(import.meta.url);
const BULLMQ_VERSION = require('bullmq/package.json').version;
const NOOP = 'bench.noop';
const CASES = ['enqueue_bulk', 'enqueue_serial', 'enqueue_window', 'process', 'process_keep', 'process_rate', 'latency'];

class UsageError extends Error {}

// ---- flags: the same rules as console/src/bench/args.rs ----------------------

function parseArgs(argv) {
  const known = ['case', 'n', 'c', 'redis', 'queue', 'lat-n', 'lat-gap-ms', 'window', 'batch'];
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
    throw new UsageError(`--case is required: ${CASES.slice(0, -1).join(', ')} or latency`);
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
  };
  if (args.n === 0 || args.c === 0 || args.window === 0 || args.batch === 0 || args.latN === 0) {
    throw new UsageError('--n, --c, --window, --batch and --lat-n must be at least 1');
  }
  return args;
}

// ---- measuring: the same rules as console/src/bench/measure.rs ----------------

const round = (x) => Math.round(x * 1000) / 1000;

/** p50/p90/p99/max (ms) by nearest rank, like the Rust side. */
function percentiles(samples) {
  if (samples.length === 0) return [0, 0, 0, 0];
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(Math.max(Math.ceil(q * samples.length), 1), samples.length) - 1];
  return [at(0.5), at(0.9), at(0.99), samples[samples.length - 1]];
}

function latencyFields(out, samples) {
  const [p50, p90, p99, max] = percentiles(samples);
  Object.assign(out, { p50_ms: round(p50), p90_ms: round(p90), p99_ms: round(p99), max_ms: round(max) });
}

function throughput(out, jobs, elapsedMs) {
  const s = elapsedMs / 1000;
  out.elapsed_s = round(s);
  out.jobs_per_s = Math.round(jobs / s);
}

/** used_cpu_user, used_cpu_sys (s) and used_memory (bytes) from INFO cpu + INFO memory. */
async function serverStats(client) {
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
class Meter {
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

// ---- the cases ----------------------------------------------------------------

const data = (i) => ({ i });

function queueFor(ctx, defaultJobOptions) {
  const opts = { connection: { url: ctx.args.redis } };
  if (defaultJobOptions) opts.defaultJobOptions = defaultJobOptions;
  const queue = new Queue(ctx.name, opts);
  ctx.closers.push(() => queue.close());
  return queue;
}

/** A Worker with concurrency C, not yet running; failures reject `ctx.failed`. */
async function workerFor(ctx, processor, autorun, limiter) {
  const worker = new Worker(ctx.name, processor, {
    connection: { url: ctx.args.redis },
    concurrency: ctx.args.c,
    autorun,
    ...(limiter ? { limiter } : {}),
  });
  ctx.closers.unshift(() => worker.close());
  worker.on('failed', (job, err) => ctx.fail(new Error(`job ${job?.id} failed: ${err?.message ?? err}`)));
  worker.on('error', (err) => ctx.fail(err));
  await worker.waitUntilReady();
  return worker;
}

async function enqueueBulk(ctx, out) {
  const { args } = ctx;
  const queue = queueFor(ctx);
  await queue.waitUntilReady();
  const before = await serverStats(ctx.info);
  const meter = await Meter.start(ctx.info);
  const start = performance.now();
  for (let next = 0; next < args.n; ) {
    const end = Math.min(next + args.batch, args.n);
    const jobs = [];
    for (let i = next; i < end; i++) jobs.push({ name: NOOP, data: data(i) });
    await queue.addBulk(jobs);
    next = end;
  }
  throughput(out, args.n, performance.now() - start);
  await meter.finish(args.n, out);
  const after = await serverStats(ctx.info);
  out.batch = args.batch;
  out.redis_mem_bytes_per_job = Math.round(Math.max(0, after.used_memory - before.used_memory) / args.n);
}

async function enqueueSerial(ctx, out) {
  const { args } = ctx;
  const queue = queueFor(ctx);
  await queue.waitUntilReady();
  const meter = await Meter.start(ctx.info);
  const samples = new Array(args.n);
  const start = performance.now();
  for (let i = 0; i < args.n; i++) {
    const t = performance.now();
    await queue.add(NOOP, data(i));
    samples[i] = performance.now() - t;
  }
  throughput(out, args.n, performance.now() - start);
  await meter.finish(args.n, out);
  latencyFields(out, samples);
}

async function enqueueWindow(ctx, out) {
  const { args } = ctx;
  const queue = queueFor(ctx);
  await queue.waitUntilReady();
  const meter = await Meter.start(ctx.info);
  const start = performance.now();
  // W lanes pulling from one counter: at most W adds in flight, a new one
  // starting as soon as any finishes (like buffer_unordered(W) on the Rust side).
  let next = 0;
  const lane = async () => {
    while (next < args.n) {
      const i = next++;
      await queue.add(NOOP, data(i));
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.window, args.n) }, lane));
  throughput(out, args.n, performance.now() - start);
  await meter.finish(args.n, out);
  out.window = args.window;
}

async function processCase(ctx, out, keep, limiter) {
  const { args } = ctx;
  // `process`: no retention (removeOnComplete: true), as users who do not want
  // finished jobs set it; `process_keep`: BullMQ's default, which keeps every
  // completed job.
  const queue = queueFor(ctx, keep ? undefined : { removeOnComplete: true });
  await queue.waitUntilReady();
  for (let next = 0; next < args.n; next += 1000) {
    const jobs = [];
    for (let i = next; i < Math.min(next + 1000, args.n); i++) jobs.push({ name: NOOP, data: data(i) });
    await queue.addBulk(jobs);
  }
  const worker = await workerFor(ctx, async () => {}, false, limiter);
  let done = 0;
  let first = 0;
  let last = 0;
  const finished = new Promise((resolve) => {
    // 'completed' fires once moveToCompleted has returned: the completion is
    // acknowledged in Redis.
    worker.on('completed', () => {
      const now = performance.now();
      done += 1;
      if (done === 1) first = now;
      if (done === args.n) {
        last = now;
        resolve();
      }
    });
  });
  const meter = await Meter.start(ctx.info);
  const running = worker.run();
  running.catch((err) => ctx.fail(err));
  await ctx.within(finished, 600_000, () => `only ${done} of ${args.n} jobs completed in 10 minutes`);
  throughput(out, args.n - 1, Math.max(last - first, 0.001));
  await meter.finish(args.n, out);
  out.concurrency = args.c;
  out.retention = keep ? 'all' : 'none';
  out.limit = limiter ? `queue rate ${limiter.max}/${limiter.duration / 1000}s` : 'none';
}

async function latency(ctx, out) {
  const { args } = ctx;
  const queue = queueFor(ctx);
  await queue.waitUntilReady();
  const sent = new Array(args.latN).fill(undefined);
  const started = new Array(args.latN).fill(undefined);
  let startedCount = 0;
  let allStarted;
  const everyoneStarted = new Promise((resolve) => (allStarted = resolve));
  await workerFor(
    ctx,
    async (job) => {
      const now = performance.now();
      const i = job.data.i;
      if (i >= 0 && i < started.length && started[i] === undefined) {
        started[i] = now;
        if (++startedCount === args.latN) allStarted();
      }
    },
    true,
  );
  // Let the worker reach its blocking wait: the case measures wake-ups.
  await sleep(200);
  const meter = await Meter.start(ctx.info);
  const start = performance.now();
  for (let i = 0; i < args.latN; i++) {
    sent[i] = performance.now();
    await queue.add(NOOP, data(i));
    await sleep(args.latGapMs);
  }
  await Promise.race([everyoneStarted, sleep(60_000), ctx.failed]);
  throughput(out, args.latN, performance.now() - start);
  await meter.finish(args.latN, out);
  const samples = [];
  for (let i = 0; i < args.latN; i++) {
    if (sent[i] !== undefined && started[i] !== undefined) samples.push(started[i] - sent[i]);
  }
  if (samples.length < args.latN) {
    throw new Error(`only ${samples.length} of ${args.latN} latency jobs ran within a minute`);
  }
  latencyFields(out, samples);
  out.concurrency = args.c;
}

// ---- main -----------------------------------------------------------------------

async function run(args) {
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
  try {
    await info.connect();
    switch (args.case) {
      case 'enqueue_bulk': await ctx.within(enqueueBulk(ctx, out), 600_000, () => 'enqueue_bulk took over 10 minutes'); break;
      case 'enqueue_serial': await ctx.within(enqueueSerial(ctx, out), 600_000, () => 'enqueue_serial took over 10 minutes'); break;
      case 'enqueue_window': await ctx.within(enqueueWindow(ctx, out), 600_000, () => 'enqueue_window took over 10 minutes'); break;
      case 'process': await processCase(ctx, out, false); break;
      case 'process_keep': await processCase(ctx, out, true); break;
      // The same rate as redq's process_rate: a limiter that does not bind.
      case 'process_rate': await processCase(ctx, out, false, { max: 100_000, duration: 1000 }); break;
      case 'latency': await ctx.within(latency(ctx, out), 600_000, () => 'latency took over 10 minutes'); break;
      default:
        throw new Error(`unknown case ${JSON.stringify(args.case)}: accepted are ${CASES.join(', ')}`);
    }
  } finally {
    for (const close of ctx.closers) {
      await Promise.race([close().catch(() => {}), sleep(5000, undefined, { ref: false })]);
    }
    info.disconnect();
  }
  const line = {
    system: 'bullmq',
    version: BULLMQ_VERSION,
    case: args.case,
    jobs: args.case === 'latency' ? args.latN : args.n,
    ...out,
  };
  return JSON.stringify(line);
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`bullmq-bench: ${e.message}\n`);
  process.exit(2);
}
try {
  const line = await run(args);
  process.stdout.write(line + '\n');
  process.exit(0);
} catch (e) {
  process.stderr.write(`bullmq-bench: ${e?.message ?? e}\n`);
  process.exit(e instanceof UsageError ? 2 : 1);
}
