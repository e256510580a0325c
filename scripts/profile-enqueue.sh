#!/usr/bin/env bash
# Where a single enqueue's Redis time goes: instructions per script call
# (callgrind on redis-server, so the machine's load does not move the figures)
# for the whole enqueue script and for prefixes of it, next to bee-queue's
# addJob; and INFO commandstats for one serial enqueue run of each system.
#
#   scripts/profile-enqueue.sh [--redq BIN] [--root DIR] [--calls N] [--jobs-per-call J] [--out DIR]
#
# --redq: the redq binary (target/release/redq); --root: the checkout whose lua/
# that binary embeds (default: this one; pass a `git archive` of the commit
# under test while lua/ here is being edited), read only for the lean prelude
# below (the other variants cut the script as the binary itself loaded it,
# captured from MONITOR); --calls: script calls measured
# per variant (2000); --jobs-per-call: jobs in each enqueue call (1; with
# more, the arguments come from `redq bench --case enqueue_bulk --batch J`,
# and the figures are also given per job); --out: where the callgrind files and the report go (a
# temp directory, printed). Needs redis-server, redis-cli, redis-benchmark,
# valgrind, python3 and, for the commandstats part, node with bench/compare's
# node_modules.
#
# One private redis-server runs under callgrind with instrumentation off; each
# variant is SCRIPT LOADed, run N times by redis-benchmark (10 clients, 16
# deep) with instrumentation on, and dumped. The arguments are those redq itself
# sent for one job (captured with MONITOR from `redq bench --n 1`), with the
# job id's last 12 characters made random per call (__rand_int__), so every
# call creates a job as the bench does. Both of enqueue.lua's job layouts are
# known: 16 fields per job after 4 or 6 head arguments (binaries up to
# b8dc27c), or, after 6, id, payload, a count k and k (code, value) option
# pairs; another layout stops the script, naming what it found. The prefixes
# are cut from the enqueue script redq loaded (SCRIPT LOAD in the MONITOR
# output: the driver's own composition, its lazy modules and per-script key
# list), at the first of each cut's statements its own text has.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
redq="$repo/target/release/redq" root="$repo" calls=2000 per_call=1 out=""
while (($#)); do
  case "$1" in
    --redq) redq="$2"; shift 2 ;;
    --root) root="$2"; shift 2 ;;
    --calls) calls="$2"; shift 2 ;;
    --jobs-per-call) per_call="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "profile-enqueue.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="${out:-$(mktemp -d "${TMPDIR:-/tmp}/redq-profile.XXXXXX")}"
mkdir -p "$out"
load_script() { # port script-file: its sha, or stop when Redis refuses it
  local sha
  sha="$(redis-cli -p "$1" -x script load <"$2")"
  [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || { echo "profile-enqueue.sh: Redis did not load $2: $sha" >&2; exit 1; }
  printf '%s' "$sha"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

servers=()
cleanup() { for p in "${servers[@]}"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done; }
trap cleanup EXIT
start_server() { # port [valgrind args...]
  local port="$1"
  shift
  mkdir -p "$out/redis-$port"
  "$@" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$out/redis-$port" \
    --logfile "$out/redis-$port/log" &
  servers+=("$port")
  for _ in $(seq 1 300); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  echo "profile-enqueue.sh: redis-server on $port did not start" >&2
  exit 1
}

# ---- 1. redq's own arguments for one job ----------------------------------------
plain="$(free_port)"
start_server "$plain"
redis-cli -p "$plain" monitor >"$out/monitor.txt" &
monitor=$!
sleep 0.3
# By EVALSHA, whose SCRIPT LOAD gives the script's text (the driver's
# default calls it as a function); a binary older than the flag ignores it.
if [ "$per_call" = 1 ]; then
  "$redq" bench --case enqueue_serial --n 1 --script-calls eval --redis "redis://127.0.0.1:$plain" >/dev/null
else
  "$redq" bench --case enqueue_bulk --batch "$per_call" --n "$per_call" --script-calls eval --redis "redis://127.0.0.1:$plain" >/dev/null
fi
sleep 0.3
kill "$monitor"
wait "$monitor" 2>/dev/null || true
# The EVALSHA that enqueued the job, as one argument per line (NUL-separated),
# the keys and arguments a common-case enqueue needs (lean-args), and the
# script it ran, as redq loaded it (enqueue.lua).
python3 - "$out/monitor.txt" "$out/enqueue-args" "$per_call" "$out/lean-args" "$out/enqueue.lua" <<'EOF'
import hashlib
import re, sys
text = open(sys.argv[1], encoding='latin-1').read().splitlines()
jobs = int(sys.argv[3])
def unquote(s):
    return re.sub(r'\\(x[0-9a-f]{2}|.)', lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == 'x' else
                  {'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'b': '\b'}.get(m.group(1), m.group(1)), s)
def job_starts(argv):
    """Where each job's entries start, and how many head arguments there are; None in a layout not known."""
    for head in (4, 6):  # 16 fields per job (a binary older than the gate arguments sent 4 head arguments)
        if len(argv) == head + 16 * jobs:
            return [head + 16 * j for j in range(jobs)], head
    starts, at = [], 6  # id, payload, option count k, then k (code, value) pairs
    for _ in range(jobs):
        if at + 3 > len(argv) or not argv[at + 2].isdigit():
            return None
        starts.append(at)
        at += 3 + 2 * int(argv[at + 2])
    return (starts, 6) if at == len(argv) else None
seen, loaded = 0, {}
for line in text:
    args = [unquote(a) for a in re.findall(r'"((?:\\.|[^"\\])*)"', line)]
    if args[:2] and args[0].upper() == 'SCRIPT' and args[1].upper() == 'LOAD':
        body = args[2].encode('latin-1')
        loaded[hashlib.sha1(body).hexdigest()] = body
    if not (args and args[0].upper() == 'EVALSHA' and len(args) > 7 + int(args[2])):
        continue
    nkeys = int(args[2])
    keys, argv = args[3:3 + nkeys], args[3 + nkeys:]
    if argv[3] != str(jobs) or not keys[0].endswith(':jobs'):
        continue
    seen += 1
    found = job_starts(argv)
    if found is None:
        continue
    starts, head = found
    if args[1] not in loaded:
        sys.exit('the enqueue script redq ran is not among the scripts it loaded in the MONITOR output')
    open(sys.argv[5], 'wb').write(loaded[args[1]])
    for at in starts:   # each job id (a ULID): random per call
        argv[at] = argv[at][:-12] + '__rand_int__'
    open(sys.argv[2], 'w', encoding='latin-1').write(''.join(a + '\0' for a in [str(nkeys)] + keys + argv))
    # The lean call: jobs, fifo, seq, queues, paused, parked, events; the head, then the first job's
    # id and payload (and its option count 0, in the pairs layout).
    queue = argv[0]
    by_name = {k.split('}:', 1)[-1]: k for k in keys}
    lean = [by_name[n] for n in ('jobs', f'q:{queue}:fifo', 'seq', 'queues', 'paused', f'q:{queue}:parked', 'events')]
    job = argv[head:head + 2] + (['0'] if len(argv) != head + 16 * jobs else [])
    open(sys.argv[4], 'w', encoding='latin-1').write(''.join(a + '\0' for a in [str(len(lean))] + lean + argv[:head] + job))
    break
else:
    sys.exit(f'no enqueue EVALSHA of {jobs} job(s) in a known layout in the MONITOR output ({seen} such call(s) '
             'seen, in none of them): neither 16 fields per job after 4 or 6 head arguments, nor 6 head arguments and per job id, '
             'payload, option count and (code, value) pairs')
EOF
mapfile -d '' -t call_args <"$out/enqueue-args"
echo "redq's enqueue: ${call_args[0]} keys, $((${#call_args[@]} - 1 - call_args[0])) arguments" >&2

# ---- 2. instructions per call, under callgrind ----------------------------------
cg="$(free_port)"
start_server "$cg" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.%p.base"
cg_pid="$(redis-cli -p "$cg" info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p')"

measure() { # name script-file [keys-and-args...]: instructions per call
  local name="$1" file="$2" sha
  shift 2
  sha="$(load_script "$cg" "$file")"
  callgrind_control -i on "$cg_pid" >/dev/null
  redis-benchmark -p "$cg" -n "$calls" -c 10 -P 16 -r 1000000000 evalsha "$sha" "$@" >/dev/null
  callgrind_control -i off "$cg_pid" >/dev/null
  callgrind_control -d "$name" "$cg_pid" >/dev/null
  local dump
  dump="$(ls -t "$out"/callgrind.*.base.* | head -n 1)"
  mv "$dump" "$out/$name.callgrind"
  local total
  # (callgrind writes "summary: 0" for a dump taken with instrumentation off; "totals:" is the count.)
  total="$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out/$name.callgrind" | head -n 1)"
  printf '%-28s %10d instructions per call, %10d per job\n' "$name" $((total / calls)) $((total / calls / per_call)) |
    tee -a "$out/instructions.txt"
}
: >"$out/instructions.txt"
compose() { python3 "$here/profile-compose.py" enqueue --root "$root" "$@"; }
# The captured enqueue.lua, stopped before the first of the statements
# (name|statement|statement...) that a line of the script's own text starts
# with (after its indent; its modules come before it), returning {}.
cut_captured() {
  python3 - "$out/enqueue.lua" "$1" <<'EOF'
import sys
text = open(sys.argv[1], encoding='latin-1').read().split('\n')
name, *statements = sys.argv[2].split('|')
own = next((i for i, line in enumerate(text) if line.startswith('-- enqueue.lua:')), None)
if own is None:
    sys.exit('profile-enqueue.sh: the captured enqueue script has no line "-- enqueue.lua:" where its own text starts')
for statement in statements:
    at = next((i for i in range(own, len(text)) if text[i].strip().startswith(statement)), None)
    if at is not None:
        sys.stdout.write('\n'.join(text[:at]) + '\nreturn {}\n')
        break
else:
    sys.exit(f'profile-enqueue.sh: the captured enqueue script has none of the statements of cut {name}: {statements}')
EOF
}
echo 'return {}' >"$out/empty.lua"
measure empty_no_args "$out/empty.lua" 0
measure empty_same_args "$out/empty.lua" "${call_args[@]}"
# Prefixes of enqueue.lua: each stops before the first statement named that
# its text has (an older text's first, then the newer one's) and returns {}.
cuts=(
  "prelude|local FIELDS = 16|local limit = uint(ARGV[3]"
  "argv_checks|-- Validation is complete"
  "seq_and_queues|-- Forget a few expired|-- Forget expired TTL-mode"
  "dedup_expiry|-- Jobs created earlier"
  "resend_hmget|-- Counted, not measured with #|local reply = {}"
  "record_build|-- Records first"
  "hset_rpush|-- A worker parked"
  "hand_off|if wake then redis.call('PUBLISH'"
  "publish|-- One event per call"
)
for cut in "${cuts[@]}"; do
  cut_captured "$cut" >"$out/cut-${cut%%|*}.lua"
  measure "upto_${cut%%|*}" "$out/cut-${cut%%|*}.lua" "${call_args[@]}"
done
measure enqueue_full "$out/enqueue.lua" "${call_args[@]}"
# What a leaner call would cost: the prelude of only the modules a common-case
# enqueue uses, and an empty script given only the keys and arguments that case
# needs (jobs, fifo, seq, queues, paused, parked, events; the head arguments,
# id, payload, and the option count in the pairs layout). The prelude is
# profile-compose.py's (every module eager, keys by the whole queue key list):
# measured only while that list is as long as what redq sent.
lean_modules=check,clock,keys,job_record,events
[ -f "$root/lua/lib/job_new.lua" ] && lean_modules+=,job_new
prelude_at="local FIELDS = 16"
grep -q "^$prelude_at" "$root/lua/enqueue.lua" || prelude_at="local limit = uint(ARGV[3]"
compose --modules "$lean_modules" --cut-before "$prelude_at" >"$out/lean-prelude.lua"
composed_keys="$(grep -o 'KEYS\[[0-9]*\]' "$out/lean-prelude.lua" | tr -dc '0-9\n' | sort -n | tail -n 1)"
if [ "$composed_keys" = "${call_args[0]}" ]; then
  measure lean_prelude "$out/lean-prelude.lua" "${call_args[@]}"
else
  echo "lean_prelude: not measured: profile-compose.py maps $composed_keys keys, redq sent ${call_args[0]} (the driver composes each script's own list)" |
    tee -a "$out/instructions.txt"
fi
mapfile -d '' -t lean_args <"$out/lean-args"
measure empty_lean_args "$out/empty.lua" "${lean_args[@]}"
# bee-queue's addJob with the arguments it sends (an empty id: INCR makes one).
bq="$repo/bench/compare/node_modules/bee-queue/lib/lua/addJob.lua"
if [ "$per_call" = 1 ] && [ -f "$bq" ]; then
  measure beequeue_addjob "$bq" 3 bq:p:id bq:p:jobs bq:p:waiting '' \
    '{"data":{"i":25000},"options":{"timestamp":1764626400000,"stacktraces":[]},"status":"created","progress":0}'
fi
redis-cli -p "$cg" shutdown nosave >/dev/null 2>&1 || true
if [ "$per_call" != 1 ]; then
  # The timing and the per-system commandstats below are about single enqueues.
  echo "callgrind files and the report: $out" >&2
  exit 0
fi

# ---- 3. the same variants timed on the plain server (wall clock: load moves it) ----
# usec_per_call of EVALSHA in INFO commandstats: Redis's time inside the call,
# without reading, parsing and replying; and a one-client round trip (p50, ms)
# from redis-benchmark (its p50 column, counted from the end: the command's
# own text may hold commas), the floor under enqueue_serial's p50.
: >"$out/timing.txt"
timed() { # name script-file [keys-and-args...]
  local name="$1" file="$2" sha usec p50
  shift 2
  sha="$(load_script "$plain" "$file")"
  redis-cli -p "$plain" config resetstat >/dev/null
  redis-benchmark -p "$plain" -n $((calls * 5)) -c 10 -P 16 -r 1000000000 evalsha "$sha" "$@" >/dev/null
  usec="$(redis-cli -p "$plain" info commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')"
  p50="$(redis-benchmark -p "$plain" -n "$calls" -c 1 -P 1 -r 1000000000 --csv evalsha "$sha" "$@" | tail -n 1 | awk -F, '{ print $(NF - 3) }' | tr -d '"')"
  printf '%-22s %8s us inside EVALSHA  %8s ms round trip p50 (one client)  load %s\n' "$name" "$usec" "$p50" \
    "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/timing.txt"
}
timed empty_no_args "$out/empty.lua" 0
timed empty_same_args "$out/empty.lua" "${call_args[@]}"
for cut in "${cuts[@]}"; do
  timed "upto_${cut%%|*}" "$out/cut-${cut%%|*}.lua" "${call_args[@]}"
done
timed enqueue_full "$out/enqueue.lua" "${call_args[@]}"
[ -f "$bq" ] && timed beequeue_addjob "$bq" 3 bq:p:id bq:p:jobs bq:p:waiting '' \
  '{"data":{"i":25000},"options":{"timestamp":1764626400000,"stacktraces":[]},"status":"created","progress":0}'

# ---- 4. what each system sends per serial enqueue (INFO commandstats) -------------
: >"$out/commandstats.txt"
per_job() { # system command...
  local system="$1"
  shift
  redis-cli -p "$plain" flushall >/dev/null
  redis-cli -p "$plain" config resetstat >/dev/null
  "$@" --case enqueue_serial --n "$calls" --redis "redis://127.0.0.1:$plain" >/dev/null
  redis-cli -p "$plain" info commandstats | tr -d '\r' |
    awk -F'[:=,]' -v sys="$system" -v n="$calls" '/^cmdstat_/ {
      printf "%-10s %-22s %6.2f calls per job  %7.2f us per call\n", sys, substr($1, 9), $3 / n, $7 }' |
    grep -v -E ' (info|config|ping|select|client|hello|script|cluster) ' | tee -a "$out/commandstats.txt"
}
per_job redq "$redq" bench
compare="$repo/bench/compare"
if [ -d "$compare/node_modules/bee-queue" ]; then
  per_job bee-queue node "$compare/beequeue-bench.mjs"
  per_job bullmq node "$compare/bullmq-bench.mjs"
fi
echo "callgrind files and the report: $out" >&2
