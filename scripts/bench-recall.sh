#!/bin/sh
# Recall latency against its goal, outside the test suite (a busy machine
# must not fail a test): one golden-set question against a 10,000-memory
# index, in-process. Prints p50/p95 and the ratio p95/goal (goal: p95 < 5 ms
# on a quiet machine) with the load average it ran under, and exits 1 when
# the ratio is above 1.
#
#   scripts/bench-recall.sh            # 5,000 queries
#   N=20000 scripts/bench-recall.sh
set -eu
cd "$(dirname "$0")/.."
N=${N:-5000}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(go test -run '^$' -bench '^BenchmarkSearch$' -benchtime "${N}x" ./memgraph/recall/)
line=$(printf '%s\n' "$out" | grep '^BenchmarkSearch')
printf '%s\n' "$line" | awk '{
	for (i = 1; i <= NF; i++) {
		if ($i == "p50-ms") p50 = $(i-1)
		if ($i == "p95-ms") p95 = $(i-1)
		if ($i == "p95/goal") r = $(i-1)
	}
	printf "recall query at 10,000 memories, in-process: p50 %.3f ms, p95 %.3f ms; p95/goal %.3f (goal: p95 < 5 ms)\n", p50, p95, r
	exit (r > 1)
}'
