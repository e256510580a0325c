#!/usr/bin/env bash
# What this Redis can do for a job queue at most: redis-benchmark on minimal,
# job-shaped Lua scripts, on the server run.sh started (or any you name).
# Prints one JSON line per figure (system "ceiling"), in the same shape as the
# bench lines, for summarize.mjs.
#
#   bench/compare/ceilings.sh --redis redis://127.0.0.1:PORT [--n N] [--pad-bytes P]
#
# The server is FLUSHALLed before each step: use a private one. N (50000) is
# the jobs of the memory figure; the throughput steps use 10 N requests or jobs.
# The layout is the least a queue can keep: a job is a payload in one hash
# field under an integer id (INCRBY), and its id in a list while waiting or in
# a sorted set (by lease deadline) while leased.
#
#   enqueue_script_100    one script call adding 100 jobs (HSET + RPUSH), 50 clients
#   enqueue_script_1_p16  a one-job call, 50 clients each 16 calls deep (-P 16)
#   claim                 50 clients 16 deep (a worker keeps many claims and acks in flight): LPOP an id, ZADD it to the leased set (deadline from TIME), HGET its payload
#   ack                   the same depth: ZPOPMIN a leased id, HDEL its record (a real ack names the id: ZREM; the same cost)
#   claim_ack             1 / (1/claim + 1/ack): a job claimed and acked, from the two figures
#   memory                used_memory growth per waiting job, N jobs, payload {"i":25000}, integer ids
#   memory_26_byte_ids    the same with ids as long as redq's ULIDs (26 bytes)
#
# --pad-bytes P gives every job's payload a "pad" of P x's, as the bench
# cases' --pad-bytes does ({"i":25000,"pad":"x…x"}).
set -euo pipefail

url="" n=50000 pad_bytes=0
while (($#)); do
  case "$1" in
    --redis) url="$2"; shift 2 ;;
    --n) n="$2"; shift 2 ;;
    --pad-bytes) pad_bytes="$2"; shift 2 ;;
    *) echo "ceilings.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$url" =~ ^redis://([^:/]+):([0-9]+)/?$ ]] || { echo "ceilings.sh: --redis redis://HOST:PORT is required" >&2; exit 2; }
host="${BASH_REMATCH[1]}" port="${BASH_REMATCH[2]}"
[[ "$n" =~ ^[0-9]+$ ]] && ((n >= 100)) || { echo "ceilings.sh: --n must be a whole number of at least 100" >&2; exit 2; }
[[ "$pad_bytes" =~ ^[0-9]+$ ]] || { echo "ceilings.sh: --pad-bytes must be a whole number, got '$pad_bytes'" >&2; exit 2; }
rcli() { redis-cli -h "$host" -p "$port" "$@"; }
# CLIENT_PIN (run.sh sets it) runs redis-benchmark where the bench clients run.
read -r -a pin <<<"${CLIENT_PIN:-}"

# ARGV[1] is the id width: 0 for plain integers, 26 for ids as long as a ULID.
enqueue_sha="$(rcli script load "
local width = tonumber(ARGV[1])
local n = #ARGV - 1
local last = redis.call('INCRBY', KEYS[1], n)
local ids, fields = {}, {}
for i = 1, n do
  local id = last - n + i
  if width > 0 then id = string.format('%0' .. width .. 'd', id) end
  ids[i] = id
  fields[2 * i - 1], fields[2 * i] = id, ARGV[i + 1]
end
redis.call('HSET', KEYS[2], unpack(fields))
redis.call('RPUSH', KEYS[3], unpack(ids))
return last")"
claim_sha="$(rcli script load "
local id = redis.call('LPOP', KEYS[2])
if not id then return false end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], t[1] * 1000 + 30000, id)
return { id, redis.call('HGET', KEYS[1], id) }")"
ack_sha="$(rcli script load "
local id = redis.call('ZPOPMIN', KEYS[2])[1]
if not id then return 0 end
return redis.call('HDEL', KEYS[1], id)")"
keys=('{c}:seq' '{c}:jobs' '{c}:waiting' '{c}:leased')
payload='{"i":25000}'
if ((pad_bytes > 0)); then payload="{\"i\":25000,\"pad\":\"$(printf '%*s' "$pad_bytes" '' | tr ' ' x)\"}"; fi
hundred=()
for _ in $(seq 1 100); do hundred+=("$payload"); done

# requests per second of one redis-benchmark command (its --csv line). The
# second of its eight fields, counted from the end: the first, the command,
# has the payload's commas in it.
rps() { # requests clients pipeline command...
  local requests="$1" clients="$2" pipeline="$3"
  shift 3
  "${pin[@]}" redis-benchmark -h "$host" -p "$port" -n "$requests" -c "$clients" -P "$pipeline" --csv "$@" |
    tail -n 1 | awk -F, '{ print $(NF - 6) }' | tr -d '"'
}
version="$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
line() { # case json-fields
  printf '{"system":"ceiling","version":"%s","case":"%s","pad_bytes":%s,%s}\n' "$version" "$1" "$pad_bytes" "$2"
}

rcli flushall >/dev/null
single="$(rps $((10 * n)) 50 16 evalsha "$enqueue_sha" 3 "${keys[0]}" "${keys[1]}" "${keys[2]}" 0 "$payload")"
line enqueue_script_1_p16 "\"jobs_per_s\":$(printf '%.0f' "$single"),\"clients\":50,\"pipeline\":16,\"jobs_per_call\":1"

rcli flushall >/dev/null
calls=$((n / 10))
bulk="$(rps "$calls" 50 1 evalsha "$enqueue_sha" 3 "${keys[0]}" "${keys[1]}" "${keys[2]}" 0 "${hundred[@]}")"
line enqueue_script_100 "\"jobs_per_s\":$(printf '%.0f' "$(echo "$bulk * 100" | bc -l)"),\"clients\":50,\"pipeline\":1,\"jobs_per_call\":100"

# The 100-job step left 10 N jobs waiting: claim them all, then ack them all.
claim="$(rps $((10 * n)) 50 16 evalsha "$claim_sha" 3 "${keys[1]}" "${keys[2]}" "${keys[3]}")"
line claim "\"jobs_per_s\":$(printf '%.0f' "$claim"),\"clients\":50,\"pipeline\":16"
ack="$(rps $((10 * n)) 50 16 evalsha "$ack_sha" 2 "${keys[1]}" "${keys[3]}")"
line ack "\"jobs_per_s\":$(printf '%.0f' "$ack"),\"clients\":50,\"pipeline\":16"
line claim_ack "\"jobs_per_s\":$(printf '%.0f' "$(echo "1 / (1 / $claim + 1 / $ack)" | bc -l)"),\"from\":\"claim and ack\""
left="$(rcli hlen "${keys[1]}")"
[ "$left" = 0 ] || echo "ceilings.sh: $left jobs were left after claim and ack (expected none)" >&2

used() { rcli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
memory() { # case id-width
  rcli flushall >/dev/null
  local before after waiting
  before="$(used)"
  rps $((n / 100)) 1 1 evalsha "$enqueue_sha" 3 "${keys[0]}" "${keys[1]}" "${keys[2]}" "$2" "${hundred[@]}" >/dev/null
  after="$(used)"
  waiting="$(rcli llen "${keys[2]}")"
  line "$1" "\"jobs\":$waiting,\"id_width\":$2,\"redis_mem_bytes_per_job\":$(((after - before) / waiting))"
}
memory memory 0
memory memory_26_byte_ids 26
rcli flushall >/dev/null
