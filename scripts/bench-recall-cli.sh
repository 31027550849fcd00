#!/bin/sh
# Where the time of one "mindmount recall" goes, at N memories (default
# 600): the wall time of the whole command against its goal (p50 <= 50 ms
# on a quiet machine), split into what happens inside the process (opening
# the repository: reading, parsing and indexing every memory, and the git
# check; the query itself) and the rest (process start, package
# initialisation, output, exit), with "mindmount version" as the cost of
# starting the binary at all and "true" as the floor of running a command;
# and the CPU time of recall and version, which a loaded machine inflates
# far less than the wall time. Also the peak RSS of one recall with
# WordNet's expansion (when it is installed) and without (--no-wordnet).
# Then the same recall answered by a running daemon ("mindmount watch" on
# the repository: recall asks it over the control socket), against
# "mindmount version" and a plain "grep -r" over the memories. Prints the
# load average: on a shared machine, compare CPU times, not walls. Last,
# where starting the binary goes: the runtime's trace of package
# initialisation (GODEBUG=inittrace=1), its sum and the five packages
# that allocate most, and this module's share.
#
#   scripts/bench-recall-cli.sh            # 600 memories, 20 runs
#   N=2000 RUNS=50 scripts/bench-recall-cli.sh
#   MINDMOUNT_BIN=/tmp/mindmount scripts/bench-recall-cli.sh   # a binary already built
set -eu
cd "$(dirname "$0")/.."
N=${N:-600}
RUNS=${RUNS:-20}
tmp=$(mktemp -d)
wpid=
trap '[ -z "$wpid" ] || { kill "$wpid"; wait "$wpid"; } 2>/dev/null; rm -rf "$tmp"' EXIT
mm=${MINDMOUNT_BIN:-}
if [ -z "$mm" ]; then
  go build -o "$tmp/mindmount" ./cmd/mindmount
  mm="$tmp/mindmount"
fi
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
# cpu FILE CMD...: runs CMD, appends its user+system CPU time in µs to FILE.
cpu() {
  f=$1; shift
  /usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/log"
  awk '{printf "%d\n", ($1 + $2) * 1000000}' "$tmp/t" >>"$f"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for f in true version recall inproc cpu_version cpu_recall; do : >"$tmp/$f"; done
r=0
while [ "$r" -lt "$RUNS" ]; do
  t0=$(now); /bin/true; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/true"
  t0=$(now); "$mm" version >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/version"
  t0=$(now); MINDMOUNT_DEBUG=1 "$mm" recall "$repo" "what about cooking item 42" 2>"$tmp/log" >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/recall"
  # open_scan_index=12.3ms query=180µs -> microseconds
  sed -n 's/.*open_scan_index=\([^ ]*\) query=\([^ ]*\).*/\1 \2/p' "$tmp/log" | awk '
    function us(d) { if (d ~ /µs$/) return d + 0; if (d ~ /ms$/) return d * 1000; if (d ~ /s$/) return d * 1000000; return d / 1000 }
    { print us($1), us($2) }' >>"$tmp/inproc"
  cpu "$tmp/cpu_version" "$mm" version
  cpu "$tmp/cpu_recall" "$mm" recall "$repo" "what about cooking item 42"
  r=$((r + 1))
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
p50() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)] / 1000}'; }
p95() { sort -n "$1" | awk '{a[NR] = $1} END {i = int(NR * 0.95 + 0.5); if (i < 1) i = 1; print a[i] / 1000}'; }
avg() { awk '{s += $1} END {print s / NR / 1000}' "$1"; }
cut -d' ' -f1 "$tmp/inproc" >"$tmp/open"; cut -d' ' -f2 "$tmp/inproc" >"$tmp/query"
rec=$(p50 "$tmp/recall"); ver=$(p50 "$tmp/version"); tru=$(p50 "$tmp/true"); open=$(p50 "$tmp/open"); q=$(p50 "$tmp/query")
echo "mindmount recall at $N memories, p50 of $RUNS runs (wall, ms):"
printf '  whole command                %8.1f   (goal: <= 50 ms quiet; ratio to the goal %.2f)\n' "$rec" "$(echo "$rec / 50" | bc -l)"
printf '  opening the repository       %8.1f   (read, parse and index every memory; git check)\n' "$open"
printf '  the query                    %8.2f\n' "$q"
printf '  the rest                     %8.1f   (process start, package init, output, exit)\n' "$(echo "$rec - $open - $q" | bc -l)"
printf '  baseline: mindmount version  %8.1f   (recall / version: %.2f)\n' "$ver" "$(echo "$rec / $ver" | bc -l)"
printf '  baseline: /bin/true          %8.1f   (starting any program, and the clock)\n' "$tru"
cv=$(avg "$tmp/cpu_version"); cr=$(avg "$tmp/cpu_recall")
echo "CPU time (user + system), mean of $RUNS runs, ms: it depends on the load far less than wall time"
printf '  mindmount recall             %8.1f   (recall / version: %.2f)\n' "$cr" "$(echo "$cr / $cv" | bc -l)"
printf '  mindmount version            %8.1f   (starting the binary: runtime and package initialisation)\n' "$cv"
/usr/bin/time -f '%M' -o "$tmp/rss" "$mm" recall --no-wordnet "$repo" "what does the user drink" >/dev/null
echo "peak RSS of one recall --no-wordnet: $(cat "$tmp/rss") KB"
if [ -f /usr/share/wordnet/index.noun ]; then
  /usr/bin/time -f '%M' -o "$tmp/rss" "$mm" recall "$repo" "what does the user drink" >/dev/null
  echo "peak RSS of one recall with WordNet: $(cat "$tmp/rss") KB"
fi

# Through a daemon: "mindmount watch" serves the repository, and recall
# asks it instead of reading, parsing and indexing every memory itself.
"$mm" watch "$repo" --consolidate=false >"$tmp/watch.out" 2>"$tmp/watch.log" &
wpid=$!
i=0
until grep -q '^mindmount: watching' "$tmp/watch.out"; do
  i=$((i + 1))
  if [ "$i" -gt 600 ] || ! kill -0 "$wpid" 2>/dev/null; then
    echo "mindmount watch did not start:"; cat "$tmp/watch.log"; exit 1
  fi
  sleep 0.1
done
MINDMOUNT_DEBUG=1 "$mm" recall "$repo" "what about cooking item 42" 2>"$tmp/log" >/dev/null
if ! grep -q 'answered by the daemon' "$tmp/log"; then
  echo "recall was not answered by the daemon:"; cat "$tmp/log"; exit 1
fi
for f in daemon version2 grep cpu_daemon; do : >"$tmp/$f"; done
r=0
while [ "$r" -lt "$RUNS" ]; do
  t0=$(now); "$mm" recall "$repo" "what about cooking item 42" >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/daemon"
  t0=$(now); "$mm" version >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/version2"
  t0=$(now); grep -r -i -l "item 42" "$repo/user_memory" >/dev/null; t1=$(now)
  echo $(((t1 - t0) / 1000)) >>"$tmp/grep"
  cpu "$tmp/cpu_daemon" "$mm" recall "$repo" "what about cooking item 42"
  r=$((r + 1))
done
dm=$(p50 "$tmp/daemon"); dm95=$(p95 "$tmp/daemon"); ver2=$(p50 "$tmp/version2"); gr=$(p50 "$tmp/grep")
echo "load average after the daemon runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "mindmount recall answered by a daemon (mindmount watch), p50 of $RUNS runs (wall, ms):"
printf '  whole command                %8.1f   (goal: <= 50 ms quiet; ratio to the goal %.2f; to recall in-process above %.2f)\n' "$dm" "$(echo "$dm / 50" | bc -l)" "$(echo "$dm / $rec" | bc -l)"
printf '  whole command, p95           %8.1f\n' "$dm95"
printf '  baseline: mindmount version  %8.1f   (recall / version: %.2f)\n' "$ver2" "$(echo "$dm / $ver2" | bc -l)"
printf '  baseline: grep -r            %8.1f   (recall / grep: %.2f)\n' "$gr" "$(echo "$dm / $gr" | bc -l)"
printf '  CPU time, mean               %8.1f   (recall / version: %.2f)\n' "$(avg "$tmp/cpu_daemon")" "$(echo "$(avg "$tmp/cpu_daemon") / $cv" | bc -l)"

# Where starting the binary goes: every package's initialisation, before
# main runs (GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, B bytes,
# N allocs"). Bytes and allocations are the same at every run; clocks
# are not.
GODEBUG=inittrace=1 "$mm" version 2>"$tmp/inittrace" >/dev/null
echo "package initialisation of mindmount version (GODEBUG=inittrace=1):"
awk '/^init / {n++; c += $5; b += $8; if ($2 ~ /^github.com\/mindmount\/mindmount/ || $2 == "main") {mb += $8; mc += $5}}
  END {printf "  %d packages, %.1f ms of init clock, %d KB allocated; this module: %.1f ms, %d KB\n", n, c, b / 1024, mc, mb / 1024}' "$tmp/inittrace"
echo "  the five that allocate most (KB, allocations, ms):"
sort -k8 -n -r "$tmp/inittrace" | awk '/^init / && k < 5 {k++; printf "    %-60s %6.1f %6d %6.2f\n", $2, $8 / 1024, $10, $5}'
