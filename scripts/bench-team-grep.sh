#!/usr/bin/env bash
# Measures reading a team's memory through a member's mount against the
# member's own memory on the same mount, warm, in one run: a personal
# repository and a team repository with N memory files each (the team's
# pushed to a bare remote and joined with "mindmount team join"), one
# mount; grep -r over MNT/user_memory and over MNT/shared/eng/user_memory,
# alternated for RUNS rounds, each the best of REPEAT. Prints both times
# and the ratio team / personal (goal: at most 1.2). Needs root or
# fusermount3, and /dev/fuse.
#
# usage: scripts/bench-team-grep.sh [N]        (default: 3000)
# env:   REPEAT=3 RUNS=5 MINDMOUNT_BIN=path (default: built from the tree)
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-3000}
REPEAT=${REPEAT:-3}
RUNS=${RUNS:-5}

work=$(mktemp -d /tmp/mindmount-teamgrep.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if grep -qs " $work/mnt " /proc/mounts; then umount -l "$work/mnt" 2>/dev/null || fusermount3 -uz "$work/mnt" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bin=${MINDMOUNT_BIN:-}
if [ -z "$bin" ]; then
  echo "== building mindmount"
  go build -o "$work/mindmount" ./cmd/mindmount
  bin=$work/mindmount
fi
bin=$(realpath "$bin")
export PATH="$(dirname "$bin"):$PATH" # the pre-commit hook finds mindmount
export HOME=$work/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@mindmount.local

# fill DIR WHO: N memories in DIR/user_memory, committed.
fill() {
  local dir=$1 who=$2 i
  mkdir -p "$dir/user_memory"
  for ((i = 0; i < N; i++)); do
    printf -- '---\ndescription: %s memory %d about topic %d\n---\n# Memory %d\n\n## Fact\nYou mentioned item %d while talking about topic %d. Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n## Access log\nused, 01.09.26\n' \
      "$who" "$i" "$((i % 97))" "$i" "$i" "$((i % 97))" >"$dir/user_memory/fact-$i.md"
  done
  git -C "$dir" add -A
  git -C "$dir" commit -q -m "bench seed"
}

echo "== $N memories in the personal repository and $N in the team's"
"$bin" init "$work/team-src" >/dev/null
fill "$work/team-src" team
git init -q --bare "$work/eng.git"
git -C "$work/eng.git" symbolic-ref HEAD refs/heads/main
git -C "$work/team-src" push -q "$work/eng.git" HEAD:main
"$bin" init "$work/me" >/dev/null
fill "$work/me" personal
"$bin" team join "$work/me" "$work/eng.git" >/dev/null

mkdir "$work/mnt"
MINDMOUNT_LLM=openai OPENAI_BASE_URL=http://127.0.0.1:9/v1 MINDMOUNT_MODEL=none \
  "$bin" mount "$work/me" "$work/mnt" --consolidate=false 2>"$work/mount.log" &
pid=$!
for _ in $(seq 1 300); do
  [ -d "$work/mnt/shared/eng/user_memory" ] && break
  sleep 0.1
done
[ -d "$work/mnt/shared/eng/user_memory" ] || { echo "the mount did not come up:"; cat "$work/mount.log"; exit 1; }

# best_of DIR: warms, then prints the best of REPEAT grep -r runs in ms.
best_of() {
  local dir=$1 best="" i s e ms
  grep -r -c "topic 42" "$dir" >/dev/null || true
  for ((i = 0; i < REPEAT; i++)); do
    s=$(date +%s%N)
    grep -r -c "topic 42" "$dir" >/dev/null || true
    e=$(date +%s%N)
    ms=$(((e - s) / 1000000))
    if [ -z "$best" ] || ((ms < best)); then best=$ms; fi
  done
  echo "$best"
}

echo "== grep -r, warm, best of $REPEAT, $RUNS rounds alternated (load: $(cut -d' ' -f1-3 /proc/loadavg))"
personal=() team=()
for ((r = 0; r < RUNS; r++)); do
  personal+=("$(best_of "$work/mnt/user_memory")")
  team+=("$(best_of "$work/mnt/shared/eng/user_memory")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${personal[@]}")
t=$(median "${team[@]}")
echo "personal tree: ${personal[*]} ms (median $p)"
echo "team tree:     ${team[*]} ms (median $t)"
awk -v p="$p" -v t="$t" 'BEGIN { if (p == 0) p = 1; printf "ratio team/personal: %.2f (goal <= 1.2)\n", t / p }'
