# Sourced by the scripts that set this tree beside a baseline commit (process.sh,
# page_compare.sh): `baseline_worktree COMMIT` sets `base_dir` to a git worktree of COMMIT,
# `opsdeck-baseline-<short sha>` (also in `base_short`): one already under /work or $tmp_root is reused, otherwise one
# is made under $tmp_root and kept for the next run (`git worktree remove --force <dir>` deletes
# it). The caller defines `say` (a line to stderr) and `tmp_root`. Also `median`: the median of
# the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

baseline_worktree() {
  local sha candidate
  sha=$(git rev-parse --verify --quiet "$1^{commit}") || { say "no commit $1"; exit 2; }
  base_short=${sha:0:7}
  base_dir=""
  for candidate in /work/opsdeck-baseline-"$base_short" "$tmp_root"/opsdeck-baseline-"$base_short"; do
    if [ -d "$candidate" ] && [ "$(git -C "$candidate" rev-parse HEAD 2>/dev/null)" = "$sha" ]; then
      base_dir=$candidate
      break
    fi
  done
  if [ -z "$base_dir" ]; then
    base_dir=$tmp_root/opsdeck-baseline-$base_short
    say "baseline $base_short: new worktree $base_dir"
    git worktree add --detach "$base_dir" "$sha" >&2
  else
    say "baseline $base_short: reusing $base_dir"
  fi
}
