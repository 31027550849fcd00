#!/usr/bin/env bash
# Measures the mount against the same tree read directly, warm, in one run:
# builds engram, creates repositories with 3,000 and 10,000 memory files,
# mounts one copy with "engram mount" and times common shell work on the
# mount and on an identical plain copy. Prints a table with ratios
# (mount / direct). Needs root or fusermount3, and /dev/fuse.
#
# usage: scripts/bench-mount.sh [SIZES...]     (default: 3000 10000)
# env:   REPEAT=3 (best of N timed runs per operation)
#        ENGRAM_PASSTHROUGH=1 (compare with kernel passthrough of file I/O)
#
# Goals: metadata (find, stat, ls -lR, missing lookups) within 2x of the
# direct tree; grep -r and cat of every file within 4x.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
((${#sizes[@]})) || sizes=(3000 10000)
REPEAT=${REPEAT:-3}

work=$(mktemp -d /tmp/engram-bench.XXXXXX)
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

echo "== building engram"
go build -o "$work/engram" ./cmd/engram
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@engram.local GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@engram.local

# make_repo DIR N: an engram repository with N memory files: 60% user
# memories, 30% character memories, 10% external notes in 20 folders.
make_repo() {
  local dir=$1 n=$2 i rel
  mkdir -p "$dir/user_memory" "$dir/character_memory" "$dir/transcripts" "$dir/system"
  printf -- '---\ndescription: Base persona\nread_only: true\n---\n# Character\n\nYou are a concise assistant.\n' >"$dir/character.md"
  printf -- '---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n' >"$dir/user.md"
  printf '%s\n' '.*.sw?' '4913' '*~' '.#*' 'sed??????' '*.tmp' '/user_memory.md' '/character_memory.md' '/CONTEXT.md' '/.engram/status' '/.engram/search/' '/.engram/cache/' >"$dir/.gitignore"
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

  log="$work/mount-$size.log"
  out="$work/mount-$size.out"
  "$work/engram" mount "$a" "$mnt" --consolidate=false >"$out" 2>"$log" &
  pids+=($!)
  mounts+=("$mnt")
  for ((i = 0; i < 600; i++)); do
    grep -q "engram: mounted" "$out" 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
  done
  grep -q "engram: mounted" "$out" || { echo "mount not ready"; cat "$log"; exit 1; }

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

  kill -TERM "${pids[-1]}"
  wait "${pids[-1]}" || { echo "engram mount exited non-zero"; cat "$log"; }
done

echo
printf '%-8s %-26s %10s %10s %8s\n' files operation "mount s" "direct s" ratio
printf '%s\n' "${results[@]}"
echo
echo "last row: mount = write through the mount until the commit lands, minus the 1 s debounce; direct = git add FILE && git commit"
