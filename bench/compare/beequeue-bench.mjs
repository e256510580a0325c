#!/usr/bin/env node
// The bee-queue side of the comparison: the same flags and the same JSON line
// as `redq bench` and bullmq-bench.mjs (harness.mjs), with each case written
// the way bee-queue's README says to write it for speed.
//
//   node beequeue-bench.mjs --case CASE --n N --c C --redis URL --queue NAME
//                           [--lat-n K] [--lat-gap-ms G] [--window W] [--batch B]
//
// Settings: every queue turns off what the case does not use, as bee-queue's
// README advises ("Disable if …"): getEvents (no Pub/Sub connection),
// storeJobs (no client-side table of jobs) and, on workers, sendEvents (no
// PUBLISH per finished job; redq publishes nothing per completion either).
// Producers are `isWorker: false`. `process` removes each job on success
// (removeOnSuccess, like BullMQ's removeOnComplete); `process_keep` keeps it
// (bee-queue's default: the record stays, its id joins the succeeded set).
// bee-queue has no rate limiter and no per-key limits, so it has no
// process_rate or process_keyed.

import { createRequire } from 'node:module';
import BeeQueue from 'bee-queue';
import { data, main, Meter, latencyFields, memoryPerJob, performance, sleep, throughput } from './harness.mjs';

const require = createRequire(import.meta.url);
const BEE_QUEUE_VERSION = require('bee-queue/package.json').version;

/** A bee-queue Queue on the run's queue name, closed when the run ends. */
async function queueFor(ctx, settings) {
  const queue = new BeeQueue(ctx.name, {
    redis: { url: ctx.args.redis },
    getEvents: false,
    storeJobs: false,
    sendEvents: false,
    ...settings,
  });
  ctx.closers.unshift(() => queue.close());
  queue.on('error', (err) => ctx.fail(err));
  await queue.ready();
  return queue;
}

const producer = (ctx) => queueFor(ctx, { isWorker: false });

/** Saves jobs `from..to` in one pipelined request (Queue#saveAll); throws on any failure. */
async function saveRange(queue, from, to) {
  const jobs = [];
  for (let i = from; i < to; i++) jobs.push(queue.createJob(data(i)));
  const errors = await queue.saveAll(jobs);
  if (errors.size > 0) throw new Error(`saveAll failed for ${errors.size} jobs: ${[...errors.values()][0]?.message}`);
}

async function enqueueBulk(ctx, out) {
  const { args } = ctx;
  const queue = await producer(ctx);
  out.redis_mem_bytes_per_job = await memoryPerJob(ctx.info, args.n, async () => {
    const meter = await Meter.start(ctx.info);
    const start = performance.now();
    for (let next = 0; next < args.n; next = Math.min(next + args.batch, args.n)) {
      await saveRange(queue, next, Math.min(next + args.batch, args.n));
    }
    throughput(out, args.n, performance.now() - start);
    await meter.finish(args.n, out);
  });
  out.batch = args.batch;
}

async function enqueueSerial(ctx, out) {
  const { args } = ctx;
  const queue = await producer(ctx);
  const meter = await Meter.start(ctx.info);
  const samples = new Array(args.n);
  const start = performance.now();
  for (let i = 0; i < args.n; i++) {
    const t = performance.now();
    await queue.createJob(data(i)).save();
    samples[i] = performance.now() - t;
  }
  throughput(out, args.n, performance.now() - start);
  await meter.finish(args.n, out);
  latencyFields(out, samples);
}

async function enqueueWindow(ctx, out) {
  const { args } = ctx;
  const queue = await producer(ctx);
  const meter = await Meter.start(ctx.info);
  const start = performance.now();
  // W lanes pulling from one counter: at most W saves in flight (like
  // buffer_unordered(W) on the Rust side and the lanes of bullmq-bench.mjs).
  let next = 0;
  const lane = async () => {
    while (next < args.n) {
      const i = next++;
      await queue.createJob(data(i)).save();
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.window, args.n) }, lane));
  throughput(out, args.n, performance.now() - start);
  await meter.finish(args.n, out);
  out.window = args.window;
}

async function processCase(ctx, out, keep) {
  const { args } = ctx;
  const adder = await producer(ctx);
  for (let next = 0; next < args.n; next += 1000) await saveRange(adder, next, Math.min(next + 1000, args.n));
  const worker = await queueFor(ctx, { removeOnSuccess: !keep });
  let done = 0;
  let first = 0;
  let last = 0;
  const finished = new Promise((resolve) => {
    // 'succeeded' is emitted once the job's finishing MULTI has returned: the
    // completion is acknowledged in Redis.
    worker.on('succeeded', () => {
      const now = performance.now();
      done += 1;
      if (done === 1) first = now;
      if (done === args.n) {
        last = now;
        resolve();
      }
    });
  });
  worker.on('failed', (job, err) => ctx.fail(new Error(`job ${job?.id} failed: ${err?.message ?? err}`)));
  const meter = await Meter.start(ctx.info);
  worker.process(args.c, async () => {});
  await ctx.within(finished, 600_000, () => `only ${done} of ${args.n} jobs completed in 10 minutes`);
  throughput(out, args.n - 1, Math.max(last - first, 0.001));
  await meter.finish(args.n, out);
  out.concurrency = args.c;
  out.retention = keep ? 'all' : 'none';
}

async function latency(ctx, out) {
  const { args } = ctx;
  const queue = await producer(ctx);
  const sent = new Array(args.latN).fill(undefined);
  const started = new Array(args.latN).fill(undefined);
  let startedCount = 0;
  let allStarted;
  const everyoneStarted = new Promise((resolve) => (allStarted = resolve));
  const worker = await queueFor(ctx, { removeOnSuccess: true });
  worker.on('failed', (job, err) => ctx.fail(new Error(`job ${job?.id} failed: ${err?.message ?? err}`)));
  worker.process(args.c, async (job) => {
    const now = performance.now();
    const i = job.data.i;
    if (i >= 0 && i < started.length && started[i] === undefined) {
      started[i] = now;
      if (++startedCount === args.latN) allStarted();
    }
  });
  // Let the worker reach its blocking wait (BRPOPLPUSH): the case measures wake-ups.
  await sleep(200);
  const meter = await Meter.start(ctx.info);
  const start = performance.now();
  for (let i = 0; i < args.latN; i++) {
    sent[i] = performance.now();
    await queue.createJob(data(i)).save();
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

await main({
  system: 'bee-queue',
  version: BEE_QUEUE_VERSION,
  prefix: 'beequeue-bench',
  cases: {
    enqueue_bulk: enqueueBulk,
    enqueue_serial: enqueueSerial,
    enqueue_window: enqueueWindow,
    process: (ctx, out) => processCase(ctx, out, false),
    process_keep: (ctx, out) => processCase(ctx, out, true),
    latency,
  },
});
