#!/usr/bin/env bash
# One queue over 1 shard vs S shards on a private local Redis Cluster
# (S primaries, no replicas, loopback only), with `redq bench --shards`.
# Prints one JSON line per run and the median jobs/s for each shard count.
#
#   bench/compare/cluster-scaling.sh [--n N] [--c C] [--rounds R] [--shards S] [--case process|enqueue_bulk]
#
# On one machine all primaries share its cores, so this measures how well the
# shards spread work, not what separate machines would give.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

n=30000 c=48 rounds=3 shards=3 case=process
while (($#)); do
    case $1 in
        --n) n=$2; shift 2 ;; --c) c=$2; shift 2 ;; --rounds) rounds=$2; shift 2 ;;
        --shards) shards=$2; shift 2 ;; --case) case=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

dir=$(mktemp -d)
ports=()
cleanup() {
    for port in "${ports[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for ((i = 0; i < shards; i++)); do
    port=$(free_port)
    ports+=("$port")
    mkdir -p "$dir/$port"
    (cd "$dir/$port" && redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file nodes.conf --save "" --appendonly no --daemonize yes \
        --logfile "$dir/$port/redis.log" >/dev/null)
done
for port in "${ports[@]}"; do
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 100); do
    redis-cli -p "${ports[0]}" cluster info | grep -q cluster_state:ok && break
    sleep 0.1
done

cargo build --release -q -p redq-console
url="redis-cluster://127.0.0.1:${ports[0]}?$(printf 'node=127.0.0.1:%s&' "${ports[@]:1}")"
url=${url%&}

results=()
for ((r = 1; r <= rounds; r++)); do
    for s in 1 "$shards"; do
        line=$(target/release/redq bench --case "$case" --n "$n" --c "$c" --shards "$s" --redis "$url" --queue scaling)
        echo "$line"
        results+=("$s $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["jobs_per_s"])' "$line")")
    done
done
printf '%s\n' "${results[@]}" | python3 -c '
import sys, statistics
runs = {}
for line in sys.stdin:
    s, v = line.split(); runs.setdefault(int(s), []).append(float(v))
base = statistics.median(runs[1])
for s in sorted(runs):
    m = statistics.median(runs[s])
    print(f"shards={s}: median {m:,.0f} jobs/s over {len(runs[s])} runs; {m / base:.2f}x one shard")
'
