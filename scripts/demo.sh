#!/usr/bin/env bash
# The main job on embedded defaults: build engram, create a demo memory
# repository, mount it, and play an agent's shell session against the mount.
# Everything lives under a temporary directory that is removed at the end
# (KEEP=1 keeps it and leaves the mount up for you to explore).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v fusermount3 >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "== installing fuse3"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fuse3 >/dev/null
fi
git config --global user.name >/dev/null || git config --global user.name "engram demo"
git config --global user.email >/dev/null || git config --global user.email "demo@engram.local"

work=$(mktemp -d /tmp/engram-demo.XXXXXX)
bin=$work/engram
repo=$work/memory
mnt=$work/mnt
mkdir -p "$mnt"

echo "== go build ./cmd/engram"
go build -o "$bin" ./cmd/engram

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step engram init "$repo" --user Ada
"$bin" init "$repo" --user Ada

step engram mount "$repo" "$mnt" --debounce 300ms '&'
"$bin" mount "$repo" "$mnt" --debounce 300ms >"$work/mount.out" 2>"$work/mount.log" &
pid=$!
cleanup() {
  if [ -z "${KEEP:-}" ]; then
    kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    rm -rf "$work"
  else
    echo; echo "kept: repo $repo, mount $mnt (daemon pid $pid; kill -TERM $pid to unmount)"
  fi
}
trap cleanup EXIT
# Readiness handshake: the daemon prints one line once the mount is usable.
for _ in $(seq 1 200); do
  grep -q mounted "$work/mount.out" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/mount.log" >&2; exit 1; }
  sleep 0.05
done
cat "$work/mount.out"
cd "$mnt"

step ls
ls

step 'cat > user_memory/likes-coffee.md'
cat > user_memory/likes-coffee.md <<'MEM'
---
description: Enjoys specialty coffee, especially Ethiopian single origin
---
# Likes Coffee

## Fact
You enjoy specialty coffee, especially Ethiopian single origin.

## Episode
Session 31.08.26 — you mentioned buying a bag from a local roaster.

## Access log
used, 31.08.26
MEM
cat user_memory/likes-coffee.md

step "echo 'used, $(date +%d.%m.%y)' >> user_memory/likes-coffee.md"
echo "used, $(date +%d.%m.%y)" >>user_memory/likes-coffee.md

step 'printf ... > user_memory/has-dog.md   (a second memory)'
printf -- '---\ndescription: Has a border collie called Pixel\n---\n# Has Dog\n\n## Fact\nYou have a border collie called Pixel.\n' >user_memory/has-dog.md

step cat user_memory.md
cat user_memory.md

step 'cat ".engram/search/what coffee do I like"'
cat ".engram/search/what coffee do I like" || true

step 'printf "description: [oops\n" > user_memory/broken.md   (invalid: kept, not committed)'
printf -- '---\ndescription: [oops\n---\n# Broken\n' >user_memory/broken.md

# Wait for the debounced commit instead of sleeping a fixed time.
for _ in $(seq 1 100); do
  git -C "$repo" log --name-only --format= | grep -q has-dog && break
  sleep 0.1
done

step cat .engram/status
cat .engram/status

step head -n 30 CONTEXT.md
head -n 30 CONTEXT.md

step git log --stat -3
git --no-pager log --stat -3

step 'echo > .git/HEAD   (the history is read-only through the mount)'
(echo x >.git/HEAD) 2>&1 || true

cd /
echo
echo "demo finished: the memory lived at $repo, mounted at $mnt"
