#!/usr/bin/env bash
# Measures the mount against the same tree read directly, warm, in one run:
# builds mindmount (the working tree, "after") and, for comparison, the
# committed version BEFORE ("before"), creates repositories
# with 3,000 and 10,000 memory files, mounts one copy with each binary and
# times common shell work on the mounts and on an identical plain copy.
# grep -r and cat are timed in RUNS rounds (each the best of REPEAT) and
# printed as ratios (mount / direct) with their range over the rounds;
# the other operations once, for the working tree. Needs root or
# fusermount3, and /dev/fuse.
#
# usage: scripts/bench-mount.sh [SIZES...]     (default: 3000 10000)
# env:   REPEAT=3 (best of N timed runs per operation)
#        RUNS=3 (rounds of the grep/cat comparison)
#        BEFORE=dae4c3a (git revision to compare with, by default the last
#          one with an OPEN per file; BEFORE= to skip)
#        MINDMOUNT_PASSTHROUGH=1 (compare with kernel passthrough of file I/O)
#
# Goals (issue 16.1): grep -r and cat of every file within 2x of the
# direct tree, 1.5x as the target; metadata (find, stat, ls -lR, missing
# lookups) within 2x.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
((${#sizes[@]})) || sizes=(3000 10000)
REPEAT=${REPEAT:-3}
RUNS=${RUNS:-3}
BEFORE=${BEFORE-dae4c3a}

work=$(mktemp -d /tmp/mindmount-bench.XXXXXX)
pids=()
mounts=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for m in "${mounts[@]}"; do
    if grep -qs " $m " /proc/mounts; then umount -l "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building mindmount (working tree)"
go build -o "$work/mindmount" ./cmd/mindmount
if [ -n "$BEFORE" ]; then
  echo "== building mindmount at $BEFORE (before)"
  mkdir -p "$work/src-before"
  git archive "$BEFORE" | tar -x -C "$work/src-before"
  if ! (cd "$work/src-before" && go build -o "$work/mindmount-before" ./cmd/mindmount); then
    echo "cannot build $BEFORE: no before/after comparison"; BEFORE=""
  fi
fi
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@mindmount.local GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@mindmount.local

# make_repo DIR N: a mindmount repository with N memory files: 60% user
# memories, 30% character memories, 10% external notes in 20 folders.
make_repo() {
  local dir=$1 n=$2 i rel
  mkdir -p "$dir/user_memory" "$dir/character_memory" "$dir/transcripts" "$dir/system"
  printf -- '---\ndescription: Base persona\nread_only: true\n---\n# Character\n\nYou are a concise assistant.\n' >"$dir/character.md"
  printf -- '---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n' >"$dir/user.md"
  printf '%s\n' '.*.sw?' '4913' '*~' '.#*' 'sed??????' '*.tmp' '/user_memory.md' '/character_memory.md' '/CONTEXT.md' '/.mindmount/status' '/.mindmount/search/' '/.mindmount/cache/' >"$dir/.gitignore"
  for ((i = 0; i < n; i++)); do
    if ((i % 10 < 6)); then rel="user_memory/fact-$i.md"
    elif ((i % 10 < 9)); then rel="character_memory/style-$i.md"
    else mkdir -p "$dir/notes/topic-$((i % 20))"; rel="notes/topic-$((i % 20))/note-$i.md"; fi
    printf -- '---\ndescription: Memory number %d about topic %d\n---\n# Memory %d\n\n## Fact\nYou mentioned item %d while talking about topic %d. Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n## Episode\nSession 01.09.26 — said in passing.\n\n## Access log\nused, 01.09.26\n' \
      "$i" "$((i % 97))" "$i" "$i" "$((i % 97))" >"$dir/$rel"
  done
  git -C "$dir" init -q -b main
  # No background "git gc --auto": it would repack while we copy and time.
  git -C "$dir" config gc.auto 0
  git -C "$dir" add -A
  git -C "$dir" commit -q -m "bench seed"
}

# best_of CMD...: runs CMD once to warm, then REPEAT times; prints the best
# wall time in seconds.
best_of() {
  local best="" s e t i
  "$@" >/dev/null 2>&1 || true
  for ((i = 0; i < REPEAT; i++)); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
    t=$((e - s))
    if [ -z "$best" ] || ((t < best)); then best=$t; fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

# once CMD...: times one run (for writes, which change the tree).
once() {
  local s e
  s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
  awk -v ns="$((e - s))" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

op_find()    { find "$1" >/dev/null; }
op_stat()    { (cd "$1" && xargs -d '\n' -a "$list" stat -c '%s %Y' >/dev/null); }
op_lsR()     { ls -lR "$1" >/dev/null; }
op_grep()    { grep -r -l "item 4242 " "$1" >/dev/null || true; }
op_cat()     { (cd "$1" && xargs -d '\n' -a "$list" cat >/dev/null); }
op_missing() { local i; for ((i = 0; i < 600; i++)); do [ -e "$1/user_memory/missing-$i.md" ] || true; done; }
op_new()     { local i; for ((i = 0; i < 300; i++)); do printf -- '---\ndescription: New memory %d\n---\n# New %d\n\n## Fact\nNew fact %d.\n' $i $i $i >"$1/user_memory/new-$i.md"; done; }
op_append()  { local i; for ((i = 0; i < 300; i++)); do echo "used, 02.09.26" >>"$1/user_memory/fact-$((i * 10))"'.md'; done; }
op_sed()     { local i; for ((i = 0; i < 50; i++)); do sed -i 's/Lorem ipsum/Lorem IPSUM/' "$1/user_memory/fact-$((i * 10)).md"; done; }

# start_mount BINARY REPO MOUNTPOINT: mounts and waits for readiness.
start_mount() {
  local bin=$1 repo=$2 mnt=$3 i
  local log="$mnt.log" out="$mnt.out"
  "$bin" mount "$repo" "$mnt" --consolidate=false >"$out" 2>"$log" &
  pids+=($!)
  mounts+=("$mnt")
  for ((i = 0; i < 600; i++)); do
    grep -q "mindmount: mounted" "$out" 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
  done
  grep -q "mindmount: mounted" "$out" || { echo "mount not ready"; cat "$log"; exit 1; }
}

ratio() { awk -v m="$1" -v d="$2" 'BEGIN { if (d > 0) printf "%.2f", m / d; else print "-" }'; }

# range R...: "median (min–max)" of the ratios.
range() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

compare=()
results=()
row() { # name mount direct
  local r
  r=$(awk -v m="$2" -v d="$3" 'BEGIN { if (d > 0) printf "%.2f", m / d; else print "-" }')
  results+=("$(printf '%-8s %-26s %10s %10s %8s' "$size" "$1" "$2" "$3" "$r")")
  echo "${results[-1]}"
}

for size in "${sizes[@]}"; do
  echo "== $size memory files: creating two identical repositories"
  a="$work/a-$size" b="$work/b-$size" mnt="$work/mnt-$size"
  make_repo "$a" "$size"
  cp -a "$a" "$b"
  mkdir -p "$mnt"
  list="$work/list-$size"
  (cd "$b" && find . -path ./.git -prune -o -type f -print | sed 's|^\./||') >"$list"

  start_mount "$work/mindmount" "$a" "$mnt"
  after_pid=${pids[-1]}
  if [ -n "$BEFORE" ]; then
    c="$work/c-$size" cmnt="$work/cmnt-$size"
    cp -a "$b" "$c"
    mkdir -p "$cmnt"
    start_mount "$work/mindmount-before" "$c" "$cmnt"
    before_pid=${pids[-1]}
    echo "== $size: grep -r and cat, $RUNS rounds (best of $REPEAT each, warm)"
    gb=() ga=() cb=() ca=()
    for ((r = 0; r < RUNS; r++)); do
      gd=$(best_of op_grep "$b"); cd_=$(best_of op_cat "$b")
      gb+=("$(ratio "$(best_of op_grep "$cmnt")" "$gd")"); ga+=("$(ratio "$(best_of op_grep "$mnt")" "$gd")")
      cb+=("$(ratio "$(best_of op_cat "$cmnt")" "$cd_")"); ca+=("$(ratio "$(best_of op_cat "$mnt")" "$cd_")")
      echo "   round $((r + 1)): grep -r before ${gb[-1]}x after ${ga[-1]}x; cat before ${cb[-1]}x after ${ca[-1]}x"
    done
    compare+=("$(printf '%-8s %-16s %-22s %-22s' "$size" "grep -r" "$(range "${gb[@]}")" "$(range "${ga[@]}")")")
    compare+=("$(printf '%-8s %-16s %-22s %-22s' "$size" "cat every file" "$(range "${cb[@]}")" "$(range "${ca[@]}")")")
    kill -TERM "$before_pid"
    wait "$before_pid" || true
  fi

  echo "== $size: timing (best of $REPEAT, warm)"
  row "find"                 "$(best_of op_find "$mnt")"    "$(best_of op_find "$b")"
  row "stat every file"      "$(best_of op_stat "$mnt")"    "$(best_of op_stat "$b")"
  row "ls -lR"               "$(best_of op_lsR "$mnt")"     "$(best_of op_lsR "$b")"
  row "grep -r"              "$(best_of op_grep "$mnt")"    "$(best_of op_grep "$b")"
  row "cat every file"       "$(best_of op_cat "$mnt")"     "$(best_of op_cat "$b")"
  row "600 missing lookups"  "$(best_of op_missing "$mnt")" "$(best_of op_missing "$b")"
  row "300 new files"        "$(once op_new "$mnt")"        "$(once op_new "$b")"
  row "300 appends"          "$(once op_append "$mnt")"     "$(once op_append "$b")"
  row "sed -i on 50 files"   "$(once op_sed "$mnt")"        "$(once op_sed "$b")"

  # Commit latency of one changed file: the daemon (write through the mount
  # until HEAD moves, minus the 1 s debounce) against git add + git commit.
  head0=$(git -C "$a" rev-parse HEAD)
  # let the writes above commit first
  for ((i = 0; i < 300; i++)); do
    h=$(git -C "$a" rev-parse HEAD); [ "$h" != "$head0" ] && head0=$h
    sleep 0.1
    [ "$(git -C "$a" rev-parse HEAD)" = "$h" ] && [ -z "$(git -C "$a" status --porcelain)" ] && break
  done
  head0=$(git -C "$a" rev-parse HEAD)
  s=$(date +%s%N)
  echo "used, 03.09.26" >>"$mnt/user_memory/fact-0.md"
  while [ "$(git -C "$a" rev-parse HEAD)" = "$head0" ]; do sleep 0.005; done
  e=$(date +%s%N)
  daemon=$(awk -v ns="$((e - s))" 'BEGIN { printf "%.4f", ns / 1e9 - 1.0 }')
  git -C "$b" add -A >/dev/null && git -C "$b" commit -qm warm >/dev/null || true
  echo "used, 03.09.26" >>"$b/user_memory/fact-0.md"
  cli=$(once sh -c "git -C '$b' add user_memory/fact-0.md && git -C '$b' commit -qm one")
  row "commit 1 file (-debounce)" "$daemon" "$cli"

  kill -TERM "$after_pid"
  wait "$after_pid" || { echo "mindmount mount exited non-zero"; cat "$mnt.log"; }
done

if ((${#compare[@]})); then
  echo
  echo "grep -r / cat through the mount, ratio to the direct tree: median (min-max) over $RUNS rounds"
  printf '%-8s %-16s %-22s %-22s\n' files operation "before ($BEFORE)" "after (working tree)"
  printf '%s\n' "${compare[@]}"
fi

echo
printf '%-8s %-26s %10s %10s %8s\n' files operation "mount s" "direct s" ratio
printf '%s\n' "${results[@]}"
echo
echo "last row: mount = write through the mount until the commit lands, minus the 1 s debounce; direct = git add FILE && git commit"
