#!/usr/bin/env bash
# One queue over 1, 2 and 3 shards on a private local Redis Cluster (3
# primaries, no replicas, loopback only), with `redq bench --shards S`.
#
#   bench/compare/cluster-scaling.sh [--n N] [--c C] [--rounds R] [--shards "1 2 3"]
#                                    [--cases process,enqueue_bulk] [--workers per-shard|one]
#                                    [--pin] [--redq BIN]
#
# For each round, case and shard count (in that order, so every shard count
# sees the machine at about the same load): FLUSHALL on every primary, one
# bench run, and each primary's CPU (INFO cpu, user + sys) before and after.
# Prints each run's JSON line with the Redis CPU seconds of every primary
# added (redis_cpu_s_by_primary, in port order) and the load average, then a
# table of medians per case and shard count. Shards land on primaries by
# their namespace's slot (ShardedQueue's placement; --shards 1 is one
# namespace on whichever primary owns its slot), so the busiest primaries
# are listed by CPU, not by name.
#
# --workers: who processes in `process` (redq bench --workers): per-shard
# (the default) runs one Worker per shard with C split evenly, as worker
# processes on separate machines would; one runs a single Worker over the
# whole ShardedQueue with all C slots, as one service process does.
#
# --pin: every primary on core 0 and the bench client on the other cores
# (as run.sh pins a single server); without it the scheduler places
# everything. --redq: the binary to run (default: build target/release/redq).
#
# On one machine all primaries share its cores, so this measures how well the
# shards spread work, not what separate machines would give.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

n=30000 c=48 rounds=3 shard_counts="1 2 3" cases=process,enqueue_bulk pin=0 redq="" workers=per-shard
while (($#)); do
    case $1 in
        --n) n=$2; shift 2 ;; --c) c=$2; shift 2 ;; --rounds) rounds=$2; shift 2 ;;
        --shards) shard_counts=${2//,/ }; shift 2 ;; --cases) cases=$2; shift 2 ;;
        --case) cases=$2; shift 2 ;; --pin) pin=1; shift ;; --redq) redq=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        *) echo "cluster-scaling.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
primaries=3
case $workers in
    per-shard | one) ;;
    *) echo "cluster-scaling.sh: --workers is per-shard or one, got '$workers'" >&2; exit 2 ;;
esac
for s in $shard_counts; do
    [[ $s =~ ^[1-9][0-9]*$ ]] || { echo "cluster-scaling.sh: a shard count must be a whole number, got '$s'" >&2; exit 2; }
done
server_pin=() client_pin=() pinning="none"
if [ "$pin" = 1 ]; then
    if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
        echo "cluster-scaling.sh: --pin needs 2 or more cores and taskset" >&2
        exit 2
    fi
    server_pin=(taskset -c 0)
    client_pin=(taskset -c "1-$(($(nproc) - 1))")
    pinning="every primary on core 0, the client on cores 1-$(($(nproc) - 1))"
fi

dir=$(mktemp -d)
ports=()
cleanup() {
    for port in "${ports[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
}
trap cleanup EXIT

# A free port whose cluster bus port (port + 10000) is a port too.
free_port() {
    python3 -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    if port + 10000 <= 65535:
        print(port); break'
}
for ((i = 0; i < primaries; i++)); do
    port=$(free_port)
    ports+=("$port")
    mkdir -p "$dir/$port"
    (cd "$dir/$port" && "${server_pin[@]}" redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file nodes.conf --save "" --appendonly no --daemonize yes \
        --logfile "$dir/$port/redis.log" >/dev/null)
done
for port in "${ports[@]}"; do
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
# Every primary must see the cluster whole before a client asks any of them
# for its slots (under load that takes seconds).
for port in "${ports[@]}"; do
    for _ in $(seq 300); do
        redis-cli -p "$port" cluster info | grep -q cluster_state:ok && break
        sleep 0.1
    done
done

if [ -z "$redq" ]; then
    cargo build --release -q -p redq-console
    redq=target/release/redq
fi
url="redis-cluster://127.0.0.1:${ports[0]}?$(printf 'node=127.0.0.1:%s&' "${ports[@]:1}")"
url=${url%&}

# Seconds of CPU (user + sys) each primary has used, space-separated, in port order.
primary_cpu() {
    for port in "${ports[@]}"; do
        redis-cli -p "$port" info cpu | tr -d '\r' |
            awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%s ", s }'
    done
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "cluster-scaling: N=$n C=$c, workers $workers, $rounds rounds, shards $shard_counts, cases $cases, $primaries primaries on $(nproc) cores; pinning: $pinning; load before: $load_before" >&2
lines="$dir/lines.jsonl"
: >"$lines"
IFS=',' read -r -a case_list <<<"$cases"
for ((r = 1; r <= rounds; r++)); do
    for case in "${case_list[@]}"; do
        for s in $shard_counts; do
            for port in "${ports[@]}"; do redis-cli -p "$port" flushall >/dev/null; done
            before=$(primary_cpu)
            line=$("${client_pin[@]}" "$redq" bench --case "$case" --n "$n" --c "$c" --shards "$s" --workers "$workers" --redis "$url" --queue scaling)
            after=$(primary_cpu)
            line=$(python3 -c '
import json, sys
line = json.loads(sys.argv[1])
before, after = map(float, sys.argv[2].split()), map(float, sys.argv[3].split())
line["redis_cpu_s_by_primary"] = [round(a - b, 3) for a, b in zip(after, before)]
line["round"], line["load"] = int(sys.argv[4]), sys.argv[5]
print(json.dumps(line))' "$line" "$before" "$after" "$r" "$(cut -d' ' -f1 /proc/loadavg)")
            echo "$line"
            echo "$line" >>"$lines"
        done
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "$(date -u +%FT%TZ): N=$n C=$c, workers $workers, medians of $rounds; pinning: $pinning; load (1/5/15 min) before: $load_before, after: $load_after"
python3 - "$lines" <<'EOF'
import json, statistics, sys
runs = {}
for text in open(sys.argv[1]):
    line = json.loads(text)
    runs.setdefault((line["case"], line.get("shards", 1)), []).append(line)
print("| case | shards | jobs/s median (min–max) | × 1 shard | Redis CPU s by primary, busiest first "
      "| Redis CPU µs/job, all primaries | client CPU s | busiest primary, share of a core | client, cores |")
print("|---|---|---|---|---|---|---|---|---|")
med = statistics.median
def busiest(lines):
    return med(max(l["redis_cpu_s_by_primary"]) for l in lines)
for (case, shards), lines in sorted(runs.items()):
    rates = [l["jobs_per_s"] for l in lines]
    base = med(l["jobs_per_s"] for l in runs.get((case, 1), lines))
    by_primary = [med(sorted(l["redis_cpu_s_by_primary"], reverse=True)[k] for l in lines)
                  for k in range(len(lines[0]["redis_cpu_s_by_primary"]))]
    per_job = med(sum(l["redis_cpu_s_by_primary"]) * 1e6 / l["jobs"] for l in lines)
    client = med(l.get("client_cpu_s", float("nan")) for l in lines)
    elapsed = med(l["elapsed_s"] for l in lines)
    # A process run first enqueues its N jobs (untimed, in batches of 1000,
    # as enqueue_bulk does): its CPU while processing is the rest.
    bulk = runs.get(("enqueue_bulk", shards))
    if case == "process" and bulk:
        redis_share = (busiest(lines) - busiest(bulk)) / elapsed
        client_cores = (client - med(l["client_cpu_s"] for l in bulk)) / elapsed
    else:
        redis_share, client_cores = busiest(lines) / elapsed, client / elapsed
    print(f"| {case} | {shards} | {med(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) "
          f"| {med(rates) / base:.2f} | {' / '.join(f'{x:.2f}' for x in by_primary)} "
          f"| {per_job:.1f} | {client:.2f} | {redis_share:.0%} | {client_cores:.2f} |")
EOF
