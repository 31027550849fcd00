#!/usr/bin/env bash
# The main job on embedded defaults. Builds mindmount, creates a memory
# repository with "mindmount init", mounts it, and plays an agent's session
# against the mount: write a memory, stamp a use, read the index and a
# search, see an invalid file reported. Then a conversation lands in
# transcripts/ and consolidation turns it into a memory that retires the one
# it contradicts, against a stand-in for the model (scripts/fakellm answers
# from a script), so no model is needed. Last, "git revert" undoes it.
#
# Runs from a fresh HOME with no git identity and writes no global git
# config. Everything lives under one temporary directory, removed at the
# end; KEEP=1 keeps it and leaves the mount up for you to explore.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v fusermount3 >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "== installing fuse3"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fuse3 >/dev/null
fi

if [ -t 1 ]; then bold=$'\033[1m' dim=$'\033[2m' off=$'\033[0m'; else bold='' dim='' off=''; fi
# say prints a line of narration; step the command about to run, as a
# shell prompt would. Each group of them starts after a blank line.
said=''
say() { [ -n "$said" ] || echo; said=1; printf '%s# %s%s\n' "$dim" "$*" "$off"; }
step() { [ -n "$said" ] || echo; said=''; printf '%s$ %s%s\n' "$bold" "$*" "$off"; }
die() { echo "demo: $*" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/mindmount-demo.XXXXXX")
repo=$work/memory
mnt=$work/mnt
mkdir -p "$mnt" "$work/bin"
pids=()
cleanup() {
  local rc=$?
  cd /
  if [ -n "${KEEP:-}" ] && [ "$rc" = 0 ]; then
    echo
    echo "kept: repository $repo, mounted at $mnt"
    echo "      the daemon is pid ${pids[1]:-?} (kill -TERM it to unmount), the fake model pid ${pids[0]:-?}"
    echo "      PATH=$work/bin:\$PATH puts this mindmount first"
    return
  fi
  # Stop the daemon before the model it talks to; each commits and exits.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null && wait "${pids[i]}" 2>/dev/null || true
  done
  if [ "$rc" != 0 ] && [ -s "$work/mount.log" ]; then
    echo "--- daemon log" >&2
    tail -n 30 "$work/mount.log" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# wait_for TEXT CMD...: poll CMD until its output contains TEXT (at most 30s).
wait_for() {
  local want=$1 i
  shift
  for i in $(seq 1 300); do
    if "$@" 2>/dev/null | grep -qF -- "$want"; then return 0; fi
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || die "a background process (pid $p) exited"; done
    sleep 0.1
  done
  die "waited 30s for \"$want\" from: $*"
}

echo "== go build -o $work/bin/mindmount ./cmd/mindmount   (the first build downloads the Go modules: minutes)"
go build -o "$work/bin/mindmount" ./cmd/mindmount
go build -o "$work/bin/fakellm" ./scripts/fakellm
export PATH="$work/bin:$PATH"

step mindmount init "$repo" --user Ada
mindmount init "$repo" --user Ada

# The stand-in model. Its answers are what a real model answers for the
# conversation below: one fact about the user, on the topic home-city, and
# the decision that it replaces the memory already on that topic.
cat >"$work/model-script.json" <<'JSON'
{
  "extract": {"facts": [{"kind": "user", "slug": "lives-in-lisbon",
    "description": "Lives in Lisbon, Portugal (moved from Porto)",
    "fact": "You live in Lisbon, Portugal. You moved there from Porto.",
    "episode": "You said you moved to Lisbon last month.",
    "topic": "home-city", "search": ["lisbon", "porto", "moved", "city"],
    "keywords": ["home", "address"]}]},
  "decide": {"decisions": [{"fact": 0, "action": "DELETE",
    "target": "user_memory/lives-in-porto", "description": "", "text": ""}]}
}
JSON
fakellm -script "$work/model-script.json" >"$work/llm.url" 2>"$work/llm.log" &
pids+=($!)
wait_for http cat "$work/llm.url"
llm_url=$(head -n 1 "$work/llm.url")

step "MINDMOUNT_LLM=ollama OLLAMA_HOST=$llm_url MINDMOUNT_MODEL=demo mindmount mount $repo $mnt --idle 2s --debounce 200ms &"
say "a scripted stand-in for the model listens at $llm_url"
MINDMOUNT_LLM=ollama OLLAMA_HOST=$llm_url MINDMOUNT_MODEL=demo \
  mindmount mount "$repo" "$mnt" --idle 2s --debounce 200ms >"$work/mount.out" 2>"$work/mount.log" &
pids+=($!)
# Readiness handshake: the daemon prints one line once the mount is usable.
wait_for mounted cat "$work/mount.out"
cat "$work/mount.out"
cd "$mnt"

# committed FILE: has the daemon committed FILE yet?
committed() { git -C "$repo" log --format= --name-only -- "$1"; }

step ls -A
ls -A

say "An agent's session. It learns where the user lives and writes it down, one fact per file:"
step 'cat > user_memory/lives-in-porto.md'
cat >user_memory/lives-in-porto.md <<'MEM'
---
description: Lives in Porto, Portugal
topic: home-city
---
# Lives In Porto

## Fact
You live in Porto, Portugal.

## Episode
Session 02.11.26 — you mentioned the walk along the Douro to work.

## Access log
MEM
cat user_memory/lives-in-porto.md

say "The memory helped answer a question, so the agent stamps a use (ranking counts uses):"
step "echo \"used, $(date +%d.%m.%y)\" >> user_memory/lives-in-porto.md"
echo "used, $(date +%d.%m.%y)" >>user_memory/lives-in-porto.md

step 'cat > user_memory/has-dog.md'
cat >user_memory/has-dog.md <<'MEM'
---
description: Has a border collie called Pixel
topic: pet
---
# Has Dog

## Fact
You have a border collie called Pixel.

## Access log
MEM

say "The indexes are synthesized on read, ranked by use:"
step cat user_memory.md
cat user_memory.md

say "Recall: cat a question under .mindmount/search/ (active memories only, best first):"
step 'cat ".mindmount/search/where does the user live"'
cat ".mindmount/search/where does the user live"

say "An invalid file stays on disk, is never committed, and status says why:"
step "printf -- '---\\ndescription: [oops\\n---\\n# Broken\\n' > user_memory/broken.md"
printf -- '---\ndescription: [oops\n---\n# Broken\n' >user_memory/broken.md
wait_for has-dog committed user_memory/has-dog.md
wait_for broken.md cat .mindmount/status
step cat .mindmount/status
cat .mindmount/status
step rm user_memory/broken.md
rm user_memory/broken.md

say "The compiled context an agent gets as its system prompt, user part:"
step "sed -n '/^# Ada/,\$p' CONTEXT.md"
sed -n '/^# Ada/,$p' CONTEXT.md

say "A month later, a conversation. The harness hooks drop it into transcripts/ (a local inbox, never committed):"
step 'cat > transcripts/chat-2026-12-01.jsonl'
cat >transcripts/chat-2026-12-01.jsonl <<'JSONL'
{"role":"user","content":"Any good bakeries near me? I moved to Lisbon last month, so not Porto anymore."}
{"role":"assistant","content":"Welcome to Lisbon! Manteigaria in Chiado is famous for its pastéis de nata."}
JSONL
cat transcripts/chat-2026-12-01.jsonl

say "Consolidation runs once the transcripts are quiet for --idle; this asks for it now:"
step 'echo go > .mindmount/consolidate'
echo go >.mindmount/consolidate
wait_for consolidator git -C "$repo" log -1 --format=%an
say "consolidation committed:"

step cat user_memory/lives-in-porto.md
cat user_memory/lives-in-porto.md
step cat user_memory/lives-in-lisbon.md
cat user_memory/lives-in-lisbon.md
step cat user_memory.md
cat user_memory.md
step 'cat ".mindmount/search/where does the user live"'
cat ".mindmount/search/where does the user live"

say "Every change is a commit, authored by who made it:"
step git log --stat -3
git --no-pager log --stat -3

say "The transcript stayed out of git: the commit names it in its trailers, with a hash, never its text."
say "Every path ever committed:"
step 'git log --all --format= --name-only | sort -u'
git log --all --format= --name-only | sort -u
say "The transcript is only in the local inbox:"
step 'ls transcripts/'
ls transcripts/

say "Undo. .git is read-only through the mount:"
step 'echo x > .git/HEAD'
sh -c 'echo x > .git/HEAD' 2>&1 || true
say "so history commands that write run on the repository itself (git wants an identity"
say "for the revert commit; this shell has none, so it is given on the command line):"
step "git -C $repo -c user.name=Ada -c user.email=ada@example.com revert --no-edit -m 1 HEAD"
git -C "$repo" -c user.name=Ada -c user.email=ada@example.com revert --no-edit -m 1 HEAD
say "The daemon picks the revert up: Porto is back, Lisbon gone."
wait_for "Lives in Porto" cat user_memory.md
step cat user_memory.md
cat user_memory.md
step git log --format="'%h %<(13)%an %s'"
git --no-pager log --format='%h %<(13)%an %s'

echo
echo "demo finished: every step above ran against $mnt, backed by $repo"
