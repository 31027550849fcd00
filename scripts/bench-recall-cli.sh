#!/bin/sh
# Where the time of one "mindmount recall" goes, at N memories (default
# 600): the wall time of the whole command against its goal (p50 <= 50 ms
# on a quiet machine), split into what happens inside the process (opening
# the repository: reading, parsing and indexing every memory, and the git
# check; the query itself) and the rest (process start, package
# initialisation, output, exit), with "mindmount version" as the cost of
# starting the binary at all. Also the peak RSS of one recall with
# WordNet's expansion (when it is installed) and without (--no-wordnet). Prints the load average:
# on a shared machine, compare CPU times, not walls.
#
#   scripts/bench-recall-cli.sh            # 600 memories, 20 runs
#   N=2000 RUNS=50 scripts/bench-recall-cli.sh
set -eu
cd "$(dirname "$0")/.."
N=${N:-600}
RUNS=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/mindmount" ./cmd/mindmount
mm="$tmp/mindmount"
export HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_COUNT=2 \
  GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0='mindmount bench' \
  GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1=bench@mindmount.local
mkdir -p "$HOME"
repo="$tmp/memory"
"$mm" init "$repo" >/dev/null 2>&1
i=1
while [ "$i" -le "$N" ]; do
  printf -- '---\ndescription: Memory %d about topic %d and the word w%d\nstatus: active\ncreated: 01.12.26\n---\n# Memory %d\n\n## Fact\nThe user mentioned item %d in a conversation about cooking, travel and work; detail w%d, w%d.\n\n## Access log\n' \
    "$i" $((i % 37)) "$i" "$i" $((i * 7)) $((i % 50)) "$i" >"$repo/user_memory/memory-$i.md"
  i=$((i + 1))
done
git -C "$repo" add -A >/dev/null
git -C "$repo" commit -q --no-verify -m "bench: $N memories"

now() { date +%s%N; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/version" ; : >"$tmp/recall" ; : >"$tmp/inproc"
r=0
while [ "$r" -lt "$RUNS" ]; do
  t0=$(now); "$mm" version >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/version"
  t0=$(now); MINDMOUNT_DEBUG=1 "$mm" recall "$repo" "what about cooking item 42" 2>"$tmp/log" >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/recall"
  # open_scan_index=12.3ms query=180µs -> microseconds
  sed -n 's/.*open_scan_index=\([^ ]*\) query=\([^ ]*\).*/\1 \2/p' "$tmp/log" | awk '
    function us(d) { if (d ~ /µs$/) return d + 0; if (d ~ /ms$/) return d * 1000; if (d ~ /s$/) return d * 1000000; return d / 1000 }
    { print us($1), us($2) }' >>"$tmp/inproc"
  r=$((r + 1))
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
p50() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)] / 1000}'; }
cut -d' ' -f1 "$tmp/inproc" >"$tmp/open"; cut -d' ' -f2 "$tmp/inproc" >"$tmp/query"
rec=$(p50 "$tmp/recall"); ver=$(p50 "$tmp/version"); open=$(p50 "$tmp/open"); q=$(p50 "$tmp/query")
echo "mindmount recall at $N memories, p50 of $RUNS runs (wall, ms):"
printf '  whole command                %8.1f   (goal: <= 50 ms quiet; ratio %.2f)\n' "$rec" "$(echo "$rec / 50" | bc -l)"
printf '  opening the repository       %8.1f   (read, parse and index every memory; git check)\n' "$open"
printf '  the query                    %8.2f\n' "$q"
printf '  the rest                     %8.1f   (process start, package init, output, exit)\n' "$(echo "$rec - $open - $q" | bc -l)"
printf '  for comparison: mindmount version %5.1f\n' "$ver"
/usr/bin/time -f '%M' -o "$tmp/rss" "$mm" recall --no-wordnet "$repo" "what does the user drink" >/dev/null
echo "peak RSS of one recall --no-wordnet: $(cat "$tmp/rss") KB"
if [ -f /usr/share/wordnet/index.noun ]; then
  /usr/bin/time -f '%M' -o "$tmp/rss" "$mm" recall "$repo" "what does the user drink" >/dev/null
  echo "peak RSS of one recall with WordNet: $(cat "$tmp/rss") KB"
fi
