#!/usr/bin/env bash
# Side-by-side benchmark of redq, BullMQ and bee-queue on ONE private redis-server,
# with what that server can do at most (ceilings.sh) measured in the same run.
#
#   bench/compare/run.sh [--n N] [--c C] [--rounds R] [--cases a,b,...]
#                        [--lat-n K] [--lat-gap-ms G] [--window W] [--batch B]
#                        [--no-build] [--no-pin] [--no-ceilings]
#                        [--script-calls auto|eval|functions]
#                        [--record-format standard|compact|[compact+]detached[:N]] [--redq-threads T]
#                        [--redq-metrics on|off] [--pad-bytes P]
#
# The same settings can come from the environment: N, C, R, CASES, K, G, W, B,
# SCRIPT_CALLS, RECORD_FORMAT, REDQ_THREADS, REDQ_METRICS, PAD_BYTES (flags win);
# --pad-bytes P gives every job of every system (and of the ceilings) a
# payload of {"i": index, "pad": "x…x"} with P x's instead of {"i": index};
# --redq-metrics off turns off the metrics of redq's bench queue (`redq bench
# --metrics off`; BullMQ records none unless asked, bee-queue has none); --redq-threads gives
# redq's runtime T worker threads (`redq bench --threads`; default: one a
# core, as `#[tokio::main]` has); --script-calls is how redq calls its
# scripts (auto, the driver's default: Redis Functions where the server allows
# them; eval: EVALSHA only; functions); --record-format the job record format
# of redq's bench namespace (standard, the default; compact, detached,
# detached:N, compact+detached or compact+detached:N: redq record-format,
# README). Defaults are the benchmark issue's: N=50000 C=50 R=3 K=1000 G=1
# W=100 B=1000, the six cases of the benchmark issue (process_rate and
# process_keyed, what limits cost when they do not bind, run with --cases).
#
# For each case, redq, BullMQ and bee-queue run in turn R times (the first system
# rotating per round), with FLUSHALL before every run; then ceilings.sh runs
# redis-benchmark on minimal job-shaped scripts (--no-ceilings: skip it).
# Every JSON line is appended to results/<date>.jsonl (tagged with this
# invocation's start time and the redq commit); the summary table (medians per
# system, and who is better by how much) goes to stdout.
#
# With 2 or more cores (and taskset), redis-server runs on core 0 and every
# benchmark client on the other cores, as a server and its clients would on
# separate machines; unpinned, the client's threads and Redis share cores at
# the scheduler's whim and runs turn bimodal. --no-pin (PIN=0) turns it off.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

N="${N:-50000}"
C="${C:-50}"
R="${R:-3}"
K="${K:-1000}"
G="${G:-1}"
W="${W:-100}"
B="${B:-1000}"
CASES="${CASES:-enqueue_bulk,enqueue_serial,enqueue_window,process,process_keep,latency}"
BUILD=1
PIN="${PIN:-1}"
CEILINGS="${CEILINGS:-1}"
SCRIPT_CALLS="${SCRIPT_CALLS:-auto}"
RECORD_FORMAT="${RECORD_FORMAT:-standard}"
REDQ_THREADS="${REDQ_THREADS:-}"
REDQ_METRICS="${REDQ_METRICS:-on}"
PAD_BYTES="${PAD_BYTES:-0}"
# Every single bench run is cut off after this many seconds.
RUN_TIMEOUT="${RUN_TIMEOUT:-900}"

usage() { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --n) N="$2"; shift 2 ;;
    --c) C="$2"; shift 2 ;;
    --rounds | --r) R="$2"; shift 2 ;;
    --cases) CASES="$2"; shift 2 ;;
    --lat-n) K="$2"; shift 2 ;;
    --lat-gap-ms) G="$2"; shift 2 ;;
    --window) W="$2"; shift 2 ;;
    --batch) B="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-pin) PIN=0; shift ;;
    --no-ceilings) CEILINGS=0; shift ;;
    --script-calls) SCRIPT_CALLS="$2"; shift 2 ;;
    --record-format) RECORD_FORMAT="$2"; shift 2 ;;
    --redq-threads) REDQ_THREADS="$2"; shift 2 ;;
    --redq-metrics) REDQ_METRICS="$2"; shift 2 ;;
    --pad-bytes) PAD_BYTES="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$SCRIPT_CALLS" in
  auto | eval | functions) ;;
  *) echo "run.sh: --script-calls is auto, eval or functions, got '$SCRIPT_CALLS'" >&2; exit 2 ;;
esac
case "$REDQ_METRICS" in
  on | off) ;;
  *) echo "run.sh: --redq-metrics is on or off, got '$REDQ_METRICS'" >&2; exit 2 ;;
esac
case "$RECORD_FORMAT" in
  standard | compact | detached | detached:[1-9]* | compact+detached | compact+detached:[1-9]*) ;;
  *) echo "run.sh: --record-format is standard, compact, detached, detached:N, compact+detached or compact+detached:N, got '$RECORD_FORMAT'" >&2; exit 2 ;;
esac
for v in N C R K G W B PAD_BYTES; do
  if ! [[ "${!v}" =~ ^[0-9]+$ ]]; then echo "run.sh: $v must be a whole number, got '${!v}'" >&2; exit 2; fi
done
if [ -n "$REDQ_THREADS" ] && ! [[ "$REDQ_THREADS" =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: --redq-threads must be a whole number of at least 1, got '$REDQ_THREADS'" >&2; exit 2
fi
server_pin=()
client_pin=()
pinning="none"
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  server_pin=(taskset -c 0)
  client_pin=(taskset -c "1-$(($(nproc) - 1))")
  pinning="redis-server on core 0, clients on cores 1-$(($(nproc) - 1))"
fi
IFS=',' read -r -a cases <<<"$CASES"
for case in "${cases[@]}"; do
  case "$case" in
    enqueue_bulk | enqueue_serial | enqueue_window | process | process_keep | process_rate | process_keyed | latency) ;;
    *) echo "run.sh: unknown case '$case' (enqueue_bulk, enqueue_serial, enqueue_window, process, process_keep, process_rate, process_keyed, latency)" >&2; exit 2 ;;
  esac
done

for tool in redis-server redis-cli redis-benchmark bc node npm cargo timeout; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done

# ---- the private redis-server ---------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/redq-compare.XXXXXX")"
redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
port=""
for _ in 1 2 3 4 5; do
  candidate="$(free_port)"
  "${server_pin[@]}" redis-server --bind 127.0.0.1 --port "$candidate" --protected-mode yes \
    --dir "$tmp" --save "" --appendonly no --daemonize no \
    --logfile "$tmp/redis.log" &
  redis_pid=$!
  for _ in $(seq 1 50); do
    if redis-cli -h 127.0.0.1 -p "$candidate" ping 2>/dev/null | grep -q PONG; then port="$candidate"; break; fi
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] && break
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
done
if [ -z "$port" ]; then
  echo "run.sh: could not start redis-server on a free loopback port" >&2
  cat "$tmp/redis.log" >&2 2>/dev/null || true
  exit 1
fi
url="redis://127.0.0.1:$port"
rcli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }

# ---- the clients --------------------------------------------------------------
if [ ! -d "$here/node_modules" ]; then
  (cd "$here" && npm ci --no-audit --no-fund) >&2
fi
if [ "$BUILD" = 1 ]; then
  (cd "$repo" && cargo build --release -p redq-console) >&2
fi
# REDQ_BIN runs another build of redq (an earlier commit, for a before/after).
redq="${REDQ_BIN:-$repo/target/release/redq}"
[ -x "$redq" ] || { echo "run.sh: $redq is missing (build it or drop --no-build)" >&2; exit 1; }
redq_commit="${REDQ_COMMIT:-$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)}"

# ---- the runs ---------------------------------------------------------------------
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
mkdir -p "$here/results"
results="$here/results/$(date -u +%F).jsonl"
lines="$tmp/lines.jsonl"
: >"$lines"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "run $started: N=$N C=$C R=$R K=$K G=$G W=$W B=$B pad=$PAD_BYTES redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') at $url; redq $redq_commit; load before: $load_before" >&2

common=(--n "$N" --c "$C" --redis "$url" --queue bench --lat-n "$K" --lat-gap-ms "$G" --window "$W" --batch "$B" --pad-bytes "$PAD_BYTES")
one_run() { # system case round
  local system="$1" case="$2" round="$3" out
  rcli flushall >/dev/null
  local cmd=("$redq" bench --script-calls "$SCRIPT_CALLS" --record-format "$RECORD_FORMAT" --metrics "$REDQ_METRICS")
  if [ -n "$REDQ_THREADS" ]; then cmd+=(--threads "$REDQ_THREADS"); fi
  [ "$system" = bullmq ] && cmd=(node "$here/bullmq-bench.mjs")
  [ "$system" = bee-queue ] && cmd=(node "$here/beequeue-bench.mjs")
  if ! out="$(timeout "$RUN_TIMEOUT" "${client_pin[@]}" "${cmd[@]}" --case "$case" "${common[@]}")"; then
    echo "run.sh: $system $case (round $round) failed or took over ${RUN_TIMEOUT}s" >&2
    exit 1
  fi
  [ -n "$out" ] || { echo "run.sh: $system $case printed nothing" >&2; return 1; }
  printf '%s\n' "$out" >&2
  # Tag the line with this invocation, keeping the bench's own fields as they are.
  node -e 'const [l,run,round,commit]=process.argv.slice(1);console.log(JSON.stringify({run,round:+round,redq_commit:commit,...JSON.parse(l)}))' \
    "$out" "$started" "$round" "$redq_commit" | tee -a "$results" >>"$lines"
}
for case in "${cases[@]}"; do
  for round in $(seq 1 "$R"); do
    # Rotate which system goes first, so none always runs on a warmer machine.
    case $((round % 3)) in
      1) order=(redq bullmq bee-queue) ;;
      2) order=(bullmq bee-queue redq) ;;
      0) order=(bee-queue redq bullmq) ;;
    esac
    for system in "${order[@]}"; do
      # process_keyed is redq's alone: BullMQ's free edition has no per-key
      # limits; bee-queue has neither those nor a rate limiter (process_rate).
      [ "$system" = bullmq ] && [ "$case" = process_keyed ] && continue
      [ "$system" = bee-queue ] && { [ "$case" = process_keyed ] || [ "$case" = process_rate ]; } && continue
      one_run "$system" "$case" "$round"
    done
  done
done
if [ "$CEILINGS" = 1 ]; then
  load_ceilings="$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "ceilings (redis-benchmark), load average $load_ceilings" >&2
  CLIENT_PIN="${client_pin[*]}" "$here/ceilings.sh" --redis "$url" --n "$N" --pad-bytes "$PAD_BYTES" |
    while IFS= read -r out; do
      printf '%s\n' "$out" >&2
      node -e 'const [l,run,commit,load]=process.argv.slice(1);console.log(JSON.stringify({run,round:1,redq_commit:commit,load,...JSON.parse(l)}))' \
        "$out" "$started" "$redq_commit" "$load_ceilings" | tee -a "$results" >>"$lines"
    done
fi
rcli flushall >/dev/null
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "redq vs BullMQ vs bee-queue — $started, N=$N C=$C K=$K G=${G}ms W=$W B=$B, payload pad ${PAD_BYTES} B, medians of $R run(s) each"
echo "machine: $(nproc) cores, load average (1/5/15 min) before: $load_before, after: $load_after; pinning: $pinning"
echo "redq $redq_commit, BullMQ $(node -p 'require(process.argv[1]+"/node_modules/bullmq/package.json").version' "$here"), bee-queue $(node -p 'require(process.argv[1]+"/node_modules/bee-queue/package.json").version' "$here"), redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), node $(node --version)"
echo "all lines: ${results#"$repo"/}"
echo
node "$here/summarize.mjs" "$lines"
