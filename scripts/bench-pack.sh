#!/usr/bin/env bash
# Repository size after many single-file commits (issue 16.3): a repository
# of MEMORIES memories in one folder gets COMMITS commits that each change
# one memory, made through gitrepo.Commit like the tracker's. Three runs:
# with mindmount's background packing (git repack -d --geometric=2 once 512 loose objects,
# beside the commits), with no packing at all, and the unpacked history
# after "git gc --aggressive". Prints the size on disk of .git for each
# and the ratio of mindmount's packing to git gc --aggressive (goal <= 2x).
#
# usage: scripts/bench-pack.sh [MEMORIES] [COMMITS]     (default 10000 10000)
# env:   BENCH_DIR (default /dev/shm when present: sizes, not fsync, are
#        measured; the unpacked run needs a few GB)
set -euo pipefail
cd "$(dirname "$0")/.."
memories=${1:-10000}
commits=${2:-10000}
base=${BENCH_DIR:-$([[ -d /dev/shm ]] && echo /dev/shm || echo /tmp)}
work=$(mktemp -d "$base/mindmount-bench-pack.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/benchpack" ./scripts/benchpack

size() { du -sk "$1/.git" | cut -f1; }
human() { awk -v k="$1" 'BEGIN { if (k > 1048576) printf "%.2f GB", k/1048576; else if (k > 1024) printf "%.1f MB", k/1024; else printf "%d KB", k }'; }

echo "== $memories memories, $commits single-file commits"
echo "-- with mindmount's background packing"
"$work/benchpack" -dir "$work/packed" -memories "$memories" -commits "$commits" -pack
packed=$(size "$work/packed")
git -C "$work/packed" fsck --no-progress >/dev/null 2>&1 && fsck=ok || fsck=FAILED
echo "-- without packing"
"$work/benchpack" -dir "$work/loose" -memories "$memories" -commits "$commits"
loose=$(size "$work/loose")
echo "-- git gc --aggressive on the unpacked history"
t0=$(date +%s)
git -C "$work/loose" gc --aggressive --quiet
gc=$(size "$work/loose")
t1=$(date +%s)

printf '\n%-36s %12s\n' "repository (.git, du -sk)" "size"
printf '%-36s %12s\n' "mindmount background packing" "$(human "$packed")"
printf '%-36s %12s\n' "no packing" "$(human "$loose")"
printf '%-36s %12s   (%ss)\n' "git gc --aggressive" "$(human "$gc")" "$((t1 - t0))"
awk -v p="$packed" -v g="$gc" 'BEGIN { printf "ratio packing / gc --aggressive: %.2fx (goal <= 2x)\n", p/g }'
echo "git fsck of the packed repository: $fsck"
