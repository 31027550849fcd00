#!/usr/bin/env bash
# Attacker soak of the secret guard and the credentials (issue 23): for
# DURATION, against a running "mindmount serve --mount --http 0.0.0.0:0",
# an attacker who holds a user's mount and tokens loops over:
#   - tokens issued, used, revoked (one and all) and a user removed and
#     added again: a revoked or outlived token must never be accepted, and
#     with every token revoked the non-loopback listener refuses everyone;
#   - "commit_secrets: true" written into the tracked settings through the
#     mount, and the operator's .git/mindmount/config attempted through it;
#   - memories with planted secrets (GitHub, AWS, Stripe, a German password
#     phrase), a text file ending in a NUL byte, a 5 MiB file with a secret
#     at its end, a binary attachment, and secrets in file and folder names.
# At the end the daemon is stopped and every git object of every repository
# under ROOT (removed ones too), every commit message, the daemon's log and
# the token file are scanned for the planted secrets: zero must be found.
#
# usage: scripts/soak-secrets.sh DURATION   (e.g. 60, 10m; default 60s)
# Prints rounds, secrets planted, tokens checked, refusals seen, and what was
# found (must be 0). Exit status 1 on any leak or accepted bad token. Needs
# root (or fusermount3), /dev/fuse, git and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${1:-60}
case $dur in
  *h) secs=$(( ${dur%h} * 3600 )) ;;
  *m) secs=$(( ${dur%m} * 60 )) ;;
  *s) secs=${dur%s} ;;
  *) secs=$dur ;;
esac

work=$(mktemp -d /tmp/mindmount-soak-secrets.XXXXXX)
chmod 755 "$work" # the users' workers run as uids of their own (users add as root)
root=$work/root
mnt=$work/mnt
mkdir -p "$root" "$mnt"
pid=""
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  grep -qs " $mnt " /proc/mounts && { umount -l "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true; }
  [[ ${KEEP:-} ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

echo "== building mindmount"
go build -o "$work/mindmount" ./cmd/mindmount
mm=$work/mindmount
export GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@mindmount.local GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@mindmount.local
export MINDMOUNT_API_KEY= MINDMOUNT_LLM=ollama OLLAMA_HOST=127.0.0.1:9

"$mm" users add "$root" alice >/dev/null
"$mm" users add "$root" mallory >/dev/null
first=$("$mm" users token "$root" alice 2>/dev/null)

"$mm" serve --root "$root" --mount "$mnt" --http 0.0.0.0:0 --debounce 100ms >"$work/out" 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 600); do grep -q "mindmount: serving" "$work/out" 2>/dev/null && break; kill -0 "$pid" || { cat "$work/daemon.log" >&2; exit 1; }; sleep 0.1; done
port=$(sed -n 's/.*http on [^,]*:\([0-9]*\).*/\1/p' "$work/out")
api=http://127.0.0.1:$port
echo "== attacking for ${secs}s ($work, http port $port)"

: >"$work/planted"
rnd() { LC_ALL=C tr -dc "$1" </dev/urandom | head -c "$2"; }
plant() { echo "$1" >>"$work/planted"; echo "$1"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
bad=0
checked=0
refused=0
expect() { # expect WANT WHAT ARGS...: one HTTP status check
  local want=$1 what=$2; shift 2
  local got
  got=$(code "$@")
  checked=$((checked + 1))
  if [[ $got != "$want" ]]; then echo "FAIL: $what: $got, want $want" >&2; bad=$((bad + 1)); fi
}
refuse() { # refuse WHAT CMD...: the command must fail
  local what=$1; shift
  if "$@" 2>/dev/null; then echo "FAIL: $what was allowed" >&2; bad=$((bad + 1)); else refused=$((refused + 1)); fi
}

round=0
end=$(( $(date +%s) + secs ))
while (( $(date +%s) < end )); do
  round=$((round + 1))
  a=$mnt/alice
  recall="$api/v1/recall?userId=alice&q=tea"

  # Tokens: issued, used, revoked one and all; an outlived one.
  t1=$("$mm" users token "$root" alice 2>/dev/null)
  t2=$("$mm" users token "$root" alice 2>/dev/null)
  expect 200 "a fresh token" -H "Authorization: Bearer $t1" "$recall"
  id2=$("$mm" users token list "$root" alice | awk 'NR > 1 { id = $1 } END { print id }')
  "$mm" users token revoke "$root" alice "$id2" >/dev/null
  expect 401 "a revoked token" -H "Authorization: Bearer $t2" "$recall"
  expect 200 "the other token" -H "Authorization: Bearer $t1" "$recall"
  "$mm" users token revoke "$root" alice >/dev/null
  expect 401 "a token after revoke-all" -H "Authorization: Bearer $t1" "$recall"
  expect 401 "no token, every token revoked" -H "X-Mindmount-User: alice" "$recall"
  expect 401 "the first token of the run" -H "Authorization: Bearer $first" "$recall"
  expect 200 "health" "$api/health"
  tm=$("$mm" users token "$root" mallory 2>/dev/null)
  "$mm" users remove "$root" mallory >/dev/null
  for _ in $(seq 300); do [[ -e $root/users/mallory ]] || break; sleep 0.1; done
  "$mm" users add "$root" mallory >/dev/null
  expect 401 "mallory's token after remove + add" -H "Authorization: Bearer $tm" "$api/v1/recall?userId=mallory&q=x"

  # The guard, through the mount.
  printf 'commit_secrets: true\n' >"$a/.mindmount/settings"
  refuse "writing .git/mindmount/config through the mount" sh -c "mkdir -p '$a/.git/mindmount' && echo 'commit_secrets: true' >'$a/.git/mindmount/config'"
  gh=$(plant "ghp_$(rnd 'A-Za-z0-9' 36)")
  aws=$(plant "AKIA$(rnd 'A-Z2-7' 16)")
  sk=$(plant "sk_live_$(rnd 'A-Za-z0-9' 24)")
  pw=$(plant "Pw$(rnd 'a-z0-9' 10)")
  printf -- '---\ndescription: Keys of round %d\n---\n# Keys\n\n## Fact\nGitHub %s, AWS %s.\nStripe %s.\nmein Passwort ist %s\n' \
    "$round" "$gh" "$aws" "$sk" "$pw" >"$a/user_memory/keys-$round.md"
  mkdir -p "$a/attachments"
  nul=$(plant "sk_live_$(rnd 'A-Za-z0-9' 24)")
  printf 'key %s\n\0' "$nul" >"$a/attachments/nul-$round.txt"
  big=$(plant "AKIA$(rnd 'A-Z2-7' 16)")
  { head -c $((5 << 20)) /dev/zero | tr '\0' 'x' | fold -w 100; echo "key $big"; } >"$a/attachments/big-$round.txt"
  bin=$(plant "ghp_$(rnd 'A-Za-z0-9' 36)")
  { head -c 4096 /dev/urandom; printf '%s' "$bin"; head -c 4096 /dev/urandom; } >"$a/attachments/blob-$round.bin"
  nm=$(plant "ghp_$(rnd 'A-Za-z0-9' 36)")
  refuse "a file named by a token" sh -c "echo x >'$a/attachments/$nm.txt'"
  dn=$(plant "AKIA$(rnd 'A-Z2-7' 16)")
  refuse "a folder named by a key" mkdir "$a/$dn"
  echo "# Plain $round" >"$a/attachments/plain-$round.md"
  refuse "a rename to a token's name" mv "$a/attachments/plain-$round.md" "$a/attachments/$nm.md"
  sleep 0.3
done

echo "== stopping the daemon"
kill -TERM "$pid"
wait "$pid" || true
pid=""

found=0
: >"$work/objects"
while IFS= read -r gitdir; do
  git --git-dir="$gitdir" cat-file --batch-all-objects --batch >>"$work/objects" 2>/dev/null || true
  git --git-dir="$gitdir" log --all --format=%B >>"$work/objects" 2>/dev/null || true
done < <(find "$root" -name .git -type d -prune)
for f in "$work/objects" "$work/daemon.log" "$work/out" "$root/tokens.json"; do
  n=$(grep -caFf "$work/planted" "$f" || true)
  if (( n > 0 )); then echo "LEAK: $n lines of $f hold a planted secret" >&2; found=$((found + n)); fi
done
for t in "$first" "$t1" "$t2" "$tm"; do
  if grep -qaF "$t" "$root/tokens.json" "$work/daemon.log"; then echo "LEAK: a token value is stored or logged" >&2; found=$((found + 1)); fi
done
committed=$(git -C "$root/users/alice" ls-files | grep -c '^attachments/plain-' || true)

echo "== secrets soak result (${secs}s)"
echo "rounds:                 $round"
echo "secrets planted:        $(wc -l <"$work/planted")"
echo "HTTP checks:            $checked (wrong answers: $bad)"
echo "refusals seen:          $refused"
echo "harmless files committed: $committed"
echo "planted secrets found:  $found (git objects of $(find "$root" -name .git -type d -prune | wc -l) repositories, commit messages, daemon log, tokens.json)"
[[ $found == 0 && $bad == 0 ]]
