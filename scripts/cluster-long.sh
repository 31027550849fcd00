#!/usr/bin/env bash
# cluster-long.sh: the long form of the cluster test. A real etcd
# (/usr/bin/etcd), a git host (git daemon; a bare repository per user
# whose pre-receive hook refuses and logs any non-fast-forward update),
# Debian's nginx with the recipe of docs/many-hosts.md in front, serve
# nodes a, b and c with separate ROOTs (--sync-replication by default),
# and a fourth node d joining halfway. WRITERS clients write through
# nginx for USERS users, half over HTTP (chat + bye, the fake model turns
# "w-N" into the memory w-N) and half over MCP (create user_memory/w-N.md);
# meanwhile PAUSES trials each SIGSTOP one node (serve and its workers)
# until another node serves one of its users, then SIGCONT it. At the end
# every acknowledged write must be on the git host (writes lost: 0) and
# no non-fast-forward push may have been tried (forced pushes: 0); the
# script exits 1 otherwise. It prints requests served, the forward hop
# (p50/p95, sampled under the load), take-over time after a pause
# (p50/p95) and the nodes' replication lag (p95 of /health samples).
# Needs root (each user's worker runs as its uid), etcd, git, nginx.
#
# usage: scripts/cluster-long.sh
# env:   USERS=300 PAUSES=100 WRITERS=6 TTL=2s SYNC=true KEEP= (keep the folder)
set -euo pipefail
cd "$(dirname "$0")/.."

USERS=${USERS:-300}
PAUSES=${PAUSES:-100}
WRITERS=${WRITERS:-6}
TTL=${TTL:-2s}
SYNC=${SYNC:-true}

work=$(mktemp -d /tmp/mindmount-cluster-long.XXXXXX)
chmod 755 "$work"
driver=
cleanup() {
  # the driver kills every child it started (process groups, serve's
  # workers with serve); this catches a driver killed hard.
  if [[ -n $driver ]]; then kill -TERM "$driver" 2>/dev/null || true; wait "$driver" 2>/dev/null || true; fi
  [[ -n ${KEEP:-} ]] && { echo "kept $work"; return; }
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/mindmount" ./cmd/mindmount
go build -o "$work/clusterlong" ./scripts/clusterlong
# the git host (git daemon, root) serves repositories the workers
# (other uids) pushed objects into, as bench-cluster.sh's does
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
"$work/clusterlong" -mindmount "$work/mindmount" -work "$work" -users "$USERS" -pauses "$PAUSES" \
  -writers "$WRITERS" -ttl "$TTL" -sync-replication="$SYNC" &
driver=$!
wait "$driver"
rc=$?
driver=
exit $rc
