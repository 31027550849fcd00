#!/bin/sh
# bench-precommit.sh: what mindmount's pre-commit hook adds to "git commit" of
# one memory file in a repository of 10,000 memories (the budget is 50 ms).
# Prints the median of plain commits (--no-verify), the median with the
# hook, the difference and the ratio.
#
#   scripts/bench-precommit.sh [N_MEMORIES] [ROUNDS]
set -eu
n=${1:-10000}
rounds=${2:-15}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
(cd "$here" && go build -o "$work/bin/mindmount" ./cmd/mindmount)
# After the build: HOME also hides the user's git config from the timing.
export HOME="$work" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
export PATH="$work/bin:$PATH"
repo="$work/memory"
mindmount init "$repo" >/dev/null
cd "$repo"
i=0
while [ $i -lt "$n" ]; do
	printf -- '---\ndescription: memory %d\nstatus: active\n---\n# Memory %d\n\n## Fact\nFact number %d.\n\n## Access log\nused, 01.09.26\n' $i $i $i >"user_memory/m$i.md"
	i=$((i + 1))
done
git add -A && git commit -q --no-verify -m "$n memories"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# run FLAG: one line per round, "wall_ms cpu_ms" of git commit and every
# process it ran (the hook included). CPU time is what the hook costs on an
# idle machine; wall time also counts waiting for a busy one.
run() {
	r=0
	while [ $r -lt "$rounds" ]; do
		echo "used, 0$((r % 9 + 1)).09.26" >>user_memory/m7.md
		git add user_memory/m7.md
		/usr/bin/time -f "%e %U %S" -o "$work/t" git commit -q $1 -m "use $r"
		awk '{printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000}' "$work/t"
		r=$((r + 1))
	done >"$work/rounds"
	wall=$(cut -d' ' -f1 "$work/rounds" | median)
	cpu=$(cut -d' ' -f2 "$work/rounds" | median)
	echo "$wall $cpu"
}
set -- $(run --no-verify)
pw=$1 pc=$2
set -- $(run "")
hw=$1 hc=$2
echo "memories: $n, rounds: $rounds, load: $(cut -d' ' -f1 /proc/loadavg)"
echo "git commit, plain:     wall $pw ms, cpu $pc ms"
echo "git commit, with hook: wall $hw ms, cpu $hc ms"
echo "hook adds:             wall $((hw - pw)) ms, cpu $((hc - pc)) ms (budget 50 ms)"
awk -v h="$hw" -v p="$pw" 'BEGIN { if (p > 0) printf "wall ratio:            %.2f\n", h / p }'
