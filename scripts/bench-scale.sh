#!/usr/bin/env bash
# Cost curves of one repository as it grows (issue 16.5): for 1,000,
# 10,000 and 50,000 memories, prints the start-up time of "mindmount mount"
# (scan, recovery, mount until the readiness line), its RSS after start,
# the commit latency of one file written through the mount (minus the
# debounce), the render time of the indexes and CONTEXT.md after a change
# (cat through the mount, median of 20), recall p95 (cat of
# .mindmount/search/<query>, 40 queries), and grep -r / cat of every file
# through the mount against the direct tree (best of REPEAT). Any cost that
# grows faster than its repository (more than 1.5x the size factor from one
# row to the next) is flagged. Needs root or fusermount3, and /dev/fuse.
#
# usage: scripts/bench-scale.sh [SIZES...]     (default: 1000 10000 50000)
# env:   REPEAT=3
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
((${#sizes[@]})) || sizes=(1000 10000 50000)
REPEAT=${REPEAT:-3}
DEBOUNCE_MS=100

work=$(mktemp -d /tmp/mindmount-scale.XXXXXX)
pid=""
mnt=""
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  if [ -n "$mnt" ] && grep -qs " $mnt " /proc/mounts; then umount -l "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building mindmount"
go build -o "$work/mindmount" ./cmd/mindmount
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@mindmount.local GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@mindmount.local

# make_repo DIR N: N memory files, 60% user, 30% character, 10% notes.
make_repo() {
  local dir=$1 n=$2 i rel
  mkdir -p "$dir/user_memory" "$dir/character_memory" "$dir/.mindmount"
  printf -- '---\ndescription: Base persona\nread_only: true\n---\n# Character\n\nYou are a concise assistant.\n' >"$dir/character.md"
  printf -- '---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n' >"$dir/user.md"
  printf '%s\n' '.*.sw?' '4913' '*~' '.#*' 'sed??????' '*.tmp' '/user_memory.md' '/character_memory.md' '/CONTEXT.md' '/.mindmount/status' '/.mindmount/search/' '/.mindmount/index/' '/.mindmount/cache/' '/transcripts/' >"$dir/.gitignore"
  for ((i = 0; i < n; i++)); do
    if ((i % 10 < 6)); then rel="user_memory/fact-$i.md"
    elif ((i % 10 < 9)); then rel="character_memory/style-$i.md"
    else mkdir -p "$dir/notes/topic-$((i % 20))"; rel="notes/topic-$((i % 20))/note-$i.md"; fi
    printf -- '---\ndescription: Memory number %d about topic %d\n---\n# Memory %d\n\n## Fact\nYou mentioned item %d while talking about topic %d. Lorem ipsum dolor sit amet.\n\n## Access log\nused, 01.09.26\n' \
      "$i" "$((i % 97))" "$i" "$i" "$((i % 97))" >"$dir/$rel"
  done
  git -C "$dir" init -q -b main
  git -C "$dir" config gc.auto 0
  git -C "$dir" add -A
  git -C "$dir" commit -q -m "bench seed"
}

now() { date +%s%N; }
secs() { awk -v ns="$1" 'BEGIN { printf "%.4f", ns / 1e9 }'; }

best_of() {
  local best="" s e t i
  "$@" >/dev/null 2>&1 || true
  for ((i = 0; i < REPEAT; i++)); do
    s=$(now); "$@" >/dev/null 2>&1 || true; e=$(now)
    t=$((e - s))
    if [ -z "$best" ] || ((t < best)); then best=$t; fi
  done
  secs "$best"
}

# quantile Q VALUES...: the Q-quantile (0..1) of the values.
quantile() {
  local q=$1; shift
  printf '%s\n' "$@" | sort -g | awk -v q="$q" '{ v[NR] = $1 } END { i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}

op_grep() { grep -r -l "item 4242 " "$1" >/dev/null || true; }
op_cat()  { (cd "$1" && xargs -d '\n' -a "$list" cat >/dev/null); }

declare -A val
cols=(startup rss commit render recall grep cat)
for size in "${sizes[@]}"; do
  echo "== $size memories: creating the repository"
  a="$work/a-$size" b="$work/b-$size"
  mnt="$work/mnt-$size"
  make_repo "$a" "$size"
  cp -a "$a" "$b"
  mkdir -p "$mnt"
  list="$work/list-$size"
  (cd "$b" && find . -path ./.git -prune -o -type f -print | sed 's|^\./||') >"$list"
  sync

  s=$(now)
  "$work/mindmount" mount "$a" "$mnt" --consolidate=false --debounce "${DEBOUNCE_MS}ms" >"$work/out-$size" 2>"$work/log-$size" &
  pid=$!
  until grep -q "mindmount: mounted" "$work/out-$size" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/log-$size"; exit 1; }
    sleep 0.01
  done
  e=$(now)
  val[$size,startup]=$(secs $((e - s)))
  sleep 1
  val[$size,rss]=$(awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")

  # Commit latency of one file: append through the mount until HEAD moves.
  lat=()
  for ((i = 0; i < 5; i++)); do
    h0=$(git -C "$a" rev-parse HEAD)
    s=$(now)
    echo "used, 0$((i + 1)).10.26" >>"$mnt/user_memory/fact-0.md"
    while [ "$(git -C "$a" rev-parse HEAD)" = "$h0" ]; do sleep 0.002; done
    e=$(now)
    lat+=("$(awk -v ns="$((e - s))" -v d="$DEBOUNCE_MS" 'BEGIN { printf "%.4f", ns / 1e9 - d / 1000 }')")
  done
  val[$size,commit]=$(quantile 0.5 "${lat[@]}")

  # Render after a change: each round changes a memory, then cats both
  # indexes and CONTEXT.md (the first read after a change renders).
  ren=()
  for ((i = 0; i < 20; i++)); do
    echo "used, 1$((i % 9)).10.26" >>"$mnt/user_memory/fact-$((i * 10)).md"
    s=$(now)
    cat "$mnt/user_memory.md" "$mnt/character_memory.md" "$mnt/CONTEXT.md" >/dev/null
    e=$(now)
    ren+=("$(secs $((e - s)))")
  done
  val[$size,render]=$(quantile 0.5 "${ren[@]}")

  rec=()
  for ((i = 0; i < 40; i++)); do
    s=$(now)
    cat "$mnt/.mindmount/search/item $((i * 37 % size)) topic $((i % 97))" >/dev/null
    e=$(now)
    rec+=("$(secs $((e - s)))")
  done
  val[$size,recall]=$(quantile 0.95 "${rec[@]}")

  gm=$(best_of op_grep "$mnt"); gd=$(best_of op_grep "$b")
  cm=$(best_of op_cat "$mnt"); cdir=$(best_of op_cat "$b")
  val[$size,grep]=$(awk -v m="$gm" -v d="$gd" 'BEGIN { printf "%.2f", m / d }')
  val[$size,cat]=$(awk -v m="$cm" -v d="$cdir" 'BEGIN { printf "%.2f", m / d }')
  echo "   startup ${val[$size,startup]}s rss ${val[$size,rss]}MB commit ${val[$size,commit]}s render ${val[$size,render]}s recall-p95 ${val[$size,recall]}s grep ${val[$size,grep]}x cat ${val[$size,cat]}x"

  kill -TERM "$pid"
  wait "$pid" || { echo "mindmount mount exited non-zero"; cat "$work/log-$size"; }
  pid=""
  rm -rf "$a" "$b"
done

echo
printf '%-9s %11s %9s %13s %12s %13s %9s %9s\n' memories "startup s" "RSS MB" "commit 1 s" "render s" "recall p95 s" "grep x" "cat x"
for size in "${sizes[@]}"; do
  printf '%-9s %11s %9s %13s %12s %13s %9s %9s\n' "$size" "${val[$size,startup]}" "${val[$size,rss]}" "${val[$size,commit]}" "${val[$size,render]}" "${val[$size,recall]}" "${val[$size,grep]}" "${val[$size,cat]}"
done
echo
# Super-linear growth: a cost that grows more than 1.5x faster than the
# repository between two rows (ratios grep/cat should stay flat).
flags=0
for ((k = 1; k < ${#sizes[@]}; k++)); do
  p=${sizes[k - 1]} n=${sizes[k]}
  for c in startup rss commit render recall grep cat; do
    f=$(awk -v a="${val[$p,$c]}" -v b="${val[$n,$c]}" -v sp="$p" -v sn="$n" -v c="$c" 'BEGIN {
      if (a <= 0) exit
      grow = b / a; size = sn / sp
      if (c == "grep" || c == "cat") size = 1
      if (grow > 1.5 * size && b > 0.005) printf "%s grows %.1fx from %d to %d memories (size %.0fx)", c, grow, sp, sn, sn / sp }')
    if [ -n "$f" ]; then echo "SUPER-LINEAR: $f"; flags=$((flags + 1)); fi
  done
done
((flags)) || echo "no cost grows faster than the repository"
