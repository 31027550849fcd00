#!/usr/bin/env bash
# bench-coldchat.sh: the first /v1/chat after `mindmount serve --http` starts
# against warm ones (issue 27: a first chat within 2x of a warm one). One user
# with MEMORIES memories (default 1000), the fake model (scripts/fakellm,
# instant), ROUNDS starts (default 5): each sends its first chat as soon as
# the readiness line is printed, then WARM more (default 20). Prints the
# median cold and warm chat (ms, curl's total time of the whole stream) and
# their ratio. Needs root (serve runs the user's worker with the user's uid).
#
# SETTLE=S waits S seconds after the readiness line before the first chat
# (what the background warm-up covers by then).
#
# usage: scripts/bench-coldchat.sh
# env:   MEMORIES=1000 ROUNDS=5 WARM=20 SETTLE=0
set -euo pipefail
cd "$(dirname "$0")/.."

MEMORIES=${MEMORIES:-1000}
ROUNDS=${ROUNDS:-5}
WARM=${WARM:-20}
SETTLE=${SETTLE:-0}

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
go build -o "$work/mindmount" ./cmd/mindmount
go build -o "$work/fakellm" ./scripts/fakellm
mindmount=$work/mindmount

"$work/fakellm" >"$work/llm.url" &
llm=$!
for _ in $(seq 1 100); do [[ -s $work/llm.url ]] && break; sleep 0.1; done
export MINDMOUNT_LLM=ollama MINDMOUNT_MODEL=fake OLLAMA_HOST=$(head -1 "$work/llm.url")

root=$work/root
"$mindmount" users add "$root" alice >/dev/null
repo=$root/users/alice
owner=$(stat -c %u:%g "$repo")
for i in $(seq 1 "$MEMORIES"); do
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
git -C "$repo" add -A >/dev/null
git -C "$repo" commit -qm "bench: $MEMORIES memories"
chown -R "$owner" "$repo"

chat() { # prints the chat's total time in microseconds; a failed chat ends the script
  curl -sf -o "$work/answer" -w '%{time_total}\n' -H 'Content-Type: application/json' \
    -d '{"userId":"alice","message":"What do I drink in the morning before work?","sessionId":"s'"$1"'"}' \
    "http://$addr/v1/chat" | awk '{printf "%d\n", $1 * 1000000}'
  grep -q '"content":"[^"]' "$work/answer" || { echo "the chat did not answer:" >&2; cat "$work/answer" "$work/serve.log" >&2; exit 1; }
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$work/cold" ; : >"$work/warm"
for r in $(seq 1 "$ROUNDS"); do
  "$mindmount" serve --root "$root" --http 127.0.0.1:0 --every 100000 --idle 1000h >"$work/serve.out" 2>"$work/serve.log" &
  pid=$!
  addr=
  for _ in $(seq 1 3000); do
    addr=$(sed -n 's/^mindmount: serving .*, http on //p' "$work/serve.out" 2>/dev/null)
    [[ -n $addr ]] && break
    sleep 0.01
  done
  [[ -n $addr ]] || { cat "$work/serve.log"; exit 1; }
  sleep "$SETTLE"
  chat "c$r" >>"$work/cold"
  for w in $(seq 1 "$WARM"); do chat "w$r-$w" >>"$work/warm"; done
  kill -TERM "$pid"; wait "$pid" || true; pid=
  [[ -z ${KEEPLOG:-} ]] || cp "$work/serve.log" "$KEEPLOG.$r"
done
cold=$(median <"$work/cold") warm=$(median <"$work/warm")
printf 'first chat after start (median of %d starts): %.1f ms; warm chat (median of %d): %.1f ms; ratio %.2fx (goal: at most 2x)\n' \
  "$ROUNDS" "$(echo "$cold / 1000" | bc -l)" "$((ROUNDS * WARM))" "$(echo "$warm / 1000" | bc -l)" "$(echo "$cold / $warm" | bc -l)"
printf 'cold chats (ms):'; awk '{printf " %.1f", $1/1000}' "$work/cold"; echo
