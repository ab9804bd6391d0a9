#!/usr/bin/env bash
# Whole-process figures for opsdeck (issue 2 (d), issue 17), this tree's release binary side by
# side with the release binary of a baseline commit:
#
#   first frame    time to the first complete frame (simulators started and seeded, the first tab's
#                  list loaded and drawn, 200x50 pty): OPSDECK_EXIT_AFTER_FIRST_FRAME=1 under
#                  script(1), median of RUNS runs; the time the console prints (from its start) and
#                  the whole run, exec to exit
#   RSS            VmRSS of the console in tmux (200x50), median of RUNS starts: once started with
#                  the first tab shown (STARTUP_WAIT s), then after each further tab is visited once
#                  (keys 2..7, TAB_WAIT s each); and the CPU ticks used idle over IDLE_SECS (first
#                  start only)
#   calls/s        `opsdeck call ably time_get` one after another, CALLS per batch, median of RUNS
#                  batches: against `opsdeck sandbox` (each binary's own) with the history on (one
#                  history file that grows over the batches), with it off (`[history] enabled =
#                  false`), and with no sandbox (the embedded simulator, history on)
#   binary size    the release binary as built
#
# Baseline: BASELINE=<commit> (default 055e0af). It is built in a git worktree of its own,
# `opsdeck-baseline-<sha>`, with its own target dir inside it. One already under /work or $TMPDIR
# is reused; otherwise it is made under $TMPDIR (/tmp when unset) and kept for the next run
# (`git worktree remove --force <dir>` deletes it). This tree builds into $CARGO_TARGET_DIR
# (./target when unset). Runs of the two binaries alternate, so a busy machine slows both alike.
#
# Usage: benches/process.sh
#   env: BASELINE (055e0af), RUNS (10), CALLS (30), STARTUP_WAIT (2), TAB_WAIT (1), IDLE_SECS (10)
# Needs cargo, git, tmux, script (util-linux) and awk. Leaves nothing running: its sandboxes and
# its tmux server (a socket of its own) are stopped on exit, its temporary folders removed.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$PWD

BASELINE=${BASELINE:-055e0af}
RUNS=${RUNS:-10}
CALLS=${CALLS:-30}
STARTUP_WAIT=${STARTUP_WAIT:-2}
TAB_WAIT=${TAB_WAIT:-1}
IDLE_SECS=${IDLE_SECS:-10}
tmp_root=${TMPDIR:-/tmp}

now_us() { echo $(( $(date +%s%N) / 1000 )); }
say() { echo "process.sh: $*" >&2; }

# ---- the two binaries -------------------------------------------------------------------------
# shellcheck source=benches/baseline.sh
source benches/baseline.sh
baseline_worktree "$BASELINE"
say "building the baseline (release, target dir $base_dir/target)"
(cd "$base_dir" && CARGO_TARGET_DIR="$base_dir/target" cargo build --release --quiet --bin opsdeck)
say "building this tree (release)"
cargo build --release --quiet --bin opsdeck
base_built=$base_dir/target/release/opsdeck
this_built=${CARGO_TARGET_DIR:-$tree/target}/release/opsdeck
case $this_built in /*) ;; *) this_built=$tree/$this_built ;; esac
# Copies, taken at once: a target dir shared with another checkout may get its binary next.
work=$(mktemp -d "$tmp_root/opsdeck-process.XXXXXX")
cp "$this_built" "$work/opsdeck-this"
cp "$base_built" "$work/opsdeck-baseline"
bins=("$work/opsdeck-baseline" "$work/opsdeck-this")
names=(baseline this)

# ---- a clean environment: no user config, history or credentials ------------------------------
sock=opsdeck-process-$$
sandboxes=()
cleanup() {
  for pid in "${sandboxes[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${sandboxes[@]}"; do wait "$pid" 2>/dev/null || true; done
  tmux -L "$sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for var in $(env | awk -F= '/^(ABLY|DEEPGRAM|AVATAX|TAXJAR|COINBASE|MAILGUN|EASYPOST)_|^OPSDECK_/ {print $1}'); do
  unset "$var"
done
# `home N`: the environment of binary N's runs (a folder of its own for config, data, state).
homes=()
for n in 0 1; do
  dir=$work/home-${names[$n]}
  mkdir -p "$dir/config" "$dir/data" "$dir/state"
  homes[n]="OPSDECK_CONFIG_DIR=$dir/config OPSDECK_DATA_DIR=$dir/data OPSDECK_STATE_DIR=$dir/state XDG_CONFIG_HOME=$dir/config"
done
home() { echo "${homes[$1]}"; }
printf '[history]\nenabled = false\n' >"$work/history-off.toml"

declare -A result   # result[figure,N]
figures=()          # in the order they are printed
record() { # figure N value
  result[$1,$2]=$3
  [[ " ${figures[*]-} " == *" $1 "* ]] || figures+=("$1")
}

# ---- (a) first complete frame ------------------------------------------------------------------
say "first frame: $RUNS runs each"
declare -A inside wall
for _ in $(seq "$RUNS"); do
  for n in 0 1; do
    start=$(now_us)
    out=$(env $(home $n) OPSDECK_EXIT_AFTER_FIRST_FRAME=1 script -qec "stty cols 200 rows 50; ${bins[$n]}" /dev/null)
    wall[$n]+="$(( $(now_us) - start )) "
    inside[$n]+="$(grep -ao 'first complete frame [0-9.]* ms' <<<"$out" | awk '{print $4}') "
  done
done
for n in 0 1; do
  record "first frame, in process (ms)" $n "$(tr ' ' '\n' <<<"${inside[$n]}" | grep . | median)"
  record "first frame, exec to exit (ms)" $n "$(tr ' ' '\n' <<<"${wall[$n]}" | grep . | median | awk '{printf "%.1f", $1/1000}')"
done

# ---- (b) resident memory: started, then each further tab visited once ---------------------------
say "RSS: $RUNS starts each, tabs 2..7"
rss_of() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
declare -A rss
for run in $(seq "$RUNS"); do
  for n in 0 1; do
    tmux -L "$sock" new-session -d -s bench -x 200 -y 50 "exec env $(home $n) ${bins[$n]}"
    pid=$(tmux -L "$sock" list-panes -t bench -F '#{pane_pid}')
    sleep "$STARTUP_WAIT"
    rss[$n,1]+="$(rss_of "$pid") "
    if [ "$run" = 1 ]; then
      ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
      before=$(ticks); sleep "$IDLE_SECS"; after=$(ticks)
      record "CPU ticks idle over ${IDLE_SECS} s (1/$(getconf CLK_TCK) s)" $n $((after - before))
    fi
    for tab in 2 3 4 5 6 7; do
      tmux -L "$sock" send-keys -t bench "$tab"
      sleep "$TAB_WAIT"
      rss[$n,$tab]+="$(rss_of "$pid") "
    done
    tmux -L "$sock" kill-session -t bench
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  done
done
for n in 0 1; do
  record "RSS, first tab (MiB)" $n "$(tr ' ' '\n' <<<"${rss[$n,1]}" | grep . | median | awk '{printf "%.1f", $1/1024}')"
  for tab in 2 3 4 5 6 7; do
    record "RSS, tabs 1-$tab visited (MiB)" $n \
      "$(tr ' ' '\n' <<<"${rss[$n,$tab]}" | grep . | median | awk '{printf "%.1f", $1/1024}')"
  done
done

# ---- (c) opsdeck call, sequential --------------------------------------------------------------
# `sandbox N`: starts binary N's `opsdeck sandbox` on free ports; sets url[N] to its Ably URL.
declare -A url
sandbox() {
  local n=$1 base pid
  for _ in 1 2 3 4 5; do
    base=$(( 20000 + RANDOM % 20000 ))
    env $(home "$n") "${bins[$n]}" sandbox --port-base "$base" >"$work/sandbox-$n.log" 2>&1 &
    pid=$!
    sandboxes+=("$pid")
    url[$n]=http://127.0.0.1:$((base + 1))
    for _ in $(seq 100); do
      if env $(home "$n") OPSDECK_ABLY_URL="${url[$n]}" "${bins[$n]}" --profile local \
        --config "$work/history-off.toml" call ably time_get >/dev/null 2>&1; then
        return
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
  done
  say "cannot start the sandbox of ${bins[$n]}"
  exit 1
}
# `batch N ARGS...`: CALLS calls of binary N with ARGS, started straight from this shell (its
# environment exported first, so nothing but the calls is timed); prints calls/s.
batch() {
  local n=$1 bin=${bins[$1]} start i
  shift
  export ${homes[$n]}
  start=$(now_us)
  for ((i = 0; i < CALLS; i++)); do
    "$bin" "$@" call ably time_get >/dev/null || { say "a call failed: $bin $*"; exit 1; }
  done
  awk -v n="$CALLS" -v us=$(( $(now_us) - start )) 'BEGIN {printf "%.0f\n", n / (us / 1e6)}'
}
say "calls/s: $RUNS batches of $CALLS each, three ways"
sandbox 0
sandbox 1
declare -A rate
for _ in $(seq "$RUNS"); do
  for n in 0 1; do
    export OPSDECK_ABLY_URL=${url[$n]}
    r=$(batch $n --profile local) || exit 1
    rate[$n,on]+="$r "
    r=$(batch $n --profile local --config "$work/history-off.toml") || exit 1
    rate[$n,off]+="$r "
    unset OPSDECK_ABLY_URL
    r=$(batch $n) || exit 1
    rate[$n,embedded]+="$r "
  done
done
for n in 0 1; do
  record "calls/s, opsdeck sandbox, history on" $n "$(tr ' ' '\n' <<<"${rate[$n,on]}" | grep . | median)"
  record "calls/s, opsdeck sandbox, history off" $n "$(tr ' ' '\n' <<<"${rate[$n,off]}" | grep . | median)"
  record "calls/s, embedded simulator" $n "$(tr ' ' '\n' <<<"${rate[$n,embedded]}" | grep . | median)"
done

# ---- (d) binary size ---------------------------------------------------------------------------
for n in 0 1; do
  record "binary size (MiB)" $n "$(stat -c %s "${bins[$n]}" | awk '{printf "%.1f", $1/1048576}')"
done

# ---- the table ---------------------------------------------------------------------------------
echo
echo "baseline: $base_short ($base_built)"
echo "this tree: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml build.rs 2>/dev/null || echo '+changes') ($this_built)"
echo "runs: $RUNS, calls per batch: $CALLS"
printf '%-44s %12s %12s %8s\n' figure baseline "this tree" ratio
for figure in "${figures[@]}"; do
  a=${result[$figure,0]} b=${result[$figure,1]}
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {if (a + 0 == 0) print "-"; else printf "%.2f", b / a}')
  printf '%-44s %12s %12s %8s\n' "$figure" "$a" "$b" "$ratio"
done
