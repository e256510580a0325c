#!/usr/bin/env bash
# What a waiting job costs in Redis memory, broken down: `redq bench --case
# enqueue_bulk` (payload {"i": index}, priority 0, no keys: the common case)
# on a private redis-server, then MEMORY USAGE of every key it left, the
# stored record's bytes (HSTRLEN, sampled) split into msgpack meta and
# payload, and the id's bytes. bee-queue's enqueue_bulk the same way, beside it.
#
#   scripts/profile-memory.sh [--redq BIN] [--n N] [--record-format standard|compact]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
redq="$repo/target/release/redq" n=50000 format=standard
while (($#)); do
  case "$1" in
    --redq) redq="$2"; shift 2 ;;
    --n) n="$2"; shift 2 ;;
    --record-format) format="$2"; shift 2 ;;
    *) echo "profile-memory.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
dir="$(mktemp -d "${TMPDIR:-/tmp}/redq-memory.XXXXXX")"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --logfile "$dir/log" &
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
rcli() { redis-cli -p "$port" "$@"; }

breakdown() { # system hash-key list-key
  local system="$1" hash="$2" list="$3"
  python3 - "$port" "$system" "$hash" "$list" "$n" <<'EOF'
import subprocess, sys
port, system, hash_key, list_key, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def cli(*args):
    return subprocess.run(['redis-cli', '--no-raw', '-p', port, *args], capture_output=True, check=True,
                          text=True, errors='replace').stdout
def raw(*args):
    return subprocess.run(['redis-cli', '-p', port, *args], capture_output=True, check=True).stdout
def integer(*args):
    return int(raw(*args).strip() or 0)
keys = raw('--scan').decode().split()
print(f'{system}: {n} waiting jobs; MEMORY USAGE per job of each key (SAMPLES 0 = every element):')
total = 0
for k in sorted(keys):
    usage = integer('memory', 'usage', k, 'samples', '0')
    total += usage
    kind = raw('type', k).decode().strip()
    print(f'  {k:<44} {kind:<7} {usage / n:8.1f} B')
print(f'  {"all keys":<44} {"":<7} {total / n:8.1f} B')
ids = raw('hrandfield', hash_key, '2000').split(b'\n')
ids = [i for i in ids if i]
record = sum(integer('hstrlen', hash_key, i) for i in ids) / len(ids)
id_len = sum(len(i) for i in ids) / len(ids)
# The payload the bench wrote: {"i": index}, for index 0 .. n-1 (redq's JSON has no spaces).
payload = sum(len(f'{{"i":{i}}}') for i in range(n)) / n
print(f'  id {id_len:.1f} B; stored record {record:.1f} B (payload {{"i":index}} averages {payload:.1f} B, '
      f'so the rest of the record is {record - payload:.1f} B)')
hash_usage = integer('memory', 'usage', hash_key, 'samples', '0') / n
print(f'  hash entry overhead (dict entry, sds headers, allocator rounding, buckets): '
      f'{hash_usage - record - id_len:.1f} B of the {hash_usage:.1f} B the hash takes per job')
if list_key:
    list_usage = integer('memory', 'usage', list_key, 'samples', '0') / n
    print(f'  list: {list_usage:.1f} B per job, of which {list_usage - id_len:.1f} B beyond the id itself')
EOF
}

used() { rcli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
rcli flushall >/dev/null
"$redq" bench --case enqueue_bulk --n "$n" --redis "redis://127.0.0.1:$port" --record-format "$format"
jobs="$(rcli --scan --pattern '*:jobs' | head -n 1)"
fifo="$(rcli --scan --pattern '*:fifo' | head -n 1)"
breakdown redq "$jobs" "$fifo"
bq="$repo/bench/compare/beequeue-bench.mjs"
if [ -d "$repo/bench/compare/node_modules/bee-queue" ]; then
  rcli flushall >/dev/null
  node "$bq" --case enqueue_bulk --n "$n" --redis "redis://127.0.0.1:$port"
  breakdown bee-queue "$(rcli --scan --pattern 'bq:*:jobs' | head -n 1)" "$(rcli --scan --pattern 'bq:*:waiting' | head -n 1)"
fi
