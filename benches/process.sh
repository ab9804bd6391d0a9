#!/usr/bin/env bash
# Whole-process figures for opsdeck (issue 2 (d)): time to the first complete frame, CPU used
# while idle, resident memory at idle, and sequential `opsdeck call` throughput.
# Usage: benches/process.sh   (builds the release binary first; needs tmux and script)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/opsdeck
export XDG_CONFIG_HOME=$(mktemp -d)   # no user config, no live credentials
unset ABLY_API_KEY DEEPGRAM_API_KEY TAXJAR_API_KEY MAILGUN_API_KEY EASYPOST_API_KEY || true

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now_us() { echo $(( $(date +%s%N) / 1000 )); }

echo "== first complete frame: simulators started and seeded, channels loaded and drawn, 200x50 pty, 30 runs"
wall=(); inside=()
for _ in $(seq 30); do
  start=$(now_us)
  out=$(OPSDECK_EXIT_AFTER_FIRST_FRAME=1 script -qec "stty cols 200 rows 50; $bin" /dev/null)
  wall+=($(( $(now_us) - start )))
  inside+=($(grep -ao 'first complete frame [0-9.]* ms' <<<"$out" | awk '{print $4 * 1000}'))
done
printf '%s\n' "${inside[@]}" | median | awk '{printf "in process (console start, before config load, to frame drawn): median %.2f ms\n", $1/1000}'
printf '%s\n' "${wall[@]}" | median | awk '{printf "whole run under script(1), exec to exit: median %.1f ms\n", $1/1000}'
wrapper=()
for _ in $(seq 30); do
  start=$(now_us); script -qec "stty cols 200 rows 50; true" /dev/null >/dev/null; wrapper+=($(( $(now_us) - start )))
done
printf '%s\n' "${wrapper[@]}" | median | awk '{printf "script(1) wrapper alone: median %.1f ms\n", $1/1000}'

echo "== idle: CPU over 10 s and resident memory, console open in tmux at 200x50"
tmux kill-session -t opsdeck-bench 2>/dev/null || true
tmux new-session -d -s opsdeck-bench -x 200 -y 50 "$bin"
sleep 2
pid=$(pgrep -n -f "^$bin$")
ticks() { awk '{print $14 + $15}' /proc/$pid/stat; }
before=$(ticks); sleep 10; after=$(ticks)
echo "CPU ticks used in 10 s idle: $((after - before)) (clock ticks of $(getconf CLK_TCK)/s)"
grep VmRSS /proc/$pid/status
tmux kill-session -t opsdeck-bench

echo "== opsdeck call, sequential, against opsdeck sandbox (--profile local)"
$bin sandbox --port-base 7700 >/dev/null &
sandbox=$!
trap 'kill $sandbox 2>/dev/null || true' EXIT
sleep 0.5
n=300
start=$(now_us)
for _ in $(seq $n); do $bin --profile local call ably time_get >/dev/null; done
elapsed=$(( $(now_us) - start ))
awk -v n=$n -v us=$elapsed 'BEGIN {printf "%d calls in %.2f s: %.0f calls/s\n", n, us/1e6, n/(us/1e6)}'
