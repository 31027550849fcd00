package remote

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/control"
)

const shared = `---
description: Enjoys specialty coffee
status: active
---
# Likes Coffee

## Fact
You enjoy specialty coffee.

## Access log
used, 31.08.26
`

var seed = map[string]string{
	"user.md":                     "---\ndescription: the user\n---\n# User\n",
	"user_memory/likes-coffee.md": shared,
	"user_memory/conflict.md":     strings.Replace(shared, "Enjoys specialty coffee", "Prefers tea", 1),
	".gitattributes":              ".mindmount/cursor.json merge=mindmount-cursor\n",
}

// TestSyncTwoDaemons: two machines with a running write path each, edits
// on both sides at once, then sync: no line lost, the same tree on both,
// git fsck clean, a two-parent merge, the conflict kept as a retired
// sibling, and the token nowhere.
func TestSyncTwoDaemons(t *testing.T) {
	srv := startGitServer(t)
	ctx := context.Background()
	a := newNode(t, seed)
	if err := SetURL(a.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	if res, err := a.s.Sync(ctx); err != nil || !res.Pushed {
		t.Fatalf("first push: %+v %v", res, err)
	}
	// B starts empty and takes the remote's history.
	b := newNode(t, nil)
	if err := SetURL(b.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if b.read("user_memory/likes-coffee.md") != shared {
		t.Fatalf("B did not get the memory: %q", b.read("user_memory/likes-coffee.md"))
	}

	// Concurrent edits on both machines.
	a.write("user_memory/from-a.md", strings.Replace(shared, "specialty coffee", "the sea", -1))
	a.write("user_memory/likes-coffee.md", strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\n", 1))
	a.write("user_memory/conflict.md", strings.Replace(seed["user_memory/conflict.md"], "You enjoy specialty coffee.", "You drink green tea.", 1))
	b.write("user_memory/from-b.md", strings.Replace(shared, "specialty coffee", "mountains", -1))
	b.write("user_memory/likes-coffee.md", strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 01.09.26\n", 1))
	b.write("user_memory/conflict.md", strings.Replace(seed["user_memory/conflict.md"], "You enjoy specialty coffee.", "You drink black tea.", 1))
	a.flush()
	time.Sleep(1100 * time.Millisecond) // B's commit is newer by the clock (commit times have 1 s resolution)
	b.flush()

	for _, n := range []*node{a, b, a} {
		if _, err := n.s.Sync(ctx); err != nil {
			t.Fatalf("sync: %v\n%s", err, n.logs.String())
		}
	}

	if ta, tb := a.git("rev-parse", "HEAD^{tree}"), b.git("rev-parse", "HEAD^{tree}"); ta != tb {
		t.Fatalf("trees differ: %s vs %s\nA: %s\nB: %s", ta, tb, a.git("status", "--short"), b.git("status", "--short"))
	}
	if ha, hb := a.git("rev-parse", "HEAD"), b.git("rev-parse", "HEAD"); ha != hb {
		t.Fatalf("HEADs differ: %s vs %s", ha, hb)
	}
	for _, dir := range []string{a.dir, b.dir, srv.bare} {
		mustRun(t, dir, "git", "fsck", "--strict", "--no-progress")
	}
	for _, n := range []*node{a, b} {
		if st := n.git("status", "--porcelain", "--untracked-files=no"); st != "" {
			t.Errorf("work tree differs from HEAD:\n%s", st)
		}
		coffee := n.read("user_memory/likes-coffee.md")
		for _, l := range []string{"used, 31.08.26", "used, 01.09.26", "used, 02.09.26"} {
			if !strings.Contains(coffee, l) {
				t.Errorf("lost %q:\n%s", l, coffee)
			}
		}
		if !strings.Contains(n.read("user_memory/from-a.md"), "the sea") || !strings.Contains(n.read("user_memory/from-b.md"), "mountains") {
			t.Error("a new memory was lost")
		}
		kept, sib := n.read("user_memory/conflict.md"), n.read("user_memory/conflict-2.md")
		if !strings.Contains(kept, "black tea") || !strings.Contains(sib, "green tea") ||
			!strings.Contains(sib, "status: superseded") || !strings.Contains(sib, "superseded_by: user_memory/conflict") {
			t.Errorf("conflict not resolved as newer kept + retired sibling:\nkept:\n%s\nsibling:\n%s", kept, sib)
		}
		if strings.Contains(kept+sib+coffee, "<<<<<<<") {
			t.Error("conflict markers")
		}
		// The graph heard of the merge: the retired sibling is indexed as retired.
		if m := n.g.Get("user_memory/conflict-2.md"); m == nil || m.Front.Status != memgraph.StatusSuperseded {
			t.Errorf("graph does not know the sibling: %+v", m)
		}
	}
	graph := a.git("log", "--graph", "--oneline", "--all")
	merges := strings.Fields(a.git("rev-list", "--merges", "HEAD"))
	if len(merges) != 1 || len(strings.Fields(a.git("rev-list", "--parents", "-n1", merges[0]))) != 3 {
		t.Fatalf("want one two-parent merge:\n%s", graph)
	}
	t.Logf("history:\n%s", graph)
	st := ReadState(a.r)
	if st.Ahead != 0 || st.Behind != 0 || st.LastPush.IsZero() || st.Failure != "" || !st.OldestUnpushed.IsZero() {
		t.Errorf("state after sync: %+v", st)
	}
	assertNoToken(t, a.dir, a.logs.String(), st.Text())
	assertNoToken(t, b.dir, b.logs.String())
}

// TestSyncDeadRemote: with the server stopped mid-run, writes are
// committed at once, the failure shows in the status, and the backlog is
// pushed once the server is back.
func TestSyncDeadRemote(t *testing.T) {
	srv := startGitServer(t)
	a := newNode(t, seed)
	if err := SetURL(a.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		a.s.Serve(ctx, Timing{PushDelay: 10 * time.Millisecond, FetchEvery: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	}()
	defer func() { cancel(); <-served }()
	a.ls.Add(tracker.Listener{Changed: func([]string) { a.s.Kick() }})
	waitFor(t, "first push", func() bool { return ReadState(a.r).LastPush.After(time.Time{}) })

	srv.stop()
	for i := 0; i < 5; i++ {
		a.write("user_memory/offline.md", strings.Replace(shared, "specialty coffee", "offline "+string(rune('a'+i)), -1))
		a.flush() // returns once committed: the network is not on the write path
	}
	if !strings.Contains(a.git("show", "HEAD:user_memory/offline.md"), "offline e") {
		t.Fatal("write not committed while the remote was down")
	}
	waitFor(t, "failure in status", func() bool { return ReadState(a.r).Failure != "" })
	st := ReadState(a.r)
	if st.Ahead == 0 || !strings.Contains(st.Text(), "last failure") {
		t.Fatalf("status does not show the failure and the backlog: %+v\n%s", st, st.Text())
	}
	// The lag is the oldest unpushed commit's age: the first offline one.
	firstOffline := a.git("log", "-1", "--format=%ct", fmt.Sprintf("HEAD~%d", st.Ahead-1))
	if got := strconv.FormatInt(st.OldestUnpushed.Unix(), 10); got != firstOffline {
		t.Fatalf("oldest unpushed commit at %s, want %s (%d ahead)", got, firstOffline, st.Ahead)
	}
	status := string(a.tr.Status())
	srv.start()
	head := a.git("rev-parse", "HEAD")
	waitFor(t, "backlog pushed", func() bool {
		out, err := runOut(srv.bare, "git", "rev-parse", "main")
		return err == nil && out == head
	})
	waitFor(t, "failure cleared", func() bool { return ReadState(a.r).Failure == "" })
	assertNoToken(t, a.dir, a.logs.String(), status, st.Text())
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func runOut(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// TestSyncBadTokenIsScrubbed: a refused token fails the sync with an error
// and a status that do not hold it.
func TestSyncBadTokenIsScrubbed(t *testing.T) {
	srv := startGitServer(t)
	a := newNode(t, seed)
	if err := SetURL(a.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	bad := New(a.r, Options{Credentials: Credentials{Token: testToken + "-wrong"}, Logger: a.s.log})
	_, err := bad.Sync(context.Background())
	if err == nil {
		t.Fatal("sync with a bad token succeeded")
	}
	st := ReadState(a.r)
	if st.Failure == "" {
		t.Fatal("failure not recorded")
	}
	assertNoToken(t, a.dir, err.Error(), st.Text(), a.logs.String())
	if strings.Contains(err.Error()+st.Text(), "-wrong") {
		t.Fatalf("token text leaked: %v", err)
	}
}

func TestSetURLRefusesCredentials(t *testing.T) {
	a := newNode(t, seed)
	for _, u := range []string{"https://user:" + testToken + "@example.com/x.git", "https://" + testToken + "@example.com/x.git"} {
		err := SetURL(a.dir, u)
		if err == nil {
			t.Fatalf("%s accepted", u)
		}
		assertNoToken(t, a.dir, err.Error())
	}
	for _, u := range []string{"https://example.com/x.git", "ssh://git@example.com/x.git", "git@example.com:x.git", "file:///tmp/x.git", "/tmp/x.git"} {
		if err := SetURL(a.dir, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(a.dir, ".git", "config"))
	if !strings.Contains(string(cfg), "/tmp/x.git") {
		t.Fatalf("config:\n%s", cfg)
	}
}

func TestCredentialsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mindmount", "credentials")
	c := Credentials{Path: p}
	if err := c.Save("https://github.com/", testToken); err != nil {
		t.Fatal(err)
	}
	if err := c.Save("https://github.com/ada/", "other"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if tok, _ := c.Lookup("https://github.com/ada/mindmount-memory.git"); tok != "other" {
		t.Fatalf("longest prefix: %q", tok)
	}
	if tok, _ := c.Lookup("https://github.com/bob/x.git"); tok != testToken {
		t.Fatalf("prefix: %q", tok)
	}
	os.Chmod(p, 0o644)
	if _, err := c.Lookup("https://github.com/bob/x.git"); err == nil {
		t.Fatal("world-readable credentials used")
	}
}

// TestSyncNeverOverwritesLocalEdit: a local edit the tracker holds back
// (invalid) is never overwritten by a merge; the merge waits, says why,
// and goes through once the file is fixed.
func TestSyncNeverOverwritesLocalEdit(t *testing.T) {
	ctx := context.Background()
	srv, a := pushedSeed(t)
	b := newNode(t, nil)
	SetURL(b.dir, srv.URL())
	if _, err := b.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	b.write("user_memory/likes-coffee.md", strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 01.09.26\n", 1))
	b.flush()
	if _, err := b.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	local := strings.Replace(shared, "status: active", "status: sleepy", 1) // invalid: held back
	a.write("user_memory/likes-coffee.md", local)
	a.flush()
	_, err := a.s.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "uncommitted change") {
		t.Fatalf("merge over a held-back edit: %v", err)
	}
	if got := a.read("user_memory/likes-coffee.md"); got != local {
		t.Fatalf("local edit overwritten:\n%s", got)
	}
	a.write("user_memory/likes-coffee.md", strings.Replace(shared, "used, 31.08.26\n", "used, 31.08.26\nused, 03.09.26\n", 1))
	a.flush()
	if _, err := a.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got := a.read("user_memory/likes-coffee.md")
	if !strings.Contains(got, "used, 01.09.26") || !strings.Contains(got, "used, 03.09.26") {
		t.Fatalf("after the fix:\n%s", got)
	}
}

func FuzzCredentialsLookup(f *testing.F) {
	f.Add("https://github.com/ tok\n# c\nhttps://github.com/ada/ t2\n", "https://github.com/ada/x.git")
	f.Add("broken", "")
	f.Fuzz(func(t *testing.T, file, url string) {
		p := filepath.Join(t.TempDir(), "credentials")
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := Credentials{Path: p}.Lookup(url)
		if err == nil && strings.ContainsAny(tok, " \n") {
			t.Fatalf("token %q holds a separator", tok)
		}
	})
}

// TestSyncErrorQuotingTheTokenIsScrubbed: a git host whose error message
// quotes the token it was sent (go-git puts the message into its error)
// fails the sync, a push and a sync asked for through the daemon's socket
// ("mindmount sync"); the token is in none of the errors, the log, the sync
// state file, the status report or the socket's answer, while the
// message itself still says what went wrong.
func TestSyncErrorQuotingTheTokenIsScrubbed(t *testing.T) {
	srv := startGitServer(t)
	a := newNode(t, seed)
	if err := SetURL(a.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	a.ls.Add(tracker.Listener{Status: func() string { return StatusText(a.r) }})
	srv.leak.Store(true)
	ctx := context.Background()

	_, syncErr := a.s.Sync(ctx)
	if syncErr == nil {
		t.Fatal("sync against a refusing host succeeded")
	}
	a.write("user_memory/pushed.md", strings.Replace(shared, "specialty coffee", "a push", -1))
	a.flush()
	_, pushErr := a.s.Push(ctx)
	if pushErr == nil {
		t.Fatal("push against a refusing host succeeded")
	}

	// The same through a serving daemon's socket, as "mindmount sync" asks.
	ctl, err := control.Listen(a.r.GitDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctl.Handle(control.Sync, a.s.Answer)
	sctx, cancel := context.WithCancel(ctx)
	var served sync.WaitGroup
	served.Go(func() { ctl.Serve(sctx) })
	served.Go(func() {
		a.s.Serve(sctx, Timing{PushDelay: time.Hour, FetchEvery: time.Hour, RetryMin: time.Hour, RetryMax: time.Hour})
	})
	defer func() { cancel(); served.Wait() }()
	var st State
	var askErr error
	waitFor(t, "the daemon's answer", func() bool {
		st, askErr = AskDaemon(ctx, a.r.GitDir())
		return !errors.Is(askErr, ErrNoDaemon)
	})
	if askErr == nil {
		t.Fatal("sync through the daemon against a refusing host succeeded")
	}
	answer, _ := json.Marshal(st)

	state, err := os.ReadFile(filepath.Join(a.r.GitDir(), "mindmount", "sync.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"sync error": syncErr.Error(), "push error": pushErr.Error(), "daemon error": askErr.Error(), "sync state": string(state)} {
		if !strings.Contains(text, "may not access memory.git") {
			t.Errorf("%s does not say what the host said: %s", what, text)
		}
	}
	if !strings.Contains(a.logs.String(), "sync failed") {
		t.Errorf("the failure was not logged:\n%s", a.logs.String())
	}
	assertNoToken(t, a.dir, syncErr.Error(), pushErr.Error(), askErr.Error(), string(answer),
		a.logs.String(), string(state), ReadState(a.r).Text(), string(a.tr.Status()))
}

// TestSyncRefusesAHugeFile is issue 22's fifth defect at its root: a
// remote holding a file larger than MaxBlob (a hostile remote, a 600 MB
// blob) is refused while the pack streams in, from the object's header:
// nothing is fetched or merged, no pack is kept, the work tree and HEAD
// stay as they were, and the status says why.
func TestSyncRefusesAHugeFile(t *testing.T) {
	srv := startGitServer(t)
	ctx := context.Background()
	a := newNode(t, seed)
	SetURL(a.dir, srv.URL())
	a.write("notes/huge.txt", strings.Repeat("a line of a big file\n", 400)) // 8 KiB
	a.flush()
	if _, err := a.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	old := MaxBlob
	MaxBlob = 4 << 10
	defer func() { MaxBlob = old }()
	b := newNode(t, nil)
	SetURL(b.dir, srv.URL())
	before := b.git("for-each-ref")
	packs := packFiles(t, b.dir)
	_, err := b.s.Sync(ctx)
	if !errors.Is(err, ErrBlobTooLarge) || !strings.Contains(err.Error(), "8 KiB") {
		t.Fatalf("sync with a file over the limit: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(b.dir, "notes/huge.txt")); serr == nil {
		t.Fatal("the huge file reached the work tree")
	}
	if after := b.git("for-each-ref"); after != before {
		t.Fatalf("a ref moved: %q -> %q", before, after)
	}
	if after := packFiles(t, b.dir); !slices.Equal(after, packs) {
		t.Fatalf("the refused pack stayed: %v -> %v", packs, after)
	}
	if st := StatusText(b.r); !strings.Contains(st, "more than the 4 KiB a sync takes") {
		t.Fatalf("the status does not say why:\n%s", st)
	}
}

// pushedSeed starts a git server and a node whose seed is pushed to it.
func pushedSeed(t *testing.T) (*gitServer, *node) {
	t.Helper()
	srv := startGitServer(t)
	a := newNode(t, seed)
	SetURL(a.dir, srv.URL())
	if _, err := a.s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv, a
}

func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(dir, ".git", "objects", "pack"))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestMergeRefusesALocalHugeFile: the second layer. A file over MaxBlob
// already in the repository's objects (fetched by hand, or under a larger
// limit) is refused by the merge from the objects' headers, before any
// content is read, naming the file.
func TestMergeRefusesALocalHugeFile(t *testing.T) {
	a := newNode(t, seed)
	ours := a.git("rev-parse", "HEAD")
	a.write("notes/huge.txt", strings.Repeat("a line of a big file\n", 400)) // 8 KiB
	a.flush()
	theirs := a.git("rev-parse", "HEAD")
	old := MaxBlob
	MaxBlob = 4 << 10
	defer func() { MaxBlob = old }()
	repo, err := open(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = planMerge(repo, plumbing.NewHash(ours), plumbing.NewHash(theirs))
	if !errors.Is(err, ErrBlobTooLarge) || !strings.Contains(err.Error(), "notes/huge.txt") {
		t.Fatalf("merge of a local file over the limit: %v", err)
	}
}

// TestSyncHugeBlobMemoryBounded: a 32 MiB file on the remote (it travels
// compressed to a few hundred KiB) is refused without the worker's memory
// growing by anything near it: go-git alone reads every fetched object
// whole into memory to index the pack.
func TestSyncHugeBlobMemoryBounded(t *testing.T) {
	ctx := context.Background()
	srv, _ := pushedSeed(t)
	// The hostile remote: a commit with the big file, pushed by git.
	clone := filepath.Join(t.TempDir(), "clone")
	mustRun(t, filepath.Dir(clone), "git", "clone", "-q", srv.bare, clone)
	big, err := os.Create(filepath.Join(clone, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("0123456789abcdef", 4)[:63] + "\n")
	for i := 0; i < (32<<20)/len(line); i++ {
		big.Write(line)
	}
	big.Close()
	mustRun(t, clone, "git", "add", "big.bin")
	mustRun(t, clone, "git", "commit", "-qm", "a big file")
	mustRun(t, clone, "git", "push", "-q", "origin", "HEAD:main")

	old := MaxBlob
	MaxBlob = 1 << 20
	defer func() { MaxBlob = old }()
	b := newNode(t, nil)
	SetURL(b.dir, srv.URL())
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err = b.s.Sync(ctx)
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, ErrBlobTooLarge) || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("sync with a 32 MiB file: %v", err)
	}
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 8<<20 {
		t.Fatalf("the sync allocated %d MiB for a file it refused", grew>>20)
	}
}

// TestCheckPack: the pack check on packs made by hand, a delta claiming a
// huge object among them (its data is never applied).
func TestCheckPack(t *testing.T) {
	old := MaxBlob
	MaxBlob = 1 << 20
	defer func() { MaxBlob = old }()
	small := []byte("hello")
	base := plumbing.ComputeHash(plumbing.BlobObject, small)
	for _, tc := range []struct {
		name string
		objs []packObj
		ok   bool
	}{
		{"small blob", []packObj{{typ: 3, data: small}}, true},
		{"blob at the limit", []packObj{{typ: 3, data: make([]byte, 1<<20)}}, true},
		{"blob over the limit", []packObj{{typ: 3, data: make([]byte, 1<<20+1)}}, false},
		{"small delta", []packObj{{typ: 3, data: small}, {typ: 7, ref: base, data: delta(5, 10)}}, true},
		{"delta making 1 GiB", []packObj{{typ: 3, data: small}, {typ: 7, ref: base, data: delta(5, 1<<30)}}, false},
		{"delta claiming 2^63", []packObj{{typ: 3, data: small}, {typ: 7, ref: base, data: delta(5, 1<<63)}}, false},
	} {
		pr, pw := io.Pipe()
		go func() { pw.Write(buildPack(tc.objs)); pw.Close() }()
		err := checkPack(pr)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBlobTooLarge)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

type packObj struct {
	typ  byte
	ref  plumbing.Hash // REF_DELTA's base
	data []byte
}

// delta is a delta's header: the base's size and the target's.
func delta(src, target uint64) []byte {
	var out []byte
	for _, n := range []uint64{src, target} {
		for {
			c := byte(n & 0x7f)
			n >>= 7
			if n != 0 {
				out = append(out, c|0x80)
				continue
			}
			out = append(out, c)
			break
		}
	}
	return out
}

// buildPack writes a version 2 pack of objs.
func buildPack(objs []packObj) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		n := uint64(len(o.data))
		c := o.typ<<4 | byte(n&0x0f)
		n >>= 4
		for n != 0 {
			b.WriteByte(c | 0x80)
			c = byte(n & 0x7f)
			n >>= 7
		}
		b.WriteByte(c)
		if o.typ == 7 {
			b.Write(o.ref[:])
		}
		z := zlib.NewWriter(&b)
		z.Write(o.data)
		z.Close()
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// TestSyncRemoteWithoutTheBranch: a remote that has other branches but not
// ours is not a failure (go-git's NoMatchingRefSpecError, matched by
// type): the sync pushes our branch there.
func TestSyncRemoteWithoutTheBranch(t *testing.T) {
	srv := startGitServer(t)
	ctx := context.Background()
	a := newNode(t, seed)
	if err := SetURL(a.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	if res, err := a.s.Sync(ctx); err != nil || !res.Pushed {
		t.Fatalf("first push: %+v %v", res, err)
	}
	branch := a.git("symbolic-ref", "--short", "HEAD")
	mustRun(t, srv.bare, "git", "branch", "-m", branch, "elsewhere")

	b := newNode(t, seed)
	if err := SetURL(b.dir, srv.URL()); err != nil {
		t.Fatal(err)
	}
	res, err := b.s.Sync(ctx)
	if err != nil || !res.Pushed {
		t.Fatalf("sync to a remote without %s: %+v %v", branch, res, err)
	}
	if got := strings.TrimSpace(mustRun(t, srv.bare, "git", "rev-parse", branch)); got != b.git("rev-parse", "HEAD") {
		t.Fatalf("remote %s = %s, want B's HEAD", branch, got)
	}
}
