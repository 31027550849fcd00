#!/bin/sh
# Offline evaluation of recall: recall@1, recall@3, MRR and retired results
# on the golden set (memgraph/recall/golden/set), alone and inside a
# 10,000-memory repository, plus p50/p95 query latency. Exits non-zero when
# a retired memory is returned or the quality goals are missed.
#
#   scripts/eval.sh            # keyword ranking
#   scripts/eval.sh -v         # also list questions not answered first
#   scripts/eval.sh --vectors  # also fuse with the configured embedding model
set -eu
cd "$(dirname "$0")/.."
exec go run ./cmd/mindmount eval "$@"
