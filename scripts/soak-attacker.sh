#!/usr/bin/env bash
# Attacker soak of mindmount serve: for DURATION, one user (alice) holding
# her mount, her repository and her token attacks the daemon, root's
# commands and the other user (bob), in rounds. After each attack the
# script checks that nothing crossed the line, and counts per kind:
#
#   planted    git programs planted in alice's repositories (core.fsmonitor;
#              gpg.program with log.showSignature on a signed HEAD), then
#              root runs status, sync, consolidate, review and check: the
#              program (it appends `id -u` to a marker) never runs as uid 0
#   bigfile    a 60 MB file written through MNT/alice while bob's requests
#              come in: alice's worker keeps its pid, bob is answered
#   symlink    user_memory a symbolic link, before and during a
#              consolidation root runs: it ends (error when set before), and
#              nothing lands in the link's target
#   sigterm    SIGTERM to a consolidation waiting on a model that never
#              answers, to a sync waiting on a remote that never answers, and
#              to serve at the end: gone within 5 s (over 5 s is a hang)
#   workerkill alice's worker killed (SIGKILL) with her requests in flight:
#              /health answers throughout, alice is served again
#   mcp        2,000 MCP session starts and 500 SSE streams from alice's
#              token: every request ends, no out-of-memory kill, alice's
#              slots are freed after, bob answers throughout
#   cursor     .mindmount/cursor.json written, truncated, removed, renamed
#              over through the mount: each refused, the file unchanged
#   bidi       U+202E in a memory (check) and in a model's answer (review of
#              the dream): the output shows it escaped, never raw
#   approve    alice's dreams under review, serve's model slowed: a dream
#              neither shown nor approved while its run writes it; the
#              agent's read,write token cannot approve; a branch alice
#              moves after it was shown is refused (the shown tip and her
#              own); an approval during the next run merges exactly the
#              shown tip, and the dream never waits again
#   settings   root's "hooks install --harness claude-code --scope project"
#              in alice's project whose settings are links to root's file,
#              to /dev/zero, to a FIFO, a FIFO, .claude a link, a link
#              swapped in meanwhile: refused within 5 s naming the link,
#              root's files unchanged, no backup beside them
#   importroot root's "import claude" from paths through alice's links to
#              bob's private Claude memory: bob's canary never reaches the
#              repository (in her folder or a shared one)
#   boundary   after every round: no file of alice's uid outside her trees,
#              no root-owned file in her trees, bob's canary never in
#              anything alice is answered
#
# usage: scripts/soak-attacker.sh DURATION   (e.g. 60, 10m, 1h; default 60s)
# Prints one line per kind: attempts and violations; an attack that could
# not be set up is printed as "not covered". Exit status 1 on any
# violation. ATTACKS="approve_race …" runs some rounds only; BREAK=approve,
# settings or importroot points that round's check at something that must
# fail, to show it reports a violation. Needs root, /dev/fuse, setpriv, git, curl and python3 (the
# model and remote that never answer). Every request goes to 127.0.0.1,
# every loop is bounded in count and time. KEEP=1 keeps the work folder.
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${1:-60}
case $dur in
  *h) secs=$(( ${dur%h} * 3600 )) ;;
  *m) secs=$(( ${dur%m} * 60 )) ;;
  *s) secs=${dur%s} ;;
  *) secs=$dur ;;
esac
[[ $(id -u) == 0 ]] || { echo "soak-attacker: needs root (users with uids of their own)" >&2; exit 2; }
for t in setpriv git curl python3 go; do
  command -v "$t" >/dev/null || { echo "soak-attacker: needs $t" >&2; exit 2; }
done
[[ -e /dev/fuse ]] || { echo "soak-attacker: needs /dev/fuse" >&2; exit 2; }

A=${ALICE_UID:-27301} B=${BOB_UID:-27302}
MCP_SESSIONS=${MCP_SESSIONS:-2000} MCP_STREAMS=${MCP_STREAMS:-500}

work=$(mktemp -d /tmp/mindmount-soak-attacker.XXXXXX)
chmod 755 "$work"
root=$work/root mnt=$work/mnt
mkdir -p "$root" "$mnt"
bg_pids=()
serve_pid=""
serve_kids=()

unmount_all() {
  local m
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || true
  done
}
cleanup() {
  set +e
  local p
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  if [[ -n $serve_pid ]]; then
    serve_kids+=($(pgrep -P "$serve_pid" || true))
    kill -TERM "$serve_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$serve_pid" 2>/dev/null
  fi
  for p in "${serve_kids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  unmount_all
  if [[ ${KEEP:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Counters: attempts, violations and notes per kind.
kinds=(planted bigfile symlink sigterm workerkill mcp cursor bidi approve settings importroot boundary)
declare -A att vio notcov notes
for k in "${kinds[@]}"; do att[$k]=0 vio[$k]=0 notcov[$k]=0 notes[$k]=""; done
attempt() { att[$1]=$(( ${att[$1]} + 1 )); }
violation() { vio[$1]=$(( ${vio[$1]} + 1 )); echo "VIOLATION [$1]: $2" | tee -a "$work/violations" >&2; }
uncovered() { notcov[$1]=$(( ${notcov[$1]} + 1 )); echo "not covered [$1]: $2" >>"$work/uncovered"; }
note() { case " ${notes[$1]} " in *" $2 "*) ;; *) notes[$1]="${notes[$1]} $2" ;; esac; }

as_uid() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups -- "$@"; }
# alice_append FILE: appends stdin to FILE as alice.
alice_append() { as_uid "$A" sh -c 'cat >>"$1"' sh "$1"; }
msg() { printf '{"role":"user","content":"%s"}\n' "$1"; }
alive() { local s; s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [[ $s != Z ]]; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# worker_of ID: the pid of the user's worker ("mindmount worker" holding
# ROOT/users/ID open), empty when none.
worker_of() {
  local dir=$root/users/$1 p f
  for p in /proc/[0-9]*; do
    [[ $(tr '\0' ' ' 2>/dev/null <"$p/cmdline" | awk '{ print $2 }') == worker ]] || continue
    for f in "$p"/fd/*; do
      if [[ $(readlink "$f" 2>/dev/null) == "$dir" ]]; then echo "${p#/proc/}"; return; fi
    done
  done
}

echo "== building mindmount and the fake model server"
go build -o "$work/mindmount" ./cmd/mindmount
go build -o "$work/fakellm" ./scripts/fakellm
chmod 755 "$work/mindmount"
mm=$work/mindmount
export GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@mindmount.local GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@mindmount.local

# The fake model (answers at once), a scripted one whose facts hold a
# bidi override, and a listener that accepts and never answers (a model
# or a git remote that hangs).
"$work/fakellm" >"$work/llm.url" 2>"$work/llm.log" &
bg_pids+=($!)
printf '%s' '{"extract":{"facts":[{"kind":"user","slug":"likes-tea","description":"Likes \u202eaet neerg","fact":"You like \u202eaet neerg.","episode":""}]},"decide":{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}}' >"$work/bidi.json"
"$work/fakellm" -script "$work/bidi.json" >"$work/bidillm.url" 2>"$work/bidillm.log" &
bg_pids+=($!)
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(128)
print(s.getsockname()[1], flush=True)
held = []
while len(held) < 10000:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[1], "a") as f:
        f.write("x\n")
' "$work/hang.count" >"$work/hang.port" 2>"$work/hang.log" &
bg_pids+=($!)
for _ in $(seq 100); do [[ -s $work/llm.url && -s $work/bidillm.url && -s $work/hang.port ]] && break; sleep 0.1; done
llm_url=$(head -1 "$work/llm.url") bidi_url=$(head -1 "$work/bidillm.url") hang_port=$(head -1 "$work/hang.port")
: >"$work/hang.count"
export MINDMOUNT_LLM=ollama MINDMOUNT_MODEL=fake MINDMOUNT_LLM_TIMEOUT=60s
fast_model=(OLLAMA_HOST="$llm_url")
# serve's model: the fast one behind a proxy that holds every chat call
# for the seconds written in $work/slow (none when it is empty), so that
# the approve round can make a dream's run last while it races it.
: >"$work/slow"
python3 -c '
import http.client, http.server, sys, time, urllib.parse
up, slow = urllib.parse.urlparse(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def fwd(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if "chat" in self.path or "messages" in self.path:
            try: d = float(open(slow).read().strip() or 0)
            except (OSError, ValueError): d = 0
            time.sleep(min(d, 30))
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=120)
        c.request(self.command, self.path, body=body, headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")})
        r = c.getresponse(); data = r.read(); c.close()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"): self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = do_HEAD = fwd
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("http://127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
' "$llm_url" "$work/slow" >"$work/proxy.url" 2>"$work/proxy.log" &
bg_pids+=($!)
for _ in $(seq 100); do [[ -s $work/proxy.url ]] && break; sleep 0.1; done
serve_model=(OLLAMA_HOST="$(head -1 "$work/proxy.url")")
bidi_model=(OLLAMA_HOST="$bidi_url")
hang_model=(OLLAMA_HOST="http://127.0.0.1:$hang_port")
hang_accepted() { wc -l <"$work/hang.count"; }

echo "== ROOT with alice (uid $A) and bob (uid $B)"
"$mm" users add "$root" alice --uid "$A" --name Alice >/dev/null
"$mm" users add "$root" bob --uid "$B" >/dev/null
alice_tok=$("$mm" users token "$root" alice 2>/dev/null | tr -d '[:space:]')
bob_tok=$("$mm" users token "$root" bob 2>/dev/null | tr -d '[:space:]')
review_tok=$("$mm" users token "$root" alice --scope review 2>/dev/null | tr -d '[:space:]')
arepo=$root/users/alice
# alice's own folders beside ROOT: scratch repositories and her tools.
mkdir -p "$work/alice"
chown "$A:$A" "$work/alice"
chmod 1777 "$work/alice"

env "${serve_model[@]}" "$mm" serve --root "$root" --mount "$mnt" --http 127.0.0.1:0 --debounce 200ms --max-wait 1s \
  >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
for _ in $(seq 600); do
  grep -q "http on " "$work/serve.out" 2>/dev/null && break
  alive "$serve_pid" || break
  sleep 0.1
done
line=$(head -1 "$work/serve.out" 2>/dev/null || true)
[[ $line == *"http on "* ]] || { echo "serve did not become ready:"; tail -20 "$work/serve.log"; exit 1; }
base="http://${line##*http on }"
echo "== serving at $base, mount $mnt"

# code METHOD PATH TOKEN [curl args...]: prints the HTTP status (000 when
# the request did not end within 10 s or failed).
code() {
  local m=$1 p=$2 tok=$3; shift 3
  curl -s -o /dev/null -m 10 -X "$m" -w '%{http_code}' ${tok:+-H "Authorization: Bearer $tok"} "$@" "$base$p" 2>/dev/null || true
}

# bob's canary: a memory only bob may ever see.
canary="zq$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')canary"
as_uid "$B" sh -c "printf -- '---\ndescription: Bob secret %s\n---\n# Bob\n\n## Fact\nBob keeps %s.\n' $canary $canary >$mnt/bob/user_memory/bob-secret.md"
for _ in $(seq 100); do [[ $(code GET "/v1/recall?userId=bob&q=$canary" "$bob_tok") == 200 ]] && break; sleep 0.2; done

# ---- planted: git programs planted by alice, run by root -------------
tools=$work/tools
mkdir -p "$tools"; chmod 1777 "$tools"
marker=$tools/ran
printf '#!/bin/sh\nid -u >> %s\nexit 1\n' "$marker" >"$tools/pwn.sh"
chmod 755 "$tools/pwn.sh"
plant_script='set -e
export HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1
cd "$1"
tree=$(git rev-parse "HEAD^{tree}"); parent=$(git rev-parse HEAD)
c=$(printf "tree %s\nparent %s\nauthor %s\ncommitter %s\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nconsolidate: planted\n" "$tree" "$parent" "$3" "$3" | git hash-object -t commit -w --stdin)
git update-ref HEAD "$c"
git config core.fsmonitor "$2"
git config log.showSignature true
git config gpg.program "$2"
git log -1 --format=%h >/dev/null 2>&1 || true
'
unplant() { as_uid "$A" sh -c 'cd "$1" && for k in core.fsmonitor log.showSignature gpg.program; do git config --unset "$k"; done; true' sh "$1" 2>/dev/null || true; }
# a scratch repository of alice's that no daemon serves; both have a
# remote of hers (a bare repository), so sync fetches, merges and pushes
as_uid "$A" "$mm" init "$work/alice/plain" >/dev/null
for r in "$arepo" "$work/alice/plain"; do
  as_uid "$A" git init -q --bare "$work/alice/${r##*/}-remote.git"
  as_uid "$A" "$mm" remote set "$r" "$work/alice/${r##*/}-remote.git" >/dev/null
done
# sync reads a credentials file ($MINDMOUNT_CREDENTIALS, else under
# $HOME): one of alice's, none in it.
export MINDMOUNT_CREDENTIALS=$work/alice/credentials
attack_planted() {
  local repo cmd rc
  for repo in "$arepo" "$work/alice/plain"; do
    rm -f "$marker"
    if ! as_uid "$A" sh -c "$plant_script" sh "$repo" "$tools/pwn.sh" "consolidator <consolidator@mindmount.local> 1700000000 +0000" >"$work/plant.out" 2>&1 \
      || ! grep -qx "$A" "$marker" 2>/dev/null; then
      uncovered planted "plain git as alice did not run the planted program in $repo: $(tail -1 "$work/plant.out")"
      unplant "$repo"
      continue
    fi
    msg "I water the plants, round $RANDOM." | alice_append "$repo/transcripts/planted.jsonl"
    for cmd in status sync consolidate review check; do
      attempt planted
      rm -f "$marker"
      rc=0
      env "${fast_model[@]}" timeout -s KILL 60 "$mm" "$cmd" "$repo" >"$work/planted.$cmd.out" 2>&1 || rc=$?
      if [[ $rc == 137 ]]; then
        violation sigterm "root's 'mindmount $cmd' on alice's planted repository still ran after 60 s"
      fi
      if grep -qx 0 "$marker" 2>/dev/null; then
        violation planted "root's 'mindmount $cmd $repo' ran alice's planted program as uid 0"
      fi
    done
    unplant "$repo"
  done
}

# ---- bigfile: 60 MB through the mount ------------------------------
attack_bigfile() {
  attempt bigfile
  local w0 w1 rc=0 bad=0 i c
  w0=$(worker_of alice)
  # bob's requests while alice writes: bounded in count and time.
  : >"$work/bob.codes"; rm -f "$work/big.done"
  ( for i in $(seq 60); do
      c=$(code GET "/v1/recall?userId=bob&q=tea" "$bob_tok"); echo "$c" >>"$work/bob.codes"; sleep 0.25
      [[ -e $work/big.done ]] && break
    done ) &
  local bobloop=$!
  as_uid "$A" timeout -s KILL 180 sh -c "head -c 46000000 /dev/urandom | base64 -w 76 | (printf -- '---\ndescription: Big\n---\n# Big\n\n## Fact\n'; cat) >$mnt/alice/user_memory/big.md" \
    >"$work/big.out" 2>&1 || rc=$?
  # the worker takes the file in: committed, or held back (invalid, a
  # secret) as its status says; bob's requests go on meanwhile
  local seen=""
  if [[ $rc == 0 ]]; then
    for i in $(seq 120); do
      if [[ -n $(as_uid "$A" git -C "$arepo" log -1 --format=%h -- user_memory/big.md 2>/dev/null) ]]; then seen=committed; break; fi
      if as_uid "$A" timeout -s KILL 10 grep -q big.md "$mnt/alice/.mindmount/status" 2>/dev/null; then seen=held-back; break; fi
      sleep 0.5
    done
    note bigfile "${seen:-not-taken-in-within-60s}"
  fi
  touch "$work/big.done"
  wait "$bobloop" || true
  [[ $rc == 137 ]] && violation bigfile "writing 60 MB through MNT/alice did not end within 180 s"
  [[ $rc != 0 && $rc != 137 ]] && note bigfile "write-refused:$(tail -1 "$work/big.out" | tr ' ' '_' | cut -c1-60)"
  as_uid "$A" timeout -s KILL 60 rm -f "$mnt/alice/user_memory/big.md" 2>/dev/null || true
  bad=$(grep -cv '^200$' "$work/bob.codes" || true)
  (( bad > 0 )) && violation bigfile "bob unanswered $bad times of $(wc -l <"$work/bob.codes") while alice wrote 60 MB ($(grep -v '^200$' "$work/bob.codes" | sort | uniq -c | tr '\n' ' '))"
  w1=$(worker_of alice)
  if [[ -z $w1 ]]; then
    for _ in $(seq 100); do w1=$(worker_of alice); [[ -n $w1 ]] && break; sleep 0.1; done
  fi
  [[ -n $w0 && $w1 != "$w0" ]] && violation bigfile "alice's worker crashed on a 60 MB file (pid $w0 -> ${w1:-none})"
  [[ $(code GET /health "") == 200 ]] || violation bigfile "/health unanswered after the 60 MB file"
}

# ---- symlink: user_memory a link during consolidation -----------------
attack_symlink() {
  local repo=$work/alice/linked out=$work/alice/outside rc pid t0 i
  rm -rf "$repo" "$out"
  as_uid "$A" "$mm" init "$repo" >/dev/null
  as_uid "$A" mkdir "$out"
  # 1. the link is there before the run: it must end with an error.
  attempt symlink
  as_uid "$A" sh -c 'mv "$1/user_memory" "$1/um.real" && ln -s "$2" "$1/user_memory"' sh "$repo" "$out"
  msg "I keep bees." | alice_append "$repo/transcripts/s1.jsonl"
  rc=0
  env "${fast_model[@]}" timeout -s KILL 30 "$mm" consolidate "$repo" >"$work/symlink.out" 2>&1 || rc=$?
  if [[ $rc == 137 ]]; then violation symlink "consolidate with user_memory a link still ran after 30 s"
  elif [[ $rc == 0 ]]; then violation symlink "consolidate with user_memory a link exited 0: $(tail -1 "$work/symlink.out")"
  fi
  # 2. the link replaces the folder while the run goes on.
  attempt symlink
  as_uid "$A" sh -c 'rm "$1/user_memory" && mv "$1/um.real" "$1/user_memory"' sh "$repo"
  for i in 1 2 3 4 5 6; do msg "I keep bees, hive $i."; done | alice_append "$repo/transcripts/s2.jsonl"
  env "${fast_model[@]}" "$mm" consolidate "$repo" >"$work/symlink2.out" 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 4))"
  as_uid "$A" sh -c 'mv "$1/user_memory" "$1/um.real" && ln -s "$2" "$1/user_memory"' sh "$repo" "$out" 2>/dev/null || true
  t0=$(now)
  for i in $(seq 300); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then
    violation symlink "consolidate with user_memory swapped for a link still ran 30 s later"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  if [[ -n $(ls -A "$out") ]]; then violation symlink "consolidation wrote through the link: $(ls -A "$out" | head -3 | tr '\n' ' ')"; fi
  find "$out" -uid 0 | grep -q . && violation symlink "root-owned file through the link"
  true
}

# ---- sigterm: long operations stopped ---------------------------------
# term_within PID WHAT: SIGTERM, then the process and the children it had
# must be gone within 5 s.
term_within() {
  local pid=$1 what=$2 kids t0 t k gone
  kids=$({ pgrep -P "$pid" || true; } | tr '\n' ' ')
  for k in $kids; do kids+=" $({ pgrep -P "$k" || true; } | tr '\n' ' ')"; done
  t0=$(now)
  kill -TERM "$pid"
  for _ in $(seq 100); do
    gone=1
    for k in $pid $kids; do alive "$k" && gone=0; done
    (( gone )) && break
    sleep 0.05
  done
  t=$(elapsed "$t0")
  echo "$what $t" >>"$work/term.times"
  if (( ! gone )); then
    violation sigterm "$what: still running ${t}s after SIGTERM (pids: $(for k in $pid $kids; do alive "$k" && echo -n "$k "; done))"
    for k in $pid $kids; do kill -KILL "$k" 2>/dev/null || true; done
  fi
  wait "$pid" 2>/dev/null || true
}
# wait_accept N PID: the hanging listener accepted more than N connections
wait_accept() {
  local n=$1 pid=$2
  for _ in $(seq 400); do
    (( $(hang_accepted) > n )) && return 0
    alive "$pid" || return 1
    sleep 0.05
  done
  return 1
}
as_uid "$A" "$mm" init "$work/alice/slow" >/dev/null
as_uid "$A" "$mm" remote set "$work/alice/slow" "http://127.0.0.1:$hang_port/memory.git" >/dev/null
attack_sigterm() {
  local repo=$work/alice/slow who n pid
  for who in root alice; do
    # a consolidation waiting on a model that never answers
    attempt sigterm
    msg "I keep bees, round $RANDOM." | alice_append "$repo/transcripts/s.jsonl"
    n=$(hang_accepted)
    if [[ $who == root ]]; then
      env "${hang_model[@]}" "$mm" consolidate "$repo" >"$work/term.out" 2>&1 &
    else
      env "${hang_model[@]}" setpriv --reuid "$A" --regid "$A" --clear-groups -- "$mm" consolidate "$repo" >"$work/term.out" 2>&1 &
    fi
    pid=$!
    if wait_accept "$n" "$pid"; then
      term_within "$pid" "consolidate (as $who, model hangs)"
    else
      uncovered sigterm "consolidate as $who never reached the hanging model: $(tail -1 "$work/term.out")"
      kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    fi
    # a sync waiting on a remote that never answers
    attempt sigterm
    n=$(hang_accepted)
    if [[ $who == root ]]; then
      "$mm" sync "$repo" >"$work/term.out" 2>&1 &
    else
      setpriv --reuid "$A" --regid "$A" --clear-groups -- "$mm" sync "$repo" >"$work/term.out" 2>&1 &
    fi
    pid=$!
    if wait_accept "$n" "$pid"; then
      term_within "$pid" "sync (as $who, remote hangs)"
    else
      uncovered sigterm "sync as $who never reached the hanging remote: $(tail -1 "$work/term.out")"
      kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    fi
  done
}

# ---- workerkill -------------------------------------------------------
# A worker that dies three times in a row (less than a minute apart) is
# held back for 5 minutes by design: at most two kills per row.
kills_in_row=0
attack_workerkill() {
  local w age i j lp=() c served=0 t0
  w=$(worker_of alice)
  [[ -n $w ]] || { uncovered workerkill "alice has no worker to kill"; return; }
  age=$(ps -o etimes= -p "$w" | tr -d ' ')
  (( age >= 65 )) && kills_in_row=0
  (( kills_in_row >= 2 )) && { note workerkill "held-off-kill:worker-younger-than-65s"; return; }
  attempt workerkill
  : >"$work/alice.codes"
  for j in 1 2 3; do
    ( for i in $(seq 40); do
        c=$(code GET "/v1/recall?userId=alice&q=tea" "$alice_tok"); echo "$c" >>"$work/alice.codes"
        [[ -e $work/kill.done ]] && break
      done ) &
    lp+=($!)
  done
  rm -f "$work/kill.done"
  sleep 0.5
  kill -KILL "$w"
  kills_in_row=$((kills_in_row + 1))
  t0=$(now)
  for i in $(seq 60); do
    [[ $(code GET /health "") == 200 ]] || violation workerkill "/health unanswered $(elapsed "$t0")s after alice's worker was killed"
    if [[ $(code GET "/v1/recall?userId=alice&q=tea" "$alice_tok") == 200 && -n $(worker_of alice) && $(worker_of alice) != "$w" ]]; then served=1; break; fi
    sleep 0.5
  done
  touch "$work/kill.done"
  for j in "${lp[@]}"; do wait "$j" || true; done
  (( served )) || violation workerkill "alice not served again 30 s after her worker was killed"
  [[ $(code GET "/v1/recall?userId=bob&q=tea" "$bob_tok") == 200 ]] || violation workerkill "bob unanswered after alice's worker was killed"
  c=$(grep -c '^000$' "$work/alice.codes" || true)
  (( c > 0 )) && violation workerkill "$c of alice's in-flight requests did not end within 10 s"
  echo "$(elapsed "$t0")" >>"$work/served.times"
}

# ---- mcp: many sessions and streams -----------------------------------
printf '%s' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}' >"$work/init.json"
oom_kills() { awk '$1 == "oom_kill" { print $2 }' /proc/vmstat; }
attack_mcp() {
  attempt mcp
  local i n ids=() oom0 w0 w1 ended c
  oom0=$(oom_kills); w0=$(worker_of alice)
  {
    for i in $(seq "$MCP_SESSIONS"); do
      printf 'next\nurl = "%s/mcp"\nrequest = "POST"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\nheader = "Accept: application/json, text/event-stream"\ndata-binary = "@%s"\nmax-time = 15\noutput = "/dev/null"\nwrite-out = "%%{http_code} %%header{mcp-session-id}\\n"\n' \
        "$base" "$alice_tok" "$work/init.json"
    done
  } | sed 1d >"$work/sessions.cfg"
  curl -s --parallel --parallel-immediate --parallel-max 32 -K "$work/sessions.cfg" >"$work/sessions.out" 2>/dev/null || true
  ended=$(wc -l <"$work/sessions.out")
  (( ended == MCP_SESSIONS )) || violation mcp "$((MCP_SESSIONS - ended)) of $MCP_SESSIONS session starts gave no answer"
  c=$(awk '$1 == "000"' "$work/sessions.out" | wc -l)
  (( c > 0 )) && violation mcp "$c session starts did not end within 15 s"
  echo "sessions: $(awk '{ print $1 }' "$work/sessions.out" | sort | uniq -c | tr '\n' ' ')" >>"$work/mcp.codes"
  mapfile -t ids < <(awk '$1 == 200 && $2 != "" { print $2 }' "$work/sessions.out")
  if (( ${#ids[@]} == 0 )); then
    uncovered mcp "no MCP session was started: streams not tried ($(head -1 "$work/sessions.out"))"
  else
    {
      for i in $(seq "$MCP_STREAMS"); do
        printf 'next\nurl = "%s/mcp"\nheader = "Authorization: Bearer %s"\nheader = "Accept: text/event-stream"\nheader = "Mcp-Session-Id: %s"\nmax-time = 3\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' \
          "$base" "$alice_tok" "${ids[i % ${#ids[@]}]}"
      done
    } | sed 1d >"$work/streams.cfg"
    curl -s --parallel --parallel-immediate --parallel-max 100 -K "$work/streams.cfg" >"$work/streams.out" 2>/dev/null || true
    ended=$(wc -l <"$work/streams.out")
    (( ended == MCP_STREAMS )) || violation mcp "$((MCP_STREAMS - ended)) of $MCP_STREAMS streams gave no answer"
    echo "streams: $(sort "$work/streams.out" | uniq -c | tr '\n' ' ')" >>"$work/mcp.codes"
    # 200: a stream (cut by curl after 3 s), 409: the session has one,
    # 429: alice's cap; 000: not even an answer within 3 s
    c=$(grep -c '^000$' "$work/streams.out" || true)
    (( c > 0 )) && violation mcp "$c of $MCP_STREAMS streams had no answer within 3 s"
    # the sessions end: each DELETE is answered
    for i in "${ids[@]}"; do
      c=$(code DELETE /mcp "$alice_tok" -H "Mcp-Session-Id: $i")
      [[ $c == 000 ]] && violation mcp "DELETE of an MCP session unanswered"
    done
  fi
  [[ $(code GET "/v1/recall?userId=bob&q=tea" "$bob_tok") == 200 ]] || violation mcp "bob unanswered after alice's sessions and streams"
  # alice's slots are freed once her streams ended: she is answered again.
  c=000
  for i in $(seq 20); do c=$(code GET "/v1/recall?userId=alice&q=tea" "$alice_tok"); [[ $c == 200 ]] && break; sleep 0.5; done
  [[ $c == 200 ]] || violation mcp "alice still refused ($c) 10 s after her streams ended: slots leaked"
  (( $(oom_kills) > oom0 )) && violation mcp "the kernel killed a process for memory during the MCP attack"
  w1=$(worker_of alice)
  [[ -n $w0 && $w1 != "$w0" ]] && violation mcp "alice's worker died during the MCP attack (pid $w0 -> ${w1:-none})"
  [[ -n $w1 ]] && echo "$(awk '/VmHWM/ { print $2 }' "/proc/$w1/status")" >>"$work/worker.hwm"
  true
}

# ---- cursor through the mount -----------------------------------------
attack_cursor() {
  local f=$mnt/alice/.mindmount/cursor.json real=$arepo/.mindmount/cursor.json before after op
  before=$(sha1sum "$real" 2>/dev/null || echo none)
  for op in write truncate create-rename remove; do
    attempt cursor
    local rc=0
    case $op in
      write) as_uid "$A" timeout -s KILL 20 sh -c "printf '{\"offsets\":{}}' >'$f'" 2>/dev/null || rc=$? ;;
      truncate) as_uid "$A" timeout -s KILL 20 truncate -s 0 "$f" 2>/dev/null || rc=$? ;;
      create-rename) as_uid "$A" timeout -s KILL 20 sh -c "printf '{}' >'$mnt/alice/.mindmount/c.tmp' && mv '$mnt/alice/.mindmount/c.tmp' '$f'" 2>/dev/null || rc=$?
        as_uid "$A" timeout -s KILL 20 rm -f "$mnt/alice/.mindmount/c.tmp" 2>/dev/null || true ;;
      remove) as_uid "$A" timeout -s KILL 20 rm "$f" 2>/dev/null || rc=$? ;;
    esac
    [[ $rc == 137 ]] && violation cursor "cursor $op through the mount did not end within 20 s"
    # rm of a cursor that does not exist fails anyway: judged by the file.
    [[ $rc == 0 ]] && violation cursor "cursor $op through the mount succeeded"
  done
  after=$(sha1sum "$real" 2>/dev/null || echo none)
  [[ $before == "$after" ]] || violation cursor "the cursor changed: $before -> $after"
}

# ---- bidi -------------------------------------------------------------
rlo=$'\u202e'
as_uid "$A" "$mm" init "$work/alice/review" >/dev/null
as_uid "$A" sh -c 'mkdir -p "$1/.git/mindmount" && printf "merge: review\n" >>"$1/.git/mindmount/config"' sh "$work/alice/review"
attack_bidi() {
  local out
  # check on a memory alice wrote through her mount
  attempt bidi
  as_uid "$A" timeout -s KILL 20 sh -c "printf -- '---\ndescription: Tea\n---\n# Tea\n\n## Fact\nTea, ${rlo}desab-kcalb only.\n' >'$mnt/alice/user_memory/bidi-tea.md'" 2>/dev/null \
    || { uncovered bidi "alice could not write a memory through her mount"; }
  for _ in $(seq 50); do [[ -f $arepo/user_memory/bidi-tea.md ]] && break; sleep 0.1; done
  out=$(timeout -s KILL 60 "$mm" check "$arepo" 2>&1 || true)
  if [[ $out == *"$rlo"* ]]; then violation bidi "mindmount check printed U+202E raw"
  elif [[ $out != *U+202E* ]]; then violation bidi "mindmount check did not name the U+202E in bidi-tea.md: $(echo "$out" | head -2)"
  fi
  # review of a dream whose facts came from the model with U+202E
  attempt bidi
  msg "I like green tea, round $RANDOM." | alice_append "$work/alice/review/transcripts/s.jsonl"
  env "${bidi_model[@]}" timeout -s KILL 60 "$mm" consolidate "$work/alice/review" >"$work/bidi.cons" 2>&1 || true
  out=$(timeout -s KILL 60 "$mm" review "$work/alice/review" 2>&1 || true)
  if [[ $out == *"$rlo"* ]]; then violation bidi "mindmount review printed U+202E raw"
  elif [[ $out != *neerg* ]]; then uncovered bidi "no dream with the model's fact to review: $(echo "$out" | head -1) / $(tail -1 "$work/bidi.cons")"
  fi
  local n
  n=$(echo "$out" | grep -o 'dream [0-9]*' | head -1 | awk '{ print $2 }')
  if [[ -n $n ]]; then
    attempt bidi
    out=$(timeout -s KILL 60 "$mm" review show "$n" "$work/alice/review" 2>&1 || true)
    [[ $out == *"$rlo"* ]] && violation bidi "mindmount review show printed U+202E raw"
  fi
  as_uid "$A" timeout -s KILL 20 rm -f "$mnt/alice/user_memory/bidi-tea.md" 2>/dev/null || true
}

# ---- approve: an approval racing a running dream -----------------------
# alice's dreams wait for review during this round (her own
# .git/mindmount/config); serve's model answers each chat call after 1 s,
# so a run over a long transcript commits chunk after chunk for a while.
# ag ARGS: git as alice in her served repository (never root's git there).
ag() { as_uid "$A" git -C "$arepo" "$@"; }
dream_tip() { ag rev-parse -q --verify "refs/heads/mindmount/dream/$1" 2>/dev/null || true; }
dream_numbers() { ag for-each-ref --format='%(refname:short)' 'refs/heads/mindmount/dream/' 2>/dev/null | sed 's|.*/||' | sort -n; }
# api METHOD PATH TOKEN OUT [BODY]: the HTTP status, the answer in OUT.
api() {
  curl -s -o "$4" -m 60 -w '%{http_code}' -X "$1" -H "Authorization: Bearer $3" ${5:+-H 'Content-Type: application/json' -d "$5"} "$base$2" 2>/dev/null || true
}
# listed_tip N: the tip GET /v1/review lists for dream N, empty when not listed.
listed_tip() {
  api GET "/v1/review?userId=alice" "$review_tok" "$work/review.list" >/dev/null
  python3 -c 'import json, sys
try: ds = json.load(open(sys.argv[1])).get("dreams") or []
except Exception: ds = []
print(next((d["tip"] for d in ds if str(d["n"]) == sys.argv[2]), ""))' "$work/review.list" "$1"
}
listed_numbers() {
  api GET "/v1/review?userId=alice" "$review_tok" "$work/review.list" >/dev/null
  python3 -c 'import json, sys
try: print(" ".join(str(d["n"]) for d in json.load(open(sys.argv[1])).get("dreams") or []))
except Exception: pass' "$work/review.list"
}
# start_dream TAG: posts a long transcript to /v1/consolidate?wait=1 in the
# background (dream_pid: it ends when the run does).
start_dream() {
  python3 -c 'import json, sys
words = "the hives by the river need checking before the honey harvest and the queen".split()
msgs = [{"role": "user", "content": "About my bees, part %d of %s: " % (i, sys.argv[1]) + " ".join(words[(i + j) % len(words)] for j in range(700))} for i in range(14)]
print(json.dumps({"userId": "alice", "transcript": msgs}))' "$1-$RANDOM" >"$work/dream.$1.json"
  curl -s -m 300 -o "$work/dream.$1.out" -H "Authorization: Bearer $alice_tok" -H 'Content-Type: application/json' \
    --data-binary @"$work/dream.$1.json" "$base/v1/consolidate?wait=1" 2>/dev/null &
  dream_pid=$!
}
# new_dream BEFORE: the number of a dream branch not in BEFORE, waited for
# while the run goes on (empty when none came).
new_dream() {
  local n
  for _ in $(seq 240); do
    for n in $(dream_numbers); do [[ " $1 " == *" $n "* ]] || { echo "$n"; return; }; done
    alive "$dream_pid" || return 0
    sleep 0.25
  done
}
# merge_problems SHOWN: what the live branch merged of a dream beyond the
# tip SHOWN: no merge of it, or a memory of the merge other than the
# shown tip's. Prints nothing when the merge is exactly what was shown.
merge_problems() {
  local m p a b
  m=$(ag log --merges --format='%H %P' HEAD 2>/dev/null | awk -v t="$1" '$3 == t { print $1; exit }')
  [[ -n $m ]] || { echo "no merge of ${1:0:12} on the live branch"; return; }
  for p in $(ag diff --name-only "$m^1" "$m" -- user_memory character_memory 2>/dev/null); do
    a=$(ag rev-parse -q --verify "$m:$p" 2>/dev/null || echo gone)
    b=$(ag rev-parse -q --verify "$1:$p" 2>/dev/null || echo gone)
    [[ $a == "$b" ]] || echo "$p in the merge is not the shown tip's"
  done
}
# smuggle TIP N [TRAILER]: alice (her own repository, plain git) adds a
# memory on top of dream N's branch after the reviewer saw TIP, with the
# run's Mindmount-Dream trailer when TRAILER is set; prints the new tip.
smuggle() {
  as_uid "$A" sh -c 'set -e
cd "$1"; idx=$4/idx.$$; export GIT_INDEX_FILE=$idx
blob=$(printf -- "---\ndescription: Smuggled\n---\n# Smuggled\n\n## Fact\nNot what the reviewer saw.\n" | git hash-object -w --stdin)
git read-tree "$2"
git update-index --add --cacheinfo "100644,$blob,user_memory/smuggled-$3.md"
c=$(git commit-tree "$(git write-tree)" -p "$2" -m "consolidate: one more" ${5:+-m "Mindmount-Dream: mindmount/dream/$3"})
rm -f "$idx"
git update-ref "refs/heads/mindmount/dream/$3" "$c" "$2"
echo "$c"' sh "$arepo" "$1" "$2" "$work/alice" "${3:-}"
}
attack_approve_race() {
  local cfg=$arepo/.git/mindmount/config had="" n n2 tip shown t code moved p i early=""
  had=$(cat "$cfg" 2>/dev/null || echo '<none>')
  as_uid "$A" sh -c 'mkdir -p "${1%/*}" && printf "merge: review\n" >>"$1"' sh "$cfg"
  echo 1 >"$work/slow"
  # 1. while the run writes dream N: it is not shown, and not approved,
  #    even with the tip read from the branch itself
  start_dream a
  n=$(new_dream "$(dream_numbers | tr '\n' ' ')")
  if [[ -z $n ]]; then
    uncovered approve "the run made no dream branch: $(head -c 200 "$work/dream.a.out" 2>/dev/null)"
  fi
  [[ -n $n ]] && attempt approve
  for i in $(seq 120); do
    [[ -n $n ]] && alive "$dream_pid" || break
    tip=$(dream_tip "$n")
    code=$(api GET "/v1/review/$n?userId=alice" "$review_tok" "$work/review.show")
    if [[ $code == 200 ]] && alive "$dream_pid"; then
      shown=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("tip", ""))' "$work/review.show" 2>/dev/null)
      echo "$shown" >>"$work/early.shown"
    fi
    if [[ -n $tip && -z $early ]]; then
      attempt approve
      early=$(api POST "/v1/review/$n/approve" "$review_tok" "$work/review.early" "{\"userId\":\"alice\",\"tip\":\"$tip\"}")
      note approve "approve-while-running:$early"
      if [[ $early == 200 ]]; then
        for _ in $(seq 240); do alive "$dream_pid" || break; sleep 0.25; done
        [[ -n $(dream_tip "$n") && $(dream_tip "$n") != "$tip" || -n $(listed_tip "$n") ]] &&
          violation approve "dream $n approved at ${tip:0:12} while its run still wrote it: it kept growing after the merge"
      fi
    fi
    sleep 0.25
  done
  wait "$dream_pid" 2>/dev/null || true
  if [[ -s $work/early.shown && -n $n ]]; then
    t=$(dream_tip "$n")
    while read -r shown; do
      [[ -n $t && $shown != "$t" ]] && violation approve "GET /v1/review/$n showed ${shown:0:12} while its run still wrote it (it ended at ${t:0:12})"
    done <"$work/early.shown"
    rm -f "$work/early.shown"
  fi
  [[ $early == 200 ]] && n=""
  tip=""
  if [[ -n $n ]]; then
    tip=$(listed_tip "$n")
    [[ -n $tip ]] || uncovered approve "dream $n was not listed once its run ended: $(head -c 200 "$work/dream.a.out")"
  fi
  if [[ -n $tip ]]; then
    t=$(dream_tip "$n")
    [[ $t == "$tip" ]] || violation approve "GET /v1/review lists dream $n at ${tip:0:12}, its branch is at ${t:0:12}"
    # 2. the agent's token (read,write) approves its own dream: refused
    attempt approve
    code=$(api POST "/v1/review/$n/approve" "$alice_tok" "$work/review.agent" "{\"userId\":\"alice\",\"tip\":\"$tip\"}")
    [[ $code == 200 ]] && { violation approve "alice's agent token (read,write) approved her dream $n"; tip=""; }
    [[ $code != 403 && $code != 200 ]] && note approve "agent-approve:$code"
  fi
  if [[ -n $tip ]]; then
    # 3. the branch moves after the reviewer saw it: approving the shown
    #    tip is refused, nothing smuggled is merged
    attempt approve
    moved=$(smuggle "$tip" "$n" "$([[ ${BREAK:-} == approve ]] && echo trailer)" 2>"$work/smuggle.err" || true)
    if [[ -z $moved ]]; then
      uncovered approve "alice could not move dream $n's branch: $(tail -1 "$work/smuggle.err")"
    else
      shown=$tip
      # the tip alice made, never shown (the dream then shows nothing):
      # approving it is refused too, never a "merged" of nothing
      code=""
      if [[ ${BREAK:-} != approve ]]; then
        attempt approve
        code=$(api POST "/v1/review/$n/approve" "$review_tok" "$work/review.unshown" "{\"userId\":\"alice\",\"tip\":\"$moved\"}")
        if [[ $code == 200 ]]; then
          violation approve "approving dream $n at alice's own tip ${moved:0:12} answered $(head -c 120 "$work/review.unshown")"
        fi
        [[ $code == 409 || $code == 200 ]] || note approve "unshown-approve:$code"
      fi
      [[ ${BREAK:-} == approve ]] && shown=$moved
      [[ $code == 200 ]] || code=$(api POST "/v1/review/$n/approve" "$review_tok" "$work/review.moved" "{\"userId\":\"alice\",\"tip\":\"$shown\"}")
      if [[ $code == 200 ]]; then
        if ag cat-file -e "HEAD:user_memory/smuggled-$n.md" 2>/dev/null; then
          violation approve "dream $n merged a memory added after the reviewer saw ${tip:0:12} ($code)"
        fi
        p=$(merge_problems "$tip" | head -2 | tr '\n' ' ')
        [[ -n $p ]] && violation approve "dream $n approved at the shown ${tip:0:12} after its branch moved: $p"
        tip=""
      else
        [[ $code == 409 ]] || note approve "moved-approve:$code"
        ag update-ref "refs/heads/mindmount/dream/$n" "$tip" "$moved" 2>/dev/null || uncovered approve "dream $n's branch could not be put back"
      fi
    fi
  fi
  if [[ -n $tip ]]; then
    # 4. the shown tip approved while another run writes the next dream:
    #    exactly the shown tip is merged, and dream N never comes back
    start_dream b
    n2=$(new_dream "$(dream_numbers | tr '\n' ' ')")
    [[ -n $n2 ]] || note approve "second-run-made-no-dream-before-approve"
    attempt approve
    code=$(api POST "/v1/review/$n/approve" "$review_tok" "$work/review.ok" "{\"userId\":\"alice\",\"tip\":\"$tip\"}")
    if [[ $code == 200 ]]; then
      p=$(merge_problems "$tip" | head -3 | tr '\n' ' ')
      [[ -n $p ]] && violation approve "dream $n approved at ${tip:0:12} during another run: $p"
    else
      note approve "approve-during-other-run:$code"
    fi
    wait "$dream_pid" 2>/dev/null || true
    if [[ $code == 200 ]]; then
      [[ " $(listed_numbers) " == *" $n "* ]] && violation approve "dream $n is waiting again after its approval"
      [[ -n $(dream_tip "$n") ]] && violation approve "dream $n's branch stays after its approval"
    fi
  fi
  # the round's leftovers: every waiting dream rejected, the setting back
  for i in $(listed_numbers); do
    api POST "/v1/review/$i/reject" "$review_tok" "$work/review.reject" '{"userId":"alice","reason":"soak"}' >/dev/null
  done
  : >"$work/slow"
  if [[ $had == '<none>' ]]; then as_uid "$A" rm -f "$cfg"
  else printf '%s\n' "$had" | as_uid "$A" sh -c 'cat >"$1"' sh "$cfg"
  fi
  true
}

# ---- settings: root's hooks install in a project alice made -----------
# .claude/settings.local.json (and settings.json, .mcp.json) a link to a
# root-owned file outside, to /dev/zero, to a FIFO outside; a FIFO; .claude
# a link to a root-owned folder; a file swapped for a link while install
# runs. Root wires the project to root's own memory.
"$mm" init "$work/rootmem" >/dev/null
rs=$work/rootside
mkdir -p "$rs/claude"
printf '{"permissions":{"allow":["Bash(true)"]}}\n' >"$rs/settings.json"
cp "$rs/settings.json" "$rs/claude/settings.local.json"
as_uid "$A" mkfifo "$work/alice/settings.fifo"
# rootside: root's files behind the links, and what lies beside them
rootside() { sha256sum "$rs/settings.json" "$rs/claude/settings.local.json"; ls -A "$rs" "$rs/claude" | tr '\n' ' '; ls /dev | grep -c mindmount || true; }
attack_symlinked_settings() {
  local proj=$work/alice/proj v rc t0 t before out target=$rs/settings.json
  before=$(rootside)
  for v in link-root link-all link-zero link-fifo fifo dir-link; do
    rm -rf "$proj"
    as_uid "$A" mkdir -p "$proj/.claude"
    local s=$proj/.claude/settings.local.json
    case $v in
      link-root) if [[ ${BREAK:-} == settings ]]; then as_uid "$A" cp "$target" "$s"; target=$s; before=$(sha256sum "$s"); else as_uid "$A" ln -s "$target" "$s"; fi ;;
      link-all) for f in "$s" "$proj/.claude/settings.json" "$proj/.mcp.json"; do as_uid "$A" ln -s "$target" "$f"; done ;;
      link-zero) as_uid "$A" ln -s /dev/zero "$s" ;;
      link-fifo) as_uid "$A" ln -s "$work/alice/settings.fifo" "$s" ;;
      fifo) as_uid "$A" mkfifo "$s" ;;
      dir-link) as_uid "$A" rmdir "$proj/.claude"; as_uid "$A" ln -s "$rs/claude" "$proj/.claude" ;;
    esac
    attempt settings
    rc=0; t0=$(now)
    (cd "$proj" && timeout -s KILL 5 "$mm" hooks install --harness claude-code --scope project "$work/rootmem") >"$work/settings.out" 2>&1 || rc=$?
    t=$(elapsed "$t0"); out=$(tr '\n' ' ' <"$work/settings.out" | cut -c1-160)
    echo "$v $t" >>"$work/settings.times"
    if [[ $rc == 137 ]]; then violation settings "hooks install with $v still ran after 5 s"
    elif [[ $rc == 0 ]]; then violation settings "hooks install with $v exited 0: $out"
    elif ! grep -qF "$proj/.claude" "$work/settings.out"; then violation settings "hooks install with $v did not name the link: $out"
    fi
    if [[ ${BREAK:-} == settings && $v == link-root ]]; then
      [[ $(sha256sum "$s") == "$before" ]] || violation settings "the file behind $v changed (BREAK=settings: a plain file, no link)"
      target=$rs/settings.json before=$(rootside)
    fi
    [[ $(rootside) == "$before" ]] || violation settings "root's files changed or a backup was written beside them ($v): $(rootside | tr '\n' ' ' | cut -c1-200)"
  done
  # the race: alice swaps a plain settings file and a link to root's file
  # for 3 s while root installs again and again
  rm -rf "$proj"; as_uid "$A" mkdir -p "$proj/.claude"
  as_uid "$A" sh -c 'cd "$1/.claude"; end=$(( $(date +%s) + 3 ))
while [ "$(date +%s)" -lt "$end" ]; do
  ln -sfn "$2" l.tmp && mv -Tf l.tmp settings.local.json
  printf "{}" >f.tmp && mv -f f.tmp settings.local.json
done' sh "$proj" "$target" &
  local swapper=$! ok=0 i
  for i in $(seq 10); do
    attempt settings
    rc=0
    (cd "$proj" && timeout -s KILL 5 "$mm" hooks install --harness claude-code --scope project "$work/rootmem") >"$work/settings.out" 2>&1 || rc=$?
    [[ $rc == 137 ]] && violation settings "hooks install during the swaps still ran after 5 s"
    [[ $rc == 0 ]] && ok=$((ok + 1))
    [[ $(rootside) == "$before" ]] || { violation settings "root's file changed during the swaps (try $i)"; break; }
  done
  wait "$swapper" 2>/dev/null || true
  note settings "race:${ok}-of-10-installed"
  # what a successful install wrote in alice's project is root's: gone
  rm -rf "$proj"
}

# ---- importroot: import from a source reached through alice's link ------
# bob's private Claude Code memory (his 0700 folder); alice's ~/.claude a
# link to it, and a folder of hers linking to bob's home. Root imports
# from paths through her links into a repository in her folder and into
# a shared one: refused, or bob's canary never reaches the repository.
bcanary="zq$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')bobclaude"
bobhome=$work/bobhome
mkdir -p "$bobhome/.claude/projects/p/memory" "$work/pub"
printf -- '---\nname: private\ndescription: Bob private %s\ntype: user\n---\nBob keeps %s.\n' "$bcanary" "$bcanary" >"$bobhome/.claude/projects/p/memory/private.md"
printf -- '- [private](private.md) %s\n' "$bcanary" >"$bobhome/.claude/projects/p/memory/MEMORY.md"
printf 'Bob %s\n' "$bcanary" >"$bobhome/.claude/CLAUDE.md"
chown -R "$B:$B" "$bobhome"; chmod 700 "$bobhome"
chmod 1777 "$work/pub"
as_uid "$A" mkdir -p "$work/alice/home"
as_uid "$A" ln -s "$bobhome/.claude" "$work/alice/home/.claude"
as_uid "$A" ln -s "$bobhome" "$work/alice/bobs"
attack_import_root_link() {
  local ah=$work/alice/home src dest rc owner found v
  local srcs=("$ah/.claude" "$ah/.claude/" "$ah/.claude/projects/p/memory" "$ah/.claude/CLAUDE.md" "$work/alice/bobs/.claude" "$work/alice/bobs/.claude/projects/p/memory")
  [[ ${BREAK:-} == importroot ]] && srcs=("$bobhome/.claude")
  for src in "${srcs[@]}"; do
    for dest in "$work/alice/imported" "$work/pub/imported"; do
      attempt importroot
      rm -rf "$dest"
      rc=0
      timeout -s KILL 60 "$mm" import claude "$src" "$dest" >"$work/import.out" 2>&1 || rc=$?
      v="${src#"$work"/} -> ${dest#"$work"/}"
      [[ $rc == 137 ]] && violation importroot "import $v still ran after 60 s"
      found=""
      if [[ -e $dest ]]; then
        owner=$(stat -c %u "$dest")
        found=$(grep -rlF "$bcanary" "$dest" 2>/dev/null | head -1)
        found+=$(as_uid "$owner" git -C "$dest" log --all -p 2>/dev/null | grep -F "$bcanary" | head -1)
      fi
      [[ -n $found ]] && violation importroot "bob's note reached the repository through $v (exit $rc, owner uid ${owner:-?})"
      [[ $rc == 0 && -z $found ]] && note importroot "imported-without-bob:${v// /}"
      rm -rf "$dest"
    done
  done
}

# ---- boundary, after every round --------------------------------------
attack_boundary() {
  attempt boundary
  local f out
  # files of alice's uid outside her trees (ROOT/users/alice, her mount,
  # her folder beside ROOT); the world's temporary folders too
  # (ROOT/credentials/alice is hers by design: her worker reads it; the
  # marker in $tools is written by alice's own git when a plant is checked)
  f=$(find "$work" -xdev \( -path "$arepo" -o -path "$mnt" -o -path "$work/alice" -o -path "$work/pub" -o -path "$root/credentials/alice" -o -path "$marker" \) -prune -o -uid "$A" -print 2>/dev/null | head -5)
  f+=$(find /tmp /var/tmp -xdev -maxdepth 2 -path "$work" -prune -o -uid "$A" -print 2>/dev/null | head -5)
  [[ -n $f ]] && violation boundary "alice's uid wrote outside her trees: $(echo "$f" | tr '\n' ' ')"
  f=$(find "$arepo" "$work/alice" -xdev -uid 0 2>/dev/null | head -5)
  [[ -n $f ]] && violation boundary "root-owned files in alice's trees: $(echo "$f" | tr '\n' ' ')"
  # bob's canary in what alice is answered
  out=$(curl -s -m 10 -H "Authorization: Bearer $alice_tok" "$base/v1/recall?userId=alice&q=$canary+bob+secret" 2>/dev/null || true)
  out+=$(curl -s -m 10 -H "Authorization: Bearer $alice_tok" "$base/v1/recall?userId=bob&q=$canary" 2>/dev/null || true)
  out+=$(as_uid "$A" timeout -s KILL 20 grep -r "$canary" "$mnt/alice" 2>/dev/null || true)
  out+=$(as_uid "$A" timeout -s KILL 20 cat "$mnt/bob/user_memory/bob-secret.md" 2>/dev/null || true)
  out+=$(grep -r "$canary" "$arepo" 2>/dev/null || true)
  [[ $out == *"$canary"* ]] && violation boundary "bob's canary reached alice"
  true
}

echo "== attacking for ${secs}s in $work"
end=$(( $(date +%s) + secs ))
round=0
attacks=(${ATTACKS:-planted bigfile symlink sigterm workerkill mcp cursor bidi approve_race symlinked_settings import_root_link})
while (( $(date +%s) < end )); do
  round=$((round + 1))
  for a in "${attacks[@]}"; do
    (( $(date +%s) < end )) || break
    alive "$serve_pid" || { violation "$a" "serve died (round $round, before $a)"; break 2; }
    "attack_$a" || true
    attack_boundary || true
  done
  echo "   round $round done at +$(( $(date +%s) - end + secs ))s"
done

# serve itself, last long operation: SIGTERM with users served
attempt sigterm
serve_kids=($(pgrep -P "$serve_pid" || true))
if alive "$serve_pid"; then
  term_within "$serve_pid" "serve"
else
  violation sigterm "serve was dead before its SIGTERM"
fi
serve_pid=""
[[ -n $(awk -v m="$mnt/" 'index($2, m) == 1' /proc/mounts) ]] && violation sigterm "a mount stayed after serve ended"

echo "== attacker soak result (${secs}s, $round rounds)"
total=0
for k in "${kinds[@]}"; do
  line=$(printf '%-11s attempts %4d  violations %d' "$k" "${att[$k]}" "${vio[$k]}")
  (( ${notcov[$k]} > 0 )) && line+="  NOT COVERED $((${notcov[$k]}))x"
  [[ -n ${notes[$k]} ]] && line+="  (${notes[$k]# })"
  echo "$line"
  total=$((total + ${vio[$k]}))
done
[[ -s $work/term.times ]] && echo "SIGTERM to gone (s):  $(awk '{ t = $NF; $NF = ""; printf "%s%s", sep, $0 t; sep = "; " }' "$work/term.times")"
[[ -s $work/served.times ]] && echo "alice served again after her worker's kill (s, the script's polling included): $(tr '\n' ' ' <"$work/served.times")"
[[ -s $work/mcp.codes ]] && sort "$work/mcp.codes" | uniq -c | sed 's/^/MCP /' | head -6
[[ -s $work/worker.hwm ]] && echo "alice's worker peak RSS after MCP (KiB): $(tr '\n' ' ' <"$work/worker.hwm")"
[[ -s $work/uncovered ]] && { echo "not covered:"; sort "$work/uncovered" | uniq -c | sed 's/^/  /'; }
[[ -s $work/violations ]] && { echo "violations:"; sort "$work/violations" | uniq -c | sed 's/^/  /'; }
(( total == 0 ))
