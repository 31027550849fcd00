#!/bin/sh
# bench-http.sh: what mindmount adds to a /v1/chat request at 10,000 memories,
# against an instant fake model, and the reference's approach of re-reading
# every memory file per request. Prints p50/p95 (ms) and requests per second
# for: the model call alone, mindmount's own work, /v1/chat end to end, rescan.
set -eu
cd "$(dirname "$0")/.."
N=${N:-200}
go test -run '^$' -bench 'Chat10k' -benchtime "${N}x" ./serve/httpapi
