#!/usr/bin/env bash
# Measures mindmount serve (issues 8 and 22): configures USERS users
# (default 200), each a mindmount repository with MEMORIES memories (default
# 50), serves them with one daemon — a root daemon and one worker process
# per user, running as the user — and prints:
#   - the RSS of the daemon and of all workers with every user idle, the
#     median worker, and after touching 100 users
#   - the first read of MNT/<id>/user_memory.md of a user nobody read yet
#     (its worker running since the start), median and worst of 20 users
#   - cold: COLD users (default 10) added one at a time while serve runs
#     (users.json, SIGHUP): the time from SIGHUP until MNT/<id> is mounted,
#     and from then until the first read of MNT/<id>/user_memory.md
#     returns — a fresh worker (a spare given the user) opening the
#     repository and answering (goal: under 50 ms at 50 memories) — against
#     the same read right after (warm). Reads are made by the shell itself
#     (bash's read builtin): starting cat costs more than the read under
#     load
#   - warm "grep -r" through MNT/<id> against the same tree unmounted
#     (goal: at most 2x), median of 20 runs each
#   - chat through the HTTP front: CHATS (default 200) /v1/chat requests
#     through serve --http (front -> the user's worker over its unix
#     socket) against the same requests sent to the worker's socket
#     directly, with the fake model (scripts/fakellm); p50/p95 of each and
#     the difference (goal: under 5 ms at p95)
#   - writes per second with WRITERS users (default 20) writing at once
#     (each WRITES new memories, default 50, through the mount as fast as
#     it can), and the share of those writes committed within 3 seconds
#     (commit times have a resolution of one second and are rounded up,
#     so the share is a lower bound)
# Needs root (the mount hands directories to other uids) and /dev/fuse.
#
# usage: scripts/bench-serve.sh
# env:   USERS=200 MEMORIES=50 WRITERS=20 WRITES=50 COLD=10 CHATS=200
# With --mount every user's worker starts with the daemon (a FUSE
# connection is served by one process for its life), so memory grows with
# the users: see the median worker's RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

USERS=${USERS:-200}
MEMORIES=${MEMORIES:-50}
WRITERS=${WRITERS:-20}
WRITES=${WRITES:-50}
COLD=${COLD:-10}
CHATS=${CHATS:-200}
((USERS >= 100 + 20 + WRITERS)) || { echo "USERS must be at least $((120 + WRITERS))" >&2; exit 2; }

work=$(mktemp -d /tmp/mindmount-bench-serve.XXXXXX)
chmod 755 "$work"
root=$work/root mnt=$work/mnt
mkdir -p "$root/users" "$mnt"
pid= hpid= fpid=
cleanup() {
  for p in $pid $hpid $fpid; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if grep -qs " $mnt" /proc/mounts; then
    grep " $mnt/" /proc/mounts | while read -r _ m _; do umount -l "$m" 2>/dev/null || true; done
    umount -l "$mnt" 2>/dev/null || true
  fi
  # never remove through a mount that is still there
  grep -qs " $work/" /proc/mounts || rm -rf "$work"
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
# workers' RSS: the sum and the median, in MB, and the median of their
# private memory (RssAnon: the rest is the binary's pages, shared by all);
# one of the workers is the spare, started ahead for the next user.
wrss() {
  local p rows
  rows=$(for p in $(pgrep -P "$pid" -f " worker "); do awk '/VmRSS/ {r=$2} /RssAnon/ {a=$2} END {print r, a}' "/proc/$p/status" 2>/dev/null; done)
  printf '%s\n' "$rows" | sort -n | awk '{r[NR]=$1; s+=$1} END {printf "%d workers, %.1f MB in all, median %.1f MB", NR, s/1024, r[int((NR+1)/2)]/1024}'
  printf '%s\n' "$rows" | sort -n -k2 | awk '{a[NR]=$2} END {printf " (private: median %.1f MB)", a[int((NR+1)/2)]/1024}'
}
now() { echo "${EPOCHREALTIME/./}"; } # microseconds, without a process
# readf reads a whole file in the shell itself (no process to start, whose
# cost under load would hide the read's): bash's read builtin.
readf() { IFS= read -r -d '' _ <"$1" || true; }
ms_of() { printf '%.1f' "$(echo "$1 / 1000" | bc -l)"; }

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

# First cat of users nobody read yet (their workers run since the start).
times=()
for i in $(seq 101 120); do
  a=$(now)
  readf "$mnt/u$i/user_memory.md"
  b=$(now)
  times+=($((b - a)))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
printf 'first read of user_memory.md of an untouched user, worker running (%d memories): median %s ms, worst %s ms (20 users)\n' \
  "$MEMORIES" "$(ms_of "${sorted[10]}")" "$(ms_of "${sorted[19]}")"

# Cold: a user added while serve runs gets a fresh worker (the spare).
hup=() cold=() warm=()
for k in $(seq 1 "$COLD"); do
  i=$((USERS + k)) id=$((20000 + USERS + k))
  cp -a "$seed" "$root/users/u$i"
  chown -R "$id:$id" "$root/users/u$i"
  sed -i "s/]}\$/,{\"id\":\"u$i\",\"uid\":$id,\"gid\":$id}]}/" "$root/users.json"
  sleep 1 # let the last one's spare start
  a=$(now)
  kill -HUP "$pid"
  until [[ "$(</proc/mounts)" == *" $mnt/u$i "* ]]; do :; done
  b=$(now)
  readf "$mnt/u$i/user_memory.md"
  c=$(now)
  readf "$mnt/u$i/user_memory.md"
  d=$(now)
  hup+=($((b - a))) cold+=($((c - b))) warm+=($((d - c)))
done
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "median %.1f ms, worst %.1f ms", a[int((NR+1)/2)]/1000, a[NR]/1000}'; }
echo "cold user ($COLD added one at a time, SIGHUP): SIGHUP to mounted $(stats "${hup[@]}")"
echo "  first read of user_memory.md from the fresh worker $(stats "${cold[@]}"); the same read again (warm) $(stats "${warm[@]}")"
grep -o 'ready_ms=[0-9]*' "$work/serve.log" | tail -n "$COLD" | cut -d= -f2 | sort -n |
  awk '{a[NR]=$1} END {printf "  the daemon saw them ready (spare given the user -> serving) in: median %d ms, worst %d ms", a[int((NR+1)/2)], a[NR]}'
grep -o 'cpu_ms=[0-9.]*' "$work/serve.log" | tail -n "$COLD" | cut -d= -f2 | sort -n |
  awk '{a[NR]=$1} END {printf "; CPU time of those starts: median %.1f ms, worst %.1f ms\n", a[int((NR+1)/2)], a[NR]}'

# Concurrent writers, one per user, each as that user's uid.
first=121
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

# Chat through the HTTP front against the same chat sent to the user's
# worker directly (its unix socket), with the fake model: the front's own
# cost (credentials, the hop, the stream passed on). The mount's daemon
# stops first: this one serves a ROOT of its own.
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
go build -o "$work/fakellm" ./scripts/fakellm
"$work/fakellm" >"$work/fakellm.out" &
fpid=$!
until [[ -s $work/fakellm.out ]]; do sleep 0.05; done
hroot=$work/hroot
mkdir -p "$hroot/users"
cp -a "$seed" "$hroot/users/c1"
chown -R 30001:30001 "$hroot/users/c1"
echo '{"users": [{"id":"c1","uid":30001,"gid":30001}]}' >"$hroot/users.json"
MINDMOUNT_LLM=ollama OLLAMA_HOST=$(head -1 "$work/fakellm.out") MINDMOUNT_MODEL=fake \
  "$mindmount" serve --root "$hroot" --http 127.0.0.1:0 --every 1000000 --idle 100h >"$work/http.out" 2>"$work/http.log" &
hpid=$!
for _ in $(seq 1 600); do grep -q "mindmount: serving" "$work/http.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/.*http on //p' "$work/http.out")
[[ -n $addr ]] || { cat "$work/http.log"; exit 1; }
body='{"userId":"c1","message":"What do I like to drink?"}'
front() { curl -sf -o /dev/null -w '%{time_total}\n' "http://$addr/v1/chat" -H 'Content-Type: application/json' -d "$body"; }
front >/dev/null # starts the worker
wpid=$(pgrep -P "$hpid" -u 30001 -f " worker ")
sock=$(ss -xlpn | grep "pid=$wpid," | grep -o '@mindmount-[0-9a-f]*' | head -1)
[[ -n $sock ]] || { echo "no socket of the worker $wpid"; ss -xlpn | grep mindmount; exit 1; }
direct() { curl -sf -o /dev/null -w '%{time_total}\n' --abstract-unix-socket "${sock#@}" "http://worker/v1/chat" -H 'Content-Type: application/json' -H 'X-Mindmount-User: c1' -d "$body"; }
direct >/dev/null
: >"$work/front.t"
: >"$work/direct.t"
for _ in $(seq 1 "$CHATS"); do front >>"$work/front.t"; direct >>"$work/direct.t"; done
pct() { sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p/100+0.5); if (i<1) i=1; printf "%.2f", a[i]*1000}'; }
f50=$(pct "$work/front.t" 50) f95=$(pct "$work/front.t" 95) d50=$(pct "$work/direct.t" 50) d95=$(pct "$work/direct.t" 95)
printf 'chat, %d requests each (fake model): through the front p50 %s ms p95 %s ms; to the worker directly p50 %s ms p95 %s ms; the front adds %.2f ms at p50, %.2f ms at p95\n' \
  "$CHATS" "$f50" "$f95" "$d50" "$d95" "$(echo "$f50 - $d50" | bc -l)" "$(echo "$f95 - $d95" | bc -l)"
# The front's own work, apart from the machine's load: the daemon's CPU
# time per request through the front, less per request sent directly (the
# daemon passes the model calls of both).
cpu() { awk '{print $14 + $15}' "/proc/$hpid/stat"; } # clock ticks
tick=$(getconf CLK_TCK)
c0=$(cpu); for _ in $(seq 1 "$CHATS"); do front >/dev/null; done
c1=$(cpu); for _ in $(seq 1 "$CHATS"); do direct >/dev/null; done
c2=$(cpu)
printf "the daemon's CPU per chat: %.2f ms through the front, %.2f ms sent directly (the model's call): the front's own work %.2f ms\n" \
  "$(echo "($c1 - $c0) * 1000 / $tick / $CHATS" | bc -l)" "$(echo "($c2 - $c1) * 1000 / $tick / $CHATS" | bc -l)" \
  "$(echo "(($c1 - $c0) - ($c2 - $c1)) * 1000 / $tick / $CHATS" | bc -l)"
