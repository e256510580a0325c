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
// each other's jobs. The flags, the measuring and the JSON line are
// harness.mjs's, shared with beequeue-bench.mjs.

import { createRequire } from 'node:module';
import { Queue, Worker } from 'bullmq';
import { data, main, Meter, latencyFields, memoryPerJob, performance, sleep, throughput } from './harness.mjs';

const require = createRequire(import.meta.url);
const BULLMQ_VERSION = require('bullmq/package.json').version;
const NOOP = 'bench.noop';
// ---- the cases ----------------------------------------------------------------

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
  out.redis_mem_bytes_per_job = await memoryPerJob(ctx.info, args.n, async () => {
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
  });
  out.batch = args.batch;
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

await main({
  system: 'bullmq',
  version: BULLMQ_VERSION,
  prefix: 'bullmq-bench',
  cases: {
    enqueue_bulk: enqueueBulk,
    enqueue_serial: enqueueSerial,
    enqueue_window: enqueueWindow,
    process: (ctx, out) => processCase(ctx, out, false),
    process_keep: (ctx, out) => processCase(ctx, out, true),
    // The same rate as redq's process_rate: a limiter that does not bind.
    process_rate: (ctx, out) => processCase(ctx, out, false, { max: 100_000, duration: 1000 }),
    latency,
  },
});
