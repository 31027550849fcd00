#!/usr/bin/env bash
# Runs every mindmount test: formatting, vet, the go.mod tidy check and the
# unit, mount, sandbox and protocol tests (each fuzz target's seeds
# included). With --full (what CI runs) the tests run under the race
# detector and a short fuzz pass over each parser follows: about twice as
# long. Installs what the tests need first when run as
# root (fuse3, bubblewrap, vim, git, node); as another user it says what is
# missing and the tests that need it skip with a message.
#
# Every stage runs even when an earlier one failed; the summary at the end
# names each failed stage and how long each took. The test stage ends with
# the list of skipped tests; MINDMOUNT_REQUIRE_TOOLS=1 (set by .ci/run)
# turns a skip for a missing tool (FUSE, git, bubblewrap, Chromium, node,
# setpriv) into a failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

full=false
case "${1:-}" in
--full) full=true ;;
"") ;;
*)
  echo "usage: ./scripts/test.sh [--full]   (--full: under the race detector, then a fuzz pass)" >&2
  exit 2
  ;;
esac

start=$SECONDS
failed=()
durations=()
# stage NAME COMMAND...: runs one stage, timed; a failure is remembered,
# not fatal.
stage() {
  local name=$1
  shift
  echo "== $name"
  local t0=$SECONDS
  if ! "$@"; then
    failed+=("$name")
    echo "== $name FAILED"
  fi
  durations+=("$(printf '%-20s %5d s' "$name" $((SECONDS - t0)))")
}

tools() {
need=()
command -v git >/dev/null || need+=(git)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v vim >/dev/null || command -v vim.tiny >/dev/null || need+=(vim-tiny)
command -v etcd >/dev/null || need+=(etcd-server)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install them (sudo apt-get install -y ${need[*]}) or run as root" >&2
  fi
fi
# Every daemon a test starts holds an inotify instance; the kernel's
# default of 128 per uid runs out when many run in one go.
if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/fs/inotify/max_user_instances)" -lt 1024 ]; then
  sysctl -qw fs.inotify.max_user_instances=1024 || true
fi
# Tests commit with the git CLI too. Without an identity, give this run one
# through the environment, never the user's global git config. As config
# (GIT_CONFIG_COUNT), not GIT_AUTHOR_*: a test's own "git -c user.name=…"
# must still win, as it does on a machine with a global identity.
if ! git config user.email >/dev/null 2>&1; then
  export GIT_CONFIG_COUNT=2
  export GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0="mindmount test"
  export GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1="test@mindmount.local"
fi
# The MCP test drives mindmount with the official TypeScript SDK client.
if [ -f scripts/mcp-client/package.json ] && command -v npm >/dev/null; then
  (cd scripts/mcp-client && npm ci --no-audit --no-fund --silent >/dev/null) ||
    echo "npm ci in scripts/mcp-client failed; the TypeScript-client test will try again and say why" >&2
fi
}
# The identity above must reach every later stage: tools runs in this shell.
stage "tools" tools

formatted() {
  local bad
  bad=$(gofmt -l $(git ls-files '*.go') $(git ls-files --others --exclude-standard '*.go'))
  if [ -n "$bad" ]; then echo "gofmt would change: $bad" >&2; return 1; fi
}
stage "gofmt" formatted
stage "go vet" go vet ./...
stage "go mod tidy -diff" go mod tidy -diff

# -p 1: mount tests share /dev/fuse and two cores; serial packages keep
# them honest. -json feeds scripts/testreport, which prints what plain
# "go test" would (package lines, failed tests' output) and lists skips.
tests() {
  go test "$@" -count=1 -p 1 -timeout 40m -json ./... | go run ./scripts/testreport
}
if $full; then
  stage "go test -race" tests -race
else
  stage "go test" tests
fi

# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a target with a bare "context deadline exceeded" as time runs out
# (golang/go#75804, fixed in Go 1.27). A real finding writes its input to
# testdata/fuzz and fails either way; -timeout catches a hanging input.
fuzz() { # package, target
  local n=${FUZZTIME:-20000x}
  # Targets that run the full secret rule set manage ~100 execs/s here:
  # a tenth of the count keeps the pass within minutes.
  case $2 in FuzzRedact) n=${FUZZTIME:-2000x} ;; esac
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$n" -timeout 5m "$1"
}
fuzz_all() { # every target runs; the stage fails if one did
  local rc=0 spec pkg f
  for spec in $(grep -rl --include '*_test.go' '^func Fuzz' . | grep -v node_modules | sort); do
    pkg=./$(dirname "${spec#./}")
    for f in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$spec" | sed 's/^func //'); do
      echo "-- $pkg $f"
      fuzz "$pkg" "$f" || { echo "-- $pkg $f FAILED" >&2; rc=1; }
    done
  done
  return $rc
}
if $full; then
  stage "fuzz (short)" fuzz_all
fi

echo "== stages"
printf '   %s\n' "${durations[@]}"
if ((${#failed[@]})); then
  echo "== FAILED after $((SECONDS - start)) s: ${failed[*]}"
  exit 1
fi
echo "== all tests passed in $((SECONDS - start)) s"
