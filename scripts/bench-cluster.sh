#!/usr/bin/env bash
# bench-cluster.sh: routing overhead of a mindmount serve cluster over
# loopback. One etcd (/usr/bin/etcd), a git host (git daemon, a bare
# repository per user with a pre-receive hook refusing non-fast-forwards),
# two serve nodes a and b with separate ROOTs, nginx (Debian's) in front
# hashing on X-Mindmount-User. USERS users (default 20), all taken by
# node a first; then N requests (default 500, GET /v1/git/status, which
# the user's worker answers) are timed three ways on one keep-alive
# connection each:
#   direct  - straight to the owner a
#   hop     - to b, which forwards once to a
#   nginx   - nginx -> b -> a (nginx's upstream holds b only: the worst
#             case, a request that always lands on the wrong node)
# Prints p50/p99 (ms) of each and the ratios against direct. Then node a is
# SIGKILLed and the time until b serves a user of a's is printed (the
# lease TTL, default 3 s, plus the take-over's fetch). Needs root (workers
# run as the users' uids).
#
# usage: scripts/bench-cluster.sh
# env:   USERS=20 N=500 TTL=3s
set -euo pipefail
cd "$(dirname "$0")/.."

USERS=${USERS:-20}
N=${N:-500}
TTL=${TTL:-3s}

work=$(mktemp -d /tmp/mindmount-bench-cluster.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/mindmount" ./cmd/mindmount
mm=$work/mindmount
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# etcd
ec=$(port) ep=$(port)
/usr/bin/etcd --name b --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$ec" \
  --advertise-client-urls "http://127.0.0.1:$ec" --listen-peer-urls "http://127.0.0.1:$ep" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ep" --initial-cluster "b=http://127.0.0.1:$ep" \
  --log-level error >"$work/etcd.log" 2>&1 &
pids+=($!)

# the git host
gp=$(port)
mkdir -p "$work/remotes"
cat >"$work/pre-receive" <<'HOOK'
#!/bin/sh
while read old new ref; do
  echo "$old $new $ref" >> "$GIT_DIR/updates.log"
  if [ "$old" != 0000000000000000000000000000000000000000 ] && ! git merge-base --is-ancestor "$old" "$new"; then
    echo "REFUSED $ref" >> "$GIT_DIR/updates.log"; exit 1
  fi
done
HOOK
users=()
for i in $(seq 1 "$USERS"); do users+=("u$i"); done
for u in "${users[@]}"; do
  git init -q --bare "$work/remotes/$u.git"
  install -m 755 "$work/pre-receive" "$work/remotes/$u.git/hooks/pre-receive"
done
chmod -R 777 "$work/remotes"
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
  git daemon --reuseaddr --export-all --enable=receive-pack --listen=127.0.0.1 --port="$gp" \
  --base-path="$work/remotes" "$work/remotes" &
pids+=($!)

export MINDMOUNT_API_KEY=bench-cluster-key
declare -A addr
uid=23000
for n in a b; do
  mkdir -p "$work/$n"
  for u in "${users[@]}"; do
    "$mm" users add "$work/$n" "$u" --uid $((uid + ${u#u})) >/dev/null
    "$mm" remote set "$work/$n/users/$u" "git://127.0.0.1:$gp/$u.git" >/dev/null
  done
  addr[$n]=127.0.0.1:$(port)
  "$mm" serve --root "$work/$n" --http "${addr[$n]}" --cluster "http://127.0.0.1:$ec" \
    --node "$n" --advertise "${addr[$n]}" --cluster-ttl "$TTL" >"$work/$n.out" 2>"$work/$n.log" &
  pids+=($!)
  declare "pid_$n=$!"
  for _ in $(seq 600); do grep -q "mindmount: serving" "$work/$n.out" && break; sleep 0.1; done
  grep -q "mindmount: serving" "$work/$n.out" || { cat "$work/$n.log"; exit 1; }
done

# nginx: its upstream holds b only (hop forced); the recipe in
# docs/many-hosts.md lists every node with hash ... consistent.
np=$(port)
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  upstream mindmount {
    hash \$http_x_mindmount_user consistent;
    server ${addr[b]};
    keepalive 16;
  }
  server {
    listen 127.0.0.1:$np;
    location / {
      proxy_pass http://mindmount;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -g 'daemon off;' &
pids+=($!)
sleep 0.5

auth=(-H "Authorization: Bearer $MINDMOUNT_API_KEY")
# a takes every user
for u in "${users[@]}"; do
  code=$(curl -s -o "$work/take.out" -w '%{http_code}' "${auth[@]}" -H "X-Mindmount-User: $u" "http://${addr[a]}/v1/git/status?userId=$u")
  [[ $code == 200 ]] || { echo "taking $u on a: $code $(cat "$work/take.out")"; tail -20 "$work/a.log"; exit 1; }
done

# times BASE prints p50 and p99 (ms) of N requests spread over the users
times() {
  local base=$1
  # one curl, one keep-alive connection; userId in the query names the user
  local urls=()
  for i in $(seq 1 "$N"); do urls+=(-o /dev/null "$base/v1/git/status?userId=u$(( (i % USERS) + 1 ))"); done
  curl -s "${auth[@]}" -w '%{time_total}\n' "${urls[@]}" |
    sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f\n", a[int(NR*0.5)]*1000, a[int(NR*0.99)]*1000}'
}
read -r d50 d99 < <(times "http://${addr[a]}")
read -r h50 h99 < <(times "http://${addr[b]}")
read -r n50 n99 < <(times "http://127.0.0.1:$np")
echo "requests: $N over $USERS users (GET /v1/git/status, answered by the owner's worker)"
printf 'direct to the owner        p50 %7.3f ms  p99 %7.3f ms\n' "$d50" "$d99"
printf 'one forward hop            p50 %7.3f ms  p99 %7.3f ms  (+%.3f ms, ratio %.2f)\n' "$h50" "$h99" "$(echo "$h50 - $d50" | bc -l)" "$(echo "$h50 / $d50" | bc -l)"
printf 'nginx + one forward hop    p50 %7.3f ms  p99 %7.3f ms  (+%.3f ms, ratio %.2f)\n' "$n50" "$n99" "$(echo "$n50 - $d50" | bc -l)" "$(echo "$n50 / $d50" | bc -l)"

# SIGKILL a: how long until b serves a's user
kill -KILL "$pid_a"
start=$(date +%s.%N)
until curl -sf -o /dev/null "${auth[@]}" -H "X-Mindmount-User: u1" "http://${addr[b]}/v1/git/status?userId=u1"; do sleep 0.05; done
end=$(date +%s.%N)
printf 'node a SIGKILLed: b served its user after %.2f s (lease TTL %s)\n' "$(echo "$end - $start" | bc -l)" "$TTL"
if grep -h REFUSED "$work"/remotes/*.git/updates.log 2>/dev/null; then echo "non-fast-forward pushes were attempted (refused)"; fi
