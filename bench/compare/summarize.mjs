#!/usr/bin/env node
// Summarise bench JSON lines (from run.sh) as tables: the median of each
// metric per system, redq's ratio to each peer (BullMQ, bee-queue) and who is
// better by how much; then the ceilings (ceilings.sh) and redq's share of them.
//
//   node summarize.mjs FILE.jsonl [--run RUN]
//
// With --run, only the lines of that run.sh invocation (its "run" field) count;
// without it, every line in FILE does.

import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const file = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--run');
const runIndex = argv.indexOf('--run');
const only = runIndex >= 0 ? argv[runIndex + 1] : undefined;
if (!file) {
  console.error('usage: node summarize.mjs FILE.jsonl [--run RUN]');
  process.exit(2);
}

const lines = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
  .filter((l) => only === undefined || l.run === only);

// Lines of different payload sizes (--pad-bytes) are never medians of one
// another; lines from before the flag had none.
const pads = new Set(lines.map((l) => l.pad_bytes ?? 0));
if (pads.size > 1) {
  console.error(`summarize.mjs: these lines mix payload pads (${[...pads].join(', ')} bytes): summarise one run at a time with --run`);
  process.exit(2);
}

const PEERS = ['bullmq', 'bee-queue'];
// Per case, the metrics worth comparing and which way is better.
const HIGHER = 'higher';
const LOWER = 'lower';
const THROUGHPUT = [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]];
const METRICS = {
  enqueue_bulk: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['redis_mem_bytes_per_job', LOWER], ['client_cpu_s', LOWER]],
  enqueue_serial: [['jobs_per_s', HIGHER], ['p50_ms', LOWER], ['p99_ms', LOWER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  enqueue_window: THROUGHPUT,
  process: THROUGHPUT,
  process_keep: THROUGHPUT,
  process_rate: THROUGHPUT,
  process_keyed: THROUGHPUT,
  latency: [['p50_ms', LOWER], ['p90_ms', LOWER], ['p99_ms', LOWER], ['max_ms', LOWER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(x) {
  if (x === undefined || Number.isNaN(x)) return '–';
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

function cell(values) {
  if (values.length === 0) return '–';
  const m = fmt(median(values));
  if (values.length < 2) return m;
  return `${m} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}

/** How many times better redq is than `peer` in the metric's direction (< 1: worse). */
function advantage(r, p, better) {
  return better === HIGHER ? r / p : p / r;
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)));
  const line = (r) => '| ' + r.map((v, i) => v + ' '.repeat(widths[i] - [...v].length)).join(' | ') + ' |';
  console.log(line(rows[0]));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows.slice(1)) console.log(line(r));
}

const values = (system, c, metric) =>
  lines.filter((l) => l.case === c && l.system === system).map((l) => l[metric]).filter((v) => typeof v === 'number');

const rows = [['case', 'metric', 'better', 'redq median (min–max)', ...PEERS.map((p) => `${p} median (min–max)`), ...PEERS.map((p) => `redq/${p}`), 'verdict (redq against the better peer)']];
const benchCases = [...new Set(lines.filter((l) => l.system !== 'ceiling').map((l) => l.case))];
const ordered = Object.keys(METRICS).filter((c) => benchCases.includes(c)).concat(benchCases.filter((c) => !METRICS[c]));
const medians = {}; // case -> metric -> system -> median
for (const c of ordered) {
  medians[c] = {};
  for (const [metric, better] of METRICS[c] ?? [['jobs_per_s', HIGHER]]) {
    const rv = values('redq', c, metric);
    const peerValues = PEERS.map((p) => values(p, c, metric));
    const r = rv.length ? median(rv) : undefined;
    medians[c][metric] = { redq: r };
    const ratios = [];
    let best; // the peer redq has the least advantage over
    PEERS.forEach((p, i) => {
      const pm = peerValues[i].length ? median(peerValues[i]) : undefined;
      medians[c][metric][p] = pm;
      if (r > 0 && pm > 0) {
        ratios.push((r / pm).toFixed(2));
        const a = advantage(r, pm, better);
        if (best === undefined || a < best.a) best = { p, a };
      } else ratios.push('–');
    });
    let verdict = '–';
    if (best) {
      const word = better === HIGHER ? 'higher' : 'lower';
      verdict = best.a >= 1 ? `redq ${best.a.toFixed(2)}× ${word} than ${best.p}` : `${best.p} ${(1 / best.a).toFixed(2)}× ${word}`;
    }
    rows.push([c, metric, `${better} is better`, cell(rv), ...peerValues.map(cell), ...ratios, verdict]);
  }
}
table(rows);
const count = (system) => lines.filter((l) => l.system === system).length;
console.log(
  `\n${count('redq')} redq, ${count('bullmq')} bullmq and ${count('bee-queue')} bee-queue lines; redq/<peer> is the ratio of medians; the verdict compares redq with whichever peer comes closer to it (or beats it) on that metric.`,
);

// ---- ceilings ---------------------------------------------------------------------
const ceilings = new Map(lines.filter((l) => l.system === 'ceiling').map((l) => [l.case, l]));
if (ceilings.size > 0) {
  const ceiling = (name, field = 'jobs_per_s') => ceilings.get(name)?.[field];
  const share = (value, of) => (value > 0 && of > 0 ? `${((100 * value) / of).toFixed(0)} %` : '–');
  const m = (c, metric, system = 'redq') => medians[c]?.[metric]?.[system];
  const crows = [['ceiling (redis-benchmark, minimal job-shaped scripts)', 'ceiling', 'redq median', 'redq share', 'bee-queue share']];
  const add = (label, name, c, metric, field) => {
    const of = ceiling(name, field);
    crows.push([label, fmt(of), fmt(m(c, metric)), share(m(c, metric), of), share(m(c, metric, 'bee-queue'), of)]);
  };
  add('enqueue script, 100 jobs a call, jobs/s (vs enqueue_bulk)', 'enqueue_script_100', 'enqueue_bulk', 'jobs_per_s');
  add('enqueue script, 1 job a call, 16 deep, jobs/s (vs enqueue_window)', 'enqueue_script_1_p16', 'enqueue_window', 'jobs_per_s');
  add('claim, jobs/s', 'claim', 'process', 'jobs_per_s');
  add('ack, jobs/s', 'ack', 'process', 'jobs_per_s');
  add('claim + ack, jobs/s (vs process)', 'claim_ack', 'process', 'jobs_per_s');
  // Memory: the ceiling is a floor; the share is how much more redq keeps.
  for (const name of ['memory', 'memory_26_byte_ids']) {
    const floor = ceiling(name, 'redis_mem_bytes_per_job');
    if (floor === undefined) continue;
    const label = name === 'memory' ? 'bytes per waiting job, integer ids (vs enqueue_bulk)' : 'bytes per waiting job, 26-byte ids (vs enqueue_bulk)';
    crows.push([label, fmt(floor), fmt(m('enqueue_bulk', 'redis_mem_bytes_per_job')), share(m('enqueue_bulk', 'redis_mem_bytes_per_job'), floor), share(m('enqueue_bulk', 'redis_mem_bytes_per_job', 'bee-queue'), floor)]);
  }
  console.log();
  table(crows);
  console.log(`\nceilings measured once, in the same run${ceilings.get('claim')?.load ? `, load average ${ceilings.get('claim').load}` : ''}; a share is the system's median as a percentage of the ceiling (for memory: of the floor).`);
}
