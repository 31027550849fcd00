#!/usr/bin/env bash
# Runs every engram test: vet, formatting, the unit and mount tests under the
# race detector, and a short fuzz pass over each parser. Installs what the
# tests need first (fuse3 for fusermount3, vim for the editor tests, git).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v git >/dev/null || need+=(git)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v vim >/dev/null || command -v vim.tiny >/dev/null || need+=(vim-tiny)
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install them (sudo apt-get install -y ${need[*]}) or run as root" >&2
  fi
fi
# Tests commit with the git CLI too; give it an identity on a bare machine.
git config --global user.name >/dev/null || git config --global user.name "engram test"
git config --global user.email >/dev/null || git config --global user.email "test@engram.local"

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change: $bad" >&2; exit 1; fi
echo "== go vet"
go vet ./...
echo "== go mod tidy check"
cp go.mod /tmp/engram-go.mod.bak; cp go.sum /tmp/engram-go.sum.bak
go mod tidy
if ! diff -q go.mod /tmp/engram-go.mod.bak >/dev/null || ! diff -q go.sum /tmp/engram-go.sum.bak >/dev/null; then
  echo "go mod tidy changed go.mod/go.sum" >&2; cp /tmp/engram-go.mod.bak go.mod; cp /tmp/engram-go.sum.bak go.sum; exit 1
fi
echo "== go test -race"
# -p 1: mount tests share /dev/fuse and two cores; serial packages keep them honest.
go test -race -count=1 -p 1 -timeout 30m ./...

echo "== fuzz (short)"
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a target with a bare "context deadline exceeded" as time runs out
# (golang/go#75804, fixed in Go 1.27). A real finding writes its input to
# testdata/fuzz and fails either way; -timeout catches a hanging input.
fuzz() { # package, target
  go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-20000x}" -timeout 5m "$1"
}
for spec in $(grep -rl --include '*_test.go' '^func Fuzz' . | sort); do
  pkg=./$(dirname "${spec#./}")
  for f in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$spec" | sed 's/^func //'); do
    echo "-- $pkg $f"
    fuzz "$pkg" "$f"
  done
done
echo "== all tests passed"
