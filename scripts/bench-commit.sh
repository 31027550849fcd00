#!/bin/sh
# bench-commit.sh — commit latency for one changed file in a 10,000-file
# repository: mindmount's gitrepo (Commit, and Apply which also writes and
# fsyncs the file) against the git CLI ("git add FILE && git commit"),
# measured in one run, with the ratio git CLI / mindmount.
#
# usage: scripts/bench-commit.sh [BENCHTIME]   (default 30x)
set -eu
cd "$(dirname "$0")/.."
benchtime=${1:-30x}
out=$(go test -run '^$' -bench 'CommitOneFile' -benchtime "$benchtime" ./fs/gitrepo/)
printf '%s\n' "$out"
printf '%s\n' "$out" | awk '
	/CommitOneFile\/mindmount-Commit/ { c = $3 }
	/CommitOneFile\/mindmount-Apply/  { a = $3 }
	/CommitOneFile\/git-cli/       { g = $3 }
	END {
		if (c == "" || g == "") { print "benchmark output incomplete"; exit 1 }
		printf "\ncommit one file, 10,000-file repository:\n"
		printf "  mindmount Commit  %8.2f ms\n", c / 1e6
		if (a != "") printf "  mindmount Apply   %8.2f ms\n", a / 1e6
		printf "  git add+commit %8.2f ms\n", g / 1e6
		printf "  git CLI / mindmount Commit = %.1fx", g / c
		if (a != "") printf ", git CLI / mindmount Apply = %.1fx", g / a
		printf "\n"
	}'
