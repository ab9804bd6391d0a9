#!/usr/bin/env bash
# The simulators' load bench (benches/sandbox_load.rs) run on this tree and on a baseline commit,
# the same bench source on both, at each store size: throughput, memory per stored record beside
# the record's JSON size, and the latency of a first page of 10, side by side.
#
# Baseline: BASELINE=<commit> (default c20e252, the commit before issue 19). It is built in a git
# worktree of its own, `opsdeck-baseline-<sha>` under $TMPDIR (/tmp when unset), with its own
# target dir, kept for the next run (`git worktree remove --force <dir>` deletes it). This tree's
# bench source is copied into it, so both run the same cases and measures.
#
# Usage: benches/sandbox_load.sh
#   env: BASELINE (c20e252), SIZES ("20000 100000"), CASES ("avatax mailgun easypost ably
#   transactions_create_order"), LOAD_CLIENTS (16), LOAD_LIST_READS (50), SKIP_BASELINE (unset)
# Each run is one process per case and size; a case that fails at a size (the baseline running out
# of memory, say) is reported as failed and the rest go on.
set -uo pipefail
cd "$(dirname "$0")/.."
tree=$PWD

BASELINE=${BASELINE:-c20e252}
SIZES=${SIZES:-"20000 100000"}
CASES=${CASES:-"avatax mailgun easypost ably transactions_create_order"}
export LOAD_CLIENTS=${LOAD_CLIENTS:-16}
export LOAD_LIST_READS=${LOAD_LIST_READS:-50}
tmp_root=${TMPDIR:-/tmp}

say() { echo "sandbox_load.sh: $*" >&2; }

bench_binary() { # the bench executable cargo built in $1 (a tree), newest first
  local dir=$1
  (cd "$dir" && CARGO_TARGET_DIR=${2:-$dir/target} cargo bench --bench sandbox_load --no-run --message-format=json 2>/dev/null) |
    grep -o '"executable":"[^"]*sandbox_load[^"]*"' | tail -1 | cut -d'"' -f4
}

here_bin=$(bench_binary "$tree" "${CARGO_TARGET_DIR:-$tree/target}")
[ -x "$here_bin" ] || { say "this tree's bench did not build"; exit 2; }

base_bin=""
if [ -z "${SKIP_BASELINE:-}" ]; then
  sha=$(git rev-parse --verify --quiet "$BASELINE^{commit}") || { say "no commit $BASELINE"; exit 2; }
  base_dir=$tmp_root/opsdeck-baseline-${sha:0:7}
  if [ ! -d "$base_dir" ]; then
    say "baseline ${sha:0:7}: new worktree $base_dir"
    git worktree add --detach "$base_dir" "$sha" >&2 || exit 2
  fi
  cp "$tree/benches/sandbox_load.rs" "$base_dir/benches/sandbox_load.rs"
  say "building the baseline's bench (minutes the first time)"
  base_bin=$(bench_binary "$base_dir")
  [ -x "$base_bin" ] || { say "the baseline's bench did not build"; exit 2; }
fi

# One case at one size: the bench's lines, or why it failed.
run() {
  local binary=$1 case=$2 size=$3 out
  if out=$(LOAD_CASE=$case LOAD_REQUESTS=$size "$binary" 2>&1); then
    printf '%s\n' "$out" | grep -E '^(\S| +\+)' | grep -v '^Running'
  else
    printf '  FAILED (status %s): %s\n' "$?" "$(printf '%s' "$out" | grep -m1 -E 'panicked|memory|error' || true)"
  fi
}

for size in $SIZES; do
  for case in $CASES; do
    echo "== $case, $size requests"
    echo "-- this tree"
    run "$here_bin" "$case" "$size"
    if [ -n "$base_bin" ]; then
      echo "-- baseline $BASELINE"
      run "$base_bin" "$case" "$size"
    fi
  done
done
