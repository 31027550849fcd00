#!/usr/bin/env bash
# Runs every mindmount test: formatting, vet, the go.mod tidy check, the unit,
# mount, sandbox and protocol tests under the race detector, and a short
# fuzz pass over each parser. Installs what the tests need first when run as
# root (fuse3, bubblewrap, vim, git, node); as another user it says what is
# missing and the tests that need it skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
stage_start=$SECONDS
stage() { # prints the previous stage's duration, then the next stage's name
  if [ -n "${stage_name:-}" ]; then echo "   ($stage_name: $((SECONDS - stage_start)) s)"; fi
  stage_name=$1
  stage_start=$SECONDS
  echo "== $1"
}

stage "tools"
need=()
command -v git >/dev/null || need+=(git)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v vim >/dev/null || command -v vim.tiny >/dev/null || need+=(vim-tiny)
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

stage "gofmt"
bad=$(gofmt -l $(git ls-files '*.go') $(git ls-files --others --exclude-standard '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change: $bad" >&2; exit 1; fi

stage "go vet"
go vet ./...

stage "go mod tidy -diff"
go mod tidy -diff

stage "go test -race"
# -p 1: mount tests share /dev/fuse and two cores; serial packages keep them honest.
go test -race -count=1 -p 1 -timeout 40m ./...

stage "fuzz (short)"
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
for spec in $(grep -rl --include '*_test.go' '^func Fuzz' . | grep -v node_modules | sort); do
  pkg=./$(dirname "${spec#./}")
  for f in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$spec" | sed 's/^func //'); do
    echo "-- $pkg $f"
    fuzz "$pkg" "$f"
  done
done
stage "done"
echo "== all tests passed in $((SECONDS - start)) s"
