#!/usr/bin/env bash
# What the console costs the Redis it watches: a private redis-server with Q
# queues (J waiting jobs each), the console on it in a detached tmux session
# for S seconds at its default refresh, and the server's CPU and commands
# over that time against the same time with no console.
#
#   scripts/console-cost.sh [--queues "1 10 100"] [--jobs J] [--seconds S] [--redq BIN]
#
# Prints one line per queue count: Redis CPU a second idle and with the
# console, the difference a refresh, and the commands a refresh sent.
set -euo pipefail

queues_list="1 10 100"
jobs=10
seconds=20
here="$(cd "$(dirname "$0")/.." && pwd)"
redq="$here/target/release/redq"
while [ $# -gt 0 ]; do
  case "$1" in
    --queues) queues_list="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --redq) redq="$2"; shift 2 ;;
    *) echo "console-cost.sh: unknown argument $1 (accepted: --queues, --jobs, --seconds, --redq)" >&2; exit 2 ;;
  esac
done
for tool in redis-server redis-cli tmux; do
  command -v "$tool" >/dev/null || { echo "console-cost.sh: $tool is not installed" >&2; exit 1; }
done
[ -x "$redq" ] || { echo "console-cost.sh: $redq is missing (cargo build --release -p redq-console)" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/redq-console-cost.XXXXXX")"
port=$((20000 + RANDOM % 20000))
session="redq-console-cost-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
  --daemonize yes --logfile "$tmp/redis.log" >/dev/null
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
url="redis://127.0.0.1:$port"

cpu() { redis-cli -p "$port" info cpu | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.6f", s }'; }
calls() { redis-cli -p "$port" info stats | awk -F: '/^total_commands_processed:/ { printf "%d", $2 }'; }

# CPU seconds and commands over `seconds`, starting now.
measure() {
  local c0 n0
  c0="$(cpu)"
  n0="$(calls)"
  sleep "$seconds"
  echo "$(echo "$(cpu) - $c0" | bc -l) $(($(calls) - n0 - 2))"
}

made=0
printf '%-7s %-14s %-18s %-14s %-16s\n' queues "idle CPU/s" "with console CPU/s" "a refresh" "commands/refresh"
for q in $queues_list; do
  while [ "$made" -lt "$q" ]; do
    for j in $(seq 1 "$jobs"); do
      "$redq" --url "$url" enqueue "q$made" "{\"j\":$j}" >/dev/null
    done
    made=$((made + 1))
  done
  read -r idle_cpu idle_calls <<<"$(measure)"
  tmux new-session -d -s "$session" -x 160 -y 48 "$redq --url $url --read-only"
  sleep 3
  read -r cpu_with calls_with <<<"$(measure)"
  tmux kill-session -t "$session"
  per_refresh_us="$(echo "($cpu_with - $idle_cpu) * 1000000 / $seconds" | bc -l)"
  printf '%-7s %-14s %-18s %-14s %-16s\n' "$q" \
    "$(printf '%.2f ms' "$(echo "$idle_cpu * 1000 / $seconds" | bc -l)")" \
    "$(printf '%.2f ms' "$(echo "$cpu_with * 1000 / $seconds" | bc -l)")" \
    "$(printf '%.0f µs' "$per_refresh_us")" \
    "$(( (calls_with - idle_calls) / seconds ))"
done
