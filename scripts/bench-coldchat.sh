#!/usr/bin/env bash
# bench-coldchat.sh: the first /v1/chat after `mindmount serve --http` starts
# against warm ones (the goal: a first chat within 2x of a warm one in every
# start). For each size in MEMORIES (default "1000 10000"): one user with
# that many memories, the fake model (scripts/fakellm, instant), ROUNDS
# starts (default 20); each start sends its first chat as soon as the
# readiness line is printed, then WARM more (default 20). Needs root (serve
# runs the user's worker with the user's uid).
#
# Printed per size, with the load average: start to ready (median and
# worst), the median first and warm chat (ms, curl's total time of the
# whole stream), the WORST first chat / warm chat ratio over the starts
# (each start's first chat against its own warm median) and how many
# starts were over 2x, and the private memory (RssAnon) of the daemon and
# of the user's worker after the last start's chats. Then the throughput
# of CLIENTS (default 8) clients chatting for DURATION seconds (default
# 10; 0 skips it) with the model answering after DELAY (default 250ms;
# fakellm -delay, spoken over the OpenAI wire, a hosted provider), first
# with --llm-concurrency 2 (the old default) then with the provider's
# default, in the same run (with the last size's user).
#
# SETTLE=S waits S seconds after the readiness line before the first chat.
# MINDMOUNT=/path/to/binary measures that build instead (a before/after
# pair with the same script). KEEPLOG=PREFIX keeps each start's log.
#
# usage: scripts/bench-coldchat.sh
# env:   MINDMOUNT=(built from this tree) MEMORIES="1000 10000" ROUNDS=20 WARM=20 SETTLE=0 CLIENTS=8 DURATION=10 DELAY=250ms
set -euo pipefail
cd "$(dirname "$0")/.."

MEMORIES=${MEMORIES:-1000 10000}
ROUNDS=${ROUNDS:-20}
WARM=${WARM:-20}
SETTLE=${SETTLE:-0}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-10}
DELAY=${DELAY:-250ms}

work=$(mktemp -d /tmp/mindmount-bench-coldchat.XXXXXX)
chmod 755 "$work"
pid= llm=
cleanup() {
  if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [[ -n $llm ]]; then kill -TERM "$llm" 2>/dev/null || true; wait "$llm" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
if [[ -n ${MINDMOUNT:-} ]]; then cp "$MINDMOUNT" "$work/mindmount"; else go build -o "$work/mindmount" ./cmd/mindmount; fi
go build -o "$work/fakellm" ./scripts/fakellm
mindmount=$work/mindmount

"$work/fakellm" >"$work/llm.url" &
llm=$!
for _ in $(seq 1 100); do [[ -s $work/llm.url ]] && break; sleep 0.1; done
export MINDMOUNT_LLM=ollama MINDMOUNT_MODEL=fake OLLAMA_HOST=$(head -1 "$work/llm.url")

# user_root N: sets root to a fresh serve root whose user alice has N
# memories, committed. The tree is the user's before git records it (as
# when the user's worker writes and commits): a chown after the commit
# would leave every index entry's ctime stale, and every start would hash
# every file again. No automatic gc: a gc detached behind the commit would
# write root-owned packs after the chown.
user_root() {
  root=$work/root-$1
  "$mindmount" users add "$root" alice >/dev/null
  local repo=$root/users/alice owner i
  owner=$(stat -c %u:%g "$repo")
  for i in $(seq 1 "$1"); do
    cat >"$repo/user_memory/fact-$i.md" <<EOF
---
description: Benchmark fact number $i about the user's day
---
# Fact $i

## Fact
The user told us fact number $i about coffee, work and the weather.

## Access log
used, 01.12.26
EOF
  done
  chown -R "$owner" "$repo"
  git -c safe.directory="$repo" -c gc.auto=0 -C "$repo" add -A >/dev/null
  git -c safe.directory="$repo" -c gc.auto=0 -C "$repo" commit -qm "bench: $1 memories"
  chown -R "$owner" "$repo/.git"
}
chat() { # prints the chat's total time in microseconds; a failed chat ends the script
  curl -sf -o "$work/answer" -w '%{time_total}\n' -H 'Content-Type: application/json' \
    -d '{"userId":"alice","message":"What do I drink in the morning before work?","sessionId":"s'"$1"'"}' \
    "http://$addr/v1/chat" | awk '{printf "%d\n", $1 * 1000000}'
  grep -q '"content":"[^"]' "$work/answer" || { echo "the chat did not answer:" >&2; cat "$work/answer" "$work/serve.log" >&2; exit 1; }
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# start [FLAGS…]: starts serve, waits for its readiness line, sets pid,
# addr, and appends start to ready (ms) to $work/ready.
start() {
  local t0; t0=$(date +%s%N)
  "$mindmount" serve --root "$root" --http 127.0.0.1:0 --every 100000 --idle 1000h "$@" >"$work/serve.out" 2>"$work/serve.log" &
  pid=$!
  addr=
  for _ in $(seq 1 3000); do
    addr=$(sed -n 's/^mindmount: serving .*, http on //p' "$work/serve.out" 2>/dev/null)
    [[ -n $addr ]] && break
    sleep 0.01
  done
  [[ -n $addr ]] || { cat "$work/serve.log"; exit 1; }
  ms "$t0" >>"$work/ready"
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=; }
# anon PID: RssAnon in MiB.
anon() { awk '/RssAnon/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

# starts N: ROUNDS starts of a user with N memories; prints their figures.
starts() {
  user_root "$1"
  : >"$work/cold"; : >"$work/warm"; : >"$work/ready"; : >"$work/ratio"
  local r c w wpid mem cold warm
  for r in $(seq 1 "$ROUNDS"); do
    start
    sleep "$SETTLE"
    c=$(chat "c$r"); echo "$c" >>"$work/cold"
    : >"$work/warm.r"
    for w in $(seq 1 "$WARM"); do chat "w$r-$w" >>"$work/warm.r"; done
    cat "$work/warm.r" >>"$work/warm"
    echo "$c $(median <"$work/warm.r")" | awk '{printf "%.2f\n", $1/$2}' >>"$work/ratio"
    if [[ $r == "$ROUNDS" ]]; then
      wpid=$(pgrep -P "$pid" -f " worker " | head -1 || true)
      mem="daemon $(anon "$pid") MiB; user's worker ${wpid:+$(anon "$wpid") MiB}"
    fi
    stop
    [[ -z ${KEEPLOG:-} ]] || cp "$work/serve.log" "$KEEPLOG.$1.$r"
  done
  cold=$(median <"$work/cold") warm=$(median <"$work/warm")
  echo "== $1 memories, $ROUNDS starts; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf 'start to ready (ms): median %s, worst %s\n' "$(median <"$work/ready")" "$(sort -n "$work/ready" | tail -1)"
  printf 'first chat after start (median of %d starts): %.1f ms; warm chat (median of %d): %.1f ms; ratio %.2fx\n' \
    "$ROUNDS" "$(echo "$cold / 1000" | bc -l)" "$((ROUNDS * WARM))" "$(echo "$warm / 1000" | bc -l)" "$(echo "$cold / $warm" | bc -l)"
  printf 'first / warm chat, WORST of %d starts: %sx (goal: at most 2x in every start); starts over 2x: %d\n' \
    "$ROUNDS" "$(sort -n "$work/ratio" | tail -1)" "$(awk '$1 > 2' "$work/ratio" | wc -l)"
  printf 'first / warm, start by start:'; tr '\n' ' ' <"$work/ratio"; echo
  printf 'cold chats (ms):'; awk '{printf " %.1f", $1/1000}' "$work/cold"; echo
  echo "RssAnon after the last start's $((WARM + 1)) chats: $mem"
}
for n in $MEMORIES; do starts "$n"; done
[[ $DURATION != 0 ]] || exit 0

# Throughput: CLIENTS clients for DURATION s against a model answering in
# DELAY, over the OpenAI wire (a hosted provider's defaults).
kill -TERM "$llm"; wait "$llm" 2>/dev/null || true
"$work/fakellm" -delay "$DELAY" >"$work/llm.url" &
llm=$!
for _ in $(seq 1 100); do [[ -s $work/llm.url ]] && break; sleep 0.1; done
export MINDMOUNT_LLM=openai OPENAI_BASE_URL=$(head -1 "$work/llm.url")/v1 OPENAI_API_KEY=sk-fake-bench-key
client() { # one client chatting until the deadline; prints one line per answered chat
  local end=$1 i=0
  while (( $(date +%s%N) < end )); do
    i=$((i + 1))
    curl -sf -o /dev/null -H 'Content-Type: application/json' \
      -d '{"userId":"alice","message":"What do I drink?","sessionId":"t'"$2-$i"'"}' "http://$addr/v1/chat" && echo ok
  done
}
through() {
  start "$@"
  chat warmup >/dev/null
  local end=$(( $(date +%s%N) + DURATION * 1000000000 )) n
  n=$(for c in $(seq 1 "$CLIENTS"); do client "$end" "$c" & done; wait) 
  n=$(grep -c ok <<<"$n" || true)
  stop
  echo "scale=1; $n / $DURATION" | bc
}
before=$(through --llm-concurrency 2)
after=$(through)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%d clients, model answering in %s (OpenAI wire), %d s: --llm-concurrency 2 (old default) %s req/s; provider default %s req/s\n' \
  "$CLIENTS" "$DELAY" "$DURATION" "$before" "$after"
