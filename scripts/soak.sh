#!/usr/bin/env bash
# Soak test of the write path (issue 14): for DURATION, writers write
# through a mindmount mount and beside it in the backing repository,
# transcripts are consolidated against the fake model server
# (scripts/fakellm), and the daemon is killed with SIGKILL at random moments
# — half the time from outside, half the time by an armed failpoint
# (MINDMOUNT_FAILPOINT, fs/gitrepo/failpoint) in the middle of a commit — and
# restarted. At the end the daemon is stopped cleanly and every write whose
# close succeeded must be on disk with its content and in HEAD.
#
# usage: scripts/soak.sh DURATION      (e.g. 600, 10m, 1h; default 60s)
# Prints: writes attempted, writes acknowledged, writes lost (must be 0),
# restarts, git fsck and git status results. Exit status 1 on any loss or
# an unsound repository. Needs root or fusermount3, /dev/fuse and git.
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${1:-60}
case $dur in
  *h) secs=$(( ${dur%h} * 3600 )) ;;
  *m) secs=$(( ${dur%m} * 60 )) ;;
  *s) secs=${dur%s} ;;
  *) secs=$dur ;;
esac

work=$(mktemp -d /tmp/mindmount-soak.XXXXXX)
repo=$work/memory
mnt=$work/mnt
mkdir -p "$mnt"
eng_pid=""
llm_pid=""
writer_pids=()
unmount() {
  if grep -qs " $mnt " /proc/mounts; then umount -l "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true; fi
}
cleanup() {
  for p in "${writer_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $eng_pid ]] && kill -KILL "$eng_pid" 2>/dev/null || true
  [[ -n $llm_pid ]] && kill "$llm_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  unmount
  [[ ${KEEP:-} ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

echo "== building mindmount and the fake model server"
go build -o "$work/mindmount" ./cmd/mindmount
go build -o "$work/fakellm" ./scripts/fakellm
export GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@mindmount.local GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@mindmount.local

"$work/fakellm" >"$work/llm.url" 2>"$work/llm.log" &
llm_pid=$!
for _ in $(seq 100); do [[ -s $work/llm.url ]] && break; sleep 0.1; done
export MINDMOUNT_LLM=ollama OLLAMA_HOST=$(head -1 "$work/llm.url") MINDMOUNT_MODEL=fake MINDMOUNT_LLM_TIMEOUT=10s
"$work/mindmount" init "$repo" >/dev/null

points=(index-locked objects-written ref-updated index-written index-renamed worktree-written cursor-written)
restarts=0
killed_by_point=0

# start_mindmount [FAILPOINT]: mounts and waits for the readiness line.
start_mindmount() {
  unmount
  : >"$work/out"
  MINDMOUNT_FAILPOINT=${1:-} "$work/mindmount" mount "$repo" "$mnt" --debounce 200ms --max-wait 2s --idle 2s --every 5 \
    >"$work/out" 2>>"$work/mindmount.log" &
  eng_pid=$!
  for _ in $(seq 600); do
    grep -q "mindmount: mounted" "$work/out" 2>/dev/null && return 0
    kill -0 "$eng_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z ${1:-} ]]; then
    echo "mindmount did not become ready; log tail:" >&2
    tail -20 "$work/mindmount.log" >&2
  fi
  return 1
}

# reap waits for the killed daemon to be gone. A FUSE daemon killed while
# one of its threads invalidates the kernel's page cache of a file another
# process is reading through the mount (fuse_reverse_inval_inode waiting on
# a page lock) never finishes dying: that thread sleeps uninterruptibly on
# a page only the dead daemon could release. Aborting the FUSE connection
# (fusectl) is the way out; it is counted and reported.
hung=0
reap() {
  for _ in $(seq 100); do kill -0 "$eng_pid" 2>/dev/null || { wait "$eng_pid" 2>/dev/null || true; return; }; sleep 0.1; done
  hung=$((hung + 1))
  mountpoint -q /sys/fs/fuse/connections || mount -t fusectl none /sys/fs/fuse/connections 2>/dev/null || true
  local dev
  dev=$(awk -v m="$mnt" '$5 == m { print $3 }' /proc/self/mountinfo | head -1)
  [[ -n $dev ]] && echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort" 2>/dev/null || true
  wait "$eng_pid" 2>/dev/null || true
}

content() { printf -- '---\ndescription: Soak memory %s\n---\n# %s\n\n## Fact\nYou wrote %s.\n' "$1" "$1" "$1"; }

# writer NAME DIR PREFIX: writes new files until killed; the ledger gets a
# line for every write whose redirection (open, write, close) succeeded.
round=0
writer() {
  local name=$1 dir=$2 prefix=$3 i=0
  while :; do
    i=$((i + 1))
    local rel="$prefix/$name-$round-$i.md" # unique across rounds: never rewritten
    echo x >>"$work/attempts.$name"
    # tee writes the file with one write(2) and fails when write or close
    # fails; a shell redirection would split it per line (bash's stdout is
    # line-buffered) and ignore an error at close.
    if content "$name-$round-$i" | tee "$dir/$rel" >/dev/null 2>&1; then
      echo "$rel" >>"$work/ledger"
    fi
    sleep 0.0$((RANDOM % 5))
  done
}

transcripts() {
  local i=0
  while :; do
    i=$((i + 1))
    printf '{"role":"user","content":"soak message %d: I like the number %d."}\n' "$i" "$i" \
      >"$mnt/transcripts/soak-$i.jsonl" 2>/dev/null || true
    sleep 1
  done
}

echo "== soaking for ${secs}s in $work"
: >"$work/ledger"
mkdir -p "$repo/notes"
point=""
start_mindmount
end=$(( $(date +%s) + secs ))
while (( $(date +%s) < end )); do
  round=$((round + 1))
  writer mnt "$mnt" user_memory & writer_pids=($!)
  writer beside "$repo" notes & writer_pids+=($!)
  transcripts & writer_pids+=($!)
  if [[ -z $point ]]; then
    sleep $((2 + RANDOM % 8))
  else
    # The armed failpoint kills it in the middle of its N-th commit
    # step; if it never gets there, it is killed from outside after 12s.
    for _ in $(seq 120); do kill -0 "$eng_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  kill -KILL "$eng_pid" 2>/dev/null || true
  reap
  for p in "${writer_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  writer_pids=()
  restarts=$((restarts + 1))
  point=""
  if (( RANDOM % 2 )); then
    point=${points[RANDOM % ${#points[@]}]}@$((1 + RANDOM % 3))
    killed_by_point=$((killed_by_point + 1))
  fi
  # With a point armed the daemon may die during its start-up recovery:
  # that is a restart too, and the next start is unarmed.
  until start_mindmount "$point"; do
    [[ -n $point ]] || { echo "mindmount failed to start" >&2; exit 1; }
    reap
    restarts=$((restarts + 1))
    point=""
  done
done

# A clean stop: SIGTERM commits what is pending. Restart first without any
# failpoint so that recovery runs, then stop.
kill -KILL "$eng_pid" 2>/dev/null || true
reap
start_mindmount
# No writer is left, so what the start-up recovery committed is everything.
kill -TERM "$eng_pid"
term=ok
for _ in $(seq 1200); do kill -0 "$eng_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$eng_pid" 2>/dev/null; then
  term="HUNG (no exit 120s after SIGTERM; killed)"
  kill -KILL "$eng_pid"
elif ! wait "$eng_pid"; then
  term="exit status $?"
fi
wait "$eng_pid" 2>/dev/null || true
eng_pid=""
unmount

attempted=$(cat "$work"/attempts.* 2>/dev/null | wc -l)
acked=$(wc -l <"$work/ledger")
# Every acknowledged write: its expected blob (regenerated from its name),
# the blob on disk and the blob in HEAD must all be the same.
sort -u "$work/ledger" >"$work/ledger.sorted"
while IFS= read -r rel; do
  d=$work/expect/${rel%/*} name=${rel##*/}
  [[ -d $d ]] || mkdir -p "$d"
  content "${name%.md}" >"$work/expect/$rel"
done <"$work/ledger.sorted"
(cd "$work/expect" && git hash-object --stdin-paths <"$work/ledger.sorted") >"$work/want"
(cd "$repo" && while IFS= read -r rel; do [[ -f $rel ]] && echo "$rel" || echo /dev/null; done <"$work/ledger.sorted" |
  git hash-object --stdin-paths) >"$work/disk"
git -C "$repo" ls-tree -r HEAD | awk -F'\t' '{ split($1, f, " "); print $2 "\t" f[3] }' >"$work/head"
lost=$(paste "$work/ledger.sorted" "$work/want" "$work/disk" | awk -F'\t' -v head="$work/head" '
  BEGIN { while ((getline l < head) > 0) { split(l, f, "\t"); h[f[1]] = f[2] } }
  $2 != $3 { print "LOST (disk): " $1 > "/dev/stderr"; n++; next }
  h[$1] != $2 { print "LOST (HEAD): " $1 > "/dev/stderr"; n++ }
  END { print n + 0 }')
fsck=ok
git -C "$repo" fsck --strict --no-progress >"$work/fsck" 2>&1 || fsck="FAILED: $(head -3 "$work/fsck")"
# A write that failed half-way (the daemon died under it; not in the
# ledger) may leave a torn file: mindmount holds it back as invalid, by
# design. Anything else uncommitted is a failure.
git -C "$repo" status --porcelain --untracked-files=all | grep -v '^?? transcripts/' >"$work/status" || true
torn=0
status=""
while IFS= read -r line; do
  rel=${line:3}
  if [[ ${line:0:2} == "??" ]] && ! grep -qxF "$rel" "$work/ledger.sorted"; then
    torn=$((torn + 1))
  else
    status+="$line"$'\n'
  fi
done <"$work/status"
consolidations=$(git -C "$repo" log --author=consolidator --oneline | wc -l)
commits=$(git -C "$repo" rev-list --count HEAD)
repaired=$(grep -c "removed a lock file\|repaired .git/index" "$work/mindmount.log" || true)

echo "== soak result (${secs}s)"
echo "writes attempted:      $attempted"
echo "writes acknowledged:   $acked"
echo "writes lost:           $lost"
echo "restarts:              $restarts (armed failpoints: $killed_by_point; killed daemons stuck in FUSE invalidation, connection aborted: $hung)"
echo "crash repairs logged:  $repaired"
echo "commits:               $commits (consolidations: $consolidations)"
echo "SIGTERM shutdown:      $term"
echo "git fsck:              $fsck"
echo "torn failed writes:     $torn (unacknowledged, held back as invalid files)"
echo "git status:            $([[ -z $status ]] && echo clean || echo "NOT CLEAN: $(echo "$status" | head -5 | tr '\n' ' ')")"
[[ $lost == 0 && $fsck == ok && -z $status ]]
