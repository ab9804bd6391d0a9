#!/usr/bin/env bash
# Big list pages, this tree beside a baseline commit: for the 5 MB and 50 MB pages of
# benches/page_table.rs (an Ably list served on loopback, `r` pressed in the real console at
# 200x50), the time from the key to the drawn table, the part of it beyond the transfer, and the
# peak heap the page adds over the body's size; medians, side by side, with the ratio this/baseline
# and the goals of issue 36 (5 MB: <= 60 ms beyond the transfer and <= 2.5x the body; 50 MB:
# <= 350 ms and <= 2.2x).
#
# Both trees run this tree's benches/page_table.rs and benches/common/orders.rs (copied into the
# baseline's worktree for its build and put back after), so the figures differ only by the code
# they measure; a baseline the copy does not build with is measured with its own copy, and the
# script says so. Rounds alternate baseline and this tree, so a busy machine slows both alike;
# each round is one run of each bench (PAGE_RUNS loads of each page, their median), and the
# figures printed are the medians of the rounds.
#
# Run it before a change that touches the path from a response to the screen (indexing, rows,
# columns, the browser, the inspector's first frame): see ARCHITECTURE.md.
#
# Usage: benches/page_compare.sh
#   env: BASELINE (055e0af), ROUNDS (5), PAGE_RUNS (5)
# The baseline is built in a git worktree of its own (benches/baseline.sh) with its own target
# dir inside it; this tree builds into $CARGO_TARGET_DIR (./target when unset). A clean build of
# either takes minutes (the bench profile is a release build with whole-program LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$PWD

BASELINE=${BASELINE:-055e0af}
ROUNDS=${ROUNDS:-5}
PAGE_RUNS=${PAGE_RUNS:-5}
tmp_root=${TMPDIR:-/tmp}
say() { echo "page_compare.sh: $*" >&2; }

# shellcheck source=benches/baseline.sh
source benches/baseline.sh
baseline_worktree "$BASELINE"

# `built DIR TARGET`: builds DIR's page_table bench into TARGET and prints the binary's path.
built() {
  local out path
  out=$(cd "$1" && CARGO_TARGET_DIR="$2" cargo bench --bench page_table --no-run 2>&1) || {
    echo "$out" | tail -n 20 >&2
    return 1
  }
  path=$(sed -n 's/.*Executable benches\/page_table.rs (\(.*\))$/\1/p' <<<"$out" | tail -n 1)
  case $path in /*) ;; *) path=$1/$path ;; esac
  echo "$path"
}

work=$(mktemp -d "$tmp_root/opsdeck-page-compare.XXXXXX")
restore() { git -C "$base_dir" checkout --quiet -- benches 2>/dev/null || true; }
trap 'restore; rm -rf "$work"' EXIT

say "building the baseline's bench with this tree's benches/page_table.rs (target dir $base_dir/target)"
cp benches/page_table.rs "$base_dir/benches/page_table.rs"
cp benches/common/orders.rs "$base_dir/benches/common/orders.rs"
if base_bin=$(built "$base_dir" "$base_dir/target"); then
  base_bench="this tree's page_table.rs"
else
  say "the baseline does not build with this tree's bench: measuring it with its own"
  restore
  base_bin=$(built "$base_dir" "$base_dir/target")
  base_bench="its own page_table.rs"
fi
restore
say "building this tree's bench"
this_bin=$(built "$tree" "${CARGO_TARGET_DIR:-$tree/target}")
# Copies, taken at once: a later build into the same target dir replaces the binaries.
cp "$base_bin" "$work/page_table-baseline"
cp "$this_bin" "$work/page_table-this"
bins=("$work/page_table-baseline" "$work/page_table-this")

# result[tree,case,figure] collects one value a round.
declare -A result
for round in $(seq "$ROUNDS"); do
  for n in 0 1; do
    say "round $round of $ROUNDS: $([ "$n" = 0 ] && echo baseline || echo this tree)"
    out=$(PAGE_TABLES_ONLY=1 PAGE_RUNS=$PAGE_RUNS "${bins[$n]}")
    while IFS= read -r line; do
      # "5 MB page (3900 records, 5.0 MB): key to table drawn 16.6 ms, of which beyond the
      # transfer 13.7 ms; peak heap 2.20x the body (medians of 5)"
      size=$(awk '{print $1}' <<<"$line")
      read -r total beyond peak < <(sed -E 's/.*drawn ([0-9.]+) ms.*transfer ([0-9.]+) ms.*heap ([0-9.]+)x.*/\1 \2 \3/' <<<"$line")
      result[$n,$size,total]+="$total "
      result[$n,$size,beyond]+="$beyond "
      result[$n,$size,peak]+="$peak "
    done < <(grep -E '^[0-9]+ MB page' <<<"$out")
  done
done

med() { tr ' ' '\n' <<<"${result[$1,$2,$3]-}" | grep . | median; }
echo
echo "baseline: $base_short (measured with $base_bench); this tree: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml 2>/dev/null || echo '+changes')"
echo "medians of $ROUNDS rounds, each the median of $PAGE_RUNS loads"
printf '%-34s %12s %12s %10s   %s\n' "" "baseline" "this tree" "ratio" "goal"
for size in 5 50; do
  for figure in total beyond peak; do
    b=$(med 0 "$size" "$figure")
    t=$(med 1 "$size" "$figure")
    case $figure in
      total) label="$size MB page: key to table (ms)"; goal="" ;;
      beyond) label="$size MB page: beyond the transfer (ms)"; goal=$([ "$size" = 5 ] && echo 60 || echo 350) ;;
      peak) label="$size MB page: peak heap (x body)"; goal=$([ "$size" = 5 ] && echo 2.5 || echo 2.2) ;;
    esac
    verdict=""
    if [ -n "$goal" ]; then
      verdict=$(awk -v t="$t" -v g="$goal" 'BEGIN {print (t <= g ? "<= " g ": met" : "<= " g ": MISSED")}')
    fi
    ratio=$(awk -v b="$b" -v t="$t" 'BEGIN {if (b > 0) printf "%.2fx", t / b; else print "-"}')
    printf '%-34s %12s %12s %10s   %s\n' "$label" "$b" "$t" "$ratio" "$verdict"
  done
done
