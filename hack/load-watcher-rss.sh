#!/usr/bin/env bash
# Measures the memory of a load-watcher binary at 5 000 nodes: it samples static usage every second with windows
# 4s,20s,1m (62 points per node, as 15m at 15s), both endpoints are requested once per round for 85 rounds, then
# VmRSS, VmHWM, RssAnon and RssFile are printed. Usage: hack/load-watcher-rss.sh [binary] [port]
set -euo pipefail
bin=${1:-_output/bench/load-watcher}
port=${2:-18081}
usage=$(seq 0 4999 | awk '{printf "%snode-%05d=%d:%d", (NR>1?",":""), $1, $1%100, ($1*7)%100}')
"$bin" --provider=static --static-usage="$usage" --period=1s --windows=4s,20s,1m \
	--listen-address="127.0.0.1:$port" >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
sleep 2
for _ in $(seq 1 85); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/api/v1/usage"
	curl -sf -o /dev/null "http://127.0.0.1:$port/watcher"
	sleep 1
done
grep -E '^(VmRSS|VmHWM|RssAnon|RssFile):' "/proc/$pid/status"
