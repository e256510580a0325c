#!/usr/bin/env node
// Summarise bench JSON lines (from run.sh) as a table: the median of each
// metric per system, and redq/bullmq with who is better by how much.
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

// Per case, the metrics worth comparing and which way is better.
const HIGHER = 'higher';
const LOWER = 'lower';
const METRICS = {
  enqueue_bulk: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['redis_mem_bytes_per_job', LOWER], ['client_cpu_s', LOWER]],
  enqueue_serial: [['jobs_per_s', HIGHER], ['p50_ms', LOWER], ['p99_ms', LOWER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  enqueue_window: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  process: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  process_keep: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  process_rate: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
  process_keyed: [['jobs_per_s', HIGHER], ['redis_cpu_us_per_job', LOWER], ['client_cpu_s', LOWER]],
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

const rows = [['case', 'metric', 'better', 'redq median (min–max)', 'bullmq median (min–max)', 'redq/bullmq', 'verdict']];
const cases = [...new Set(lines.map((l) => l.case))];
for (const c of Object.keys(METRICS).filter((c) => cases.includes(c)).concat(cases.filter((c) => !METRICS[c]))) {
  const of = (system) => lines.filter((l) => l.case === c && l.system === system);
  const redq = of('redq');
  const bull = of('bullmq');
  for (const [metric, better] of METRICS[c] ?? [['jobs_per_s', HIGHER]]) {
    const rv = redq.map((l) => l[metric]).filter((v) => typeof v === 'number');
    const bv = bull.map((l) => l[metric]).filter((v) => typeof v === 'number');
    let ratio = '–';
    let verdict = '–';
    if (rv.length && bv.length) {
      const r = median(rv);
      const b = median(bv);
      if (r > 0 && b > 0) {
        ratio = `${(r / b).toFixed(2)}`;
        // How many times better the winner is, in the metric's own direction.
        const redqAdvantage = better === HIGHER ? r / b : b / r;
        verdict =
          redqAdvantage >= 1
            ? `redq ${redqAdvantage.toFixed(2)}× ${better === HIGHER ? 'higher' : 'lower'}`
            : `bullmq ${(1 / redqAdvantage).toFixed(2)}× ${better === HIGHER ? 'higher' : 'lower'}`;
      }
    }
    rows.push([c, metric, `${better} is better`, cell(rv), cell(bv), ratio, verdict]);
  }
}

const runs = (system) => {
  const per = lines.filter((l) => l.system === system).length;
  return per;
};
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)));
const line = (r) => '| ' + r.map((v, i) => v + ' '.repeat(widths[i] - [...v].length)).join(' | ') + ' |';
console.log(line(rows[0]));
console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
for (const r of rows.slice(1)) console.log(line(r));
console.log(`\n${runs('redq')} redq and ${runs('bullmq')} bullmq lines; redq/bullmq is the ratio of medians; verdict says which system wins that metric and by how much.`);
