#!/usr/bin/env bash
# Measures mindmount serve (issues 8 and 22): configures USERS users
# (default 200), each a mindmount repository with MEMORIES memories (default
# 50), serves them with one daemon — a root daemon and one worker process
# per user, running as the user — and prints:
#   - the RSS of the daemon and of all workers with every user idle, the
#     median worker, and after touching 100 users
#   - the time to the first `cat MNT/<id>/user_memory.md` of a cold user
#     (goal: under 50 ms at 50 memories), median and worst of 20 users
#   - warm "grep -r" through MNT/<id> against the same tree unmounted
#     (goal: at most 2x), median of 20 runs each
#   - writes per second with WRITERS users (default 20) writing at once
#     (each WRITES new memories, default 50, through the mount as fast as
#     it can), and the share of those writes committed within 3 seconds
#     (commit times have a resolution of one second and are rounded up,
#     so the share is a lower bound)
# Needs root (the mount hands directories to other uids) and /dev/fuse.
#
# usage: scripts/bench-serve.sh
# env:   USERS=200 MEMORIES=50 WRITERS=20 WRITES=50
# With --mount every user's worker starts with the daemon (a FUSE
# connection is served by one process for its life), so memory grows with
# the users: see the median worker's RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

USERS=${USERS:-200}
MEMORIES=${MEMORIES:-50}
WRITERS=${WRITERS:-20}
WRITES=${WRITES:-50}
((USERS >= 100 + 20 + WRITERS)) || { echo "USERS must be at least $((120 + WRITERS))" >&2; exit 2; }

work=$(mktemp -d /tmp/mindmount-bench-serve.XXXXXX)
chmod 755 "$work"
root=$work/root mnt=$work/mnt
mkdir -p "$root/users" "$mnt"
pid=
cleanup() {
  if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if grep -qs " $mnt " /proc/mounts; then umount -l "$mnt" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Every loaded user holds an inotify instance: the kernel's limit per uid
# (fs.inotify.max_user_instances, often 128) caps the users loaded at once;
# past it the daemon unloads the user idle the longest to make room.
echo "fs.inotify.max_user_instances: $(cat /proc/sys/fs/inotify/max_user_instances)"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
go build -o "$work/mindmount" ./cmd/mindmount
mindmount=$work/mindmount
ms() { echo $(( $(date +%s%N) / 1000000 )); }
rss() { awk '/VmRSS/ {printf "%.1f MB", $2/1024}' "/proc/$pid/status"; }
# workers' RSS: the sum and the median, in MB.
wrss() {
  local kb=() p
  for p in $(pgrep -P "$pid" -f " worker "); do kb+=($(awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)); done
  printf '%s\n' "${kb[@]}" | sort -n | awk '{a[NR]=$1; s+=$1} END {printf "%d workers, %.1f MB in all, median %.1f MB", NR, s/1024, a[int((NR+1)/2)]/1024}'
}

# One repository with MEMORIES memories, committed, copied for every user.
t0=$(ms)
seed=$work/seed
"$mindmount" init "$seed" --user Bench >/dev/null
for i in $(seq 1 "$MEMORIES"); do
  cat >"$seed/user_memory/fact-$i.md" <<EOF
---
description: Benchmark fact number $i about the user
---
# Fact $i

## Fact
The user told us fact number $i.

## Access log
used, 01.12.26
EOF
done
git -C "$seed" add -A >/dev/null
git -C "$seed" commit -qm "bench: $MEMORIES memories"
for i in $(seq 1 "$USERS"); do
  cp -a "$seed" "$root/users/u$i"
done
# Register them all at once (mindmount users add per user costs a process
# each; the registry format is host.Entry).
{
  printf '{"users": ['
  for i in $(seq 1 "$USERS"); do
    ((i > 1)) && printf ','
    printf '{"id":"u%d","uid":%d,"gid":%d}' "$i" $((20000 + i)) $((20000 + i))
  done
  printf ']}\n'
} >"$root/users.json"
for i in $(seq 1 "$USERS"); do chown -R $((20000 + i)):$((20000 + i)) "$root/users/u$i"; done
echo "setup: $USERS users x $MEMORIES memories in $(( ($(ms) - t0) / 1000 )) s"

"$mindmount" serve --root "$root" --mount "$mnt" --unload-after 10m --consolidate=false >"$work/serve.out" 2>"$work/serve.log" &
pid=$!
for _ in $(seq 1 3000); do grep -q "mindmount: serving" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q "mindmount: serving" "$work/serve.out" || { cat "$work/serve.log"; exit 1; }
sleep 1
echo "RSS, all $USERS users idle:        daemon $(rss); $(wrss)"

for i in $(seq 1 100); do cat "$mnt/u$i/user_memory.md" >/dev/null; done
echo "RSS, after touching 100 users:     daemon $(rss); $(wrss)"

# Warm grep -r: the same tree through the user's mount and unmounted.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
grepms() { for _ in $(seq 1 20); do a=$(date +%s%N); grep -rq "fact number 999" "$1" 2>/dev/null || true; b=$(date +%s%N); echo $(( (b - a) / 1000 )); done | median; }
grep -rq x "$mnt/u1" || true
m=$(grepms "$mnt/u1"); d=$(grepms "$root/users/u1")
printf 'warm grep -r of %d memories: mount %.2f ms, unmounted %.2f ms, ratio %.2fx\n' "$MEMORIES" "$(echo "$m / 1000" | bc -l)" "$(echo "$d / 1000" | bc -l)" "$(echo "$m / $d" | bc -l)"

# Cold first cat: users nobody touched yet.
times=()
for i in $(seq 101 120); do
  a=$(date +%s%N)
  cat "$mnt/u$i/user_memory.md" >/dev/null
  b=$(date +%s%N)
  times+=($(( (b - a) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
printf 'first cat of a cold user (%d memories): median %.1f ms, worst %.1f ms (20 users)\n' \
  "$MEMORIES" "$(echo "${sorted[10]} / 1000" | bc -l)" "$(echo "${sorted[19]} / 1000" | bc -l)"

# Concurrent writers, one per user, each as that user's uid.
first=$((121))
t0=$(date +%s%N)
writers=()
for w in $(seq 0 $((WRITERS - 1))); do
  u=$((first + w))
  (
    for j in $(seq 1 "$WRITES"); do
      printf -- '---\ndescription: Written fact %d\n---\n# Written %d\n\n## Fact\nFact %d.\n\n## Access log\n' "$j" "$j" "$j" \
        | setpriv --reuid $((20000 + u)) --regid $((20000 + u)) --clear-groups sh -c "cat > $mnt/u$u/user_memory/written-$j.md"
      echo "written-$j.md $(date +%s%N)" >>"$work/writes-u$u"
    done
  ) &
  writers+=($!)
done
wait "${writers[@]}"
t1=$(date +%s%N)
total=$((WRITERS * WRITES))
printf 'writes: %d memories by %d users at once in %.2f s = %.0f writes/s\n' \
  "$total" "$WRITERS" "$(echo "($t1 - $t0) / 1000000000" | bc -l)" "$(echo "$total / (($t1 - $t0) / 1000000000)" | bc -l)"

# Let the daemon commit (debounce 1 s, max-wait 10 s), then compare each
# write with the commit that holds it.
sleep 12
within=0
for w in $(seq 0 $((WRITERS - 1))); do
  u=$((first + w))
  declare -A committed=()
  while read -r ct files; do
    for f in $files; do committed[$(basename "$f")]=$ct; done
  done < <(git -c safe.directory='*' -C "$root/users/u$u" log --format='%ct' --name-only --diff-filter=A -- user_memory | awk 'NF==1 && $1 ~ /^[0-9]+$/ {if (line) print line; line=$1; next} NF {line=line" "$1} END {if (line) print line}')
  while read -r name wt; do
    ct=${committed[$name]:-}
    [[ -n $ct ]] || continue
    # commit time rounded up to the next second, minus the write time
    if (( (ct + 1) * 1000000000 - wt <= 3000000000 )); then within=$((within + 1)); fi
  done <"$work/writes-u$u"
  unset committed
done
printf 'committed within 3 s: %d of %d writes (%.0f%%)\n' "$within" "$total" "$(echo "100 * $within / $total" | bc -l)"
echo "RSS, after the writers:            daemon $(rss); $(wrss)"
