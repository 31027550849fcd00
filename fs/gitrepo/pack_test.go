package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCommitDuringPack is issue 16.3: packing runs beside commits, never
// under the commit lock, and neither loses the other's work: every commit
// made while git gc runs is in the history with its content, the loose
// objects end up packed, and git fsck and git status are clean.
func TestCommitDuringPack(t *testing.T) {
	r, dir := tempRepo(t)
	var seed []Change
	for i := 0; i < 300; i++ {
		c := put(fmt.Sprintf("user_memory/m-%03d.md", i), "v0 "+strconv.Itoa(i)+"\n")
		writeFile(t, dir, c.Path, string(c.Data))
		seed = append(seed, c)
	}
	if _, err := r.Commit(seed, "seed", who, when); err != nil {
		t.Fatal(err)
	}
	commit := func(i int) {
		c := put(fmt.Sprintf("user_memory/m-%03d.md", i%300), fmt.Sprintf("v%d\n", i))
		writeFile(t, dir, c.Path, string(c.Data))
		if _, err := r.Commit([]Change{c}, "c"+strconv.Itoa(i), who, when); err != nil {
			t.Errorf("commit %d: %v", i, err)
		}
	}
	for i := 0; i < 40; i++ {
		commit(i)
	}
	before := r.Loose()
	packed := make(chan error, 1)
	go func() {
		var err error
		for k := 0; k < 3 && err == nil; k++ {
			err = r.Pack(context.Background())
		}
		packed <- err
	}()
	n, during := 40, 0
	for ; n < 300; n++ {
		commit(n)
		select {
		case err := <-packed:
			if err != nil {
				t.Fatal(err)
			}
			packed = nil
		default:
			if packed != nil {
				during++ // made after packing started, before it ended
			}
		}
		if packed == nil && n >= 80 {
			break
		}
	}
	if packed != nil {
		if err := <-packed; err != nil {
			t.Fatal(err)
		}
	}
	// Not vacuous: commits really ran while git repack did.
	if during == 0 {
		t.Fatalf("no commit overlapped the repacks")
	}
	t.Logf("%d commits made while packing ran", during)
	if got := gitCmd(t, dir, "rev-list", "--count", "HEAD"); got != strconv.Itoa(n+1+1) && got != strconv.Itoa(n+1) {
		t.Fatalf("%s commits in the history, want %d", got, n+1)
	}
	// The last version of every file is in HEAD, read back through our
	// own reader (objects moved into packs under it).
	for i := n - 300; i <= n; i++ {
		if i < 0 {
			continue
		}
		rel := fmt.Sprintf("user_memory/m-%03d.md", i%300)
		b, ok, err := r.ReadHead(rel)
		want, _ := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !ok || string(b) != string(want) {
			t.Fatalf("%s in HEAD: %q %v %v, want %q", rel, b, ok, err, want)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) == 0 {
		t.Fatalf("no pack written (loose before: %d, after: %d)", before, r.Loose())
	}
	checkClean(t, dir)
	writeFile(t, dir, "after.md", "x")
	if _, err := r.Commit([]Change{put("after.md", "x")}, "after", who, when); err != nil {
		t.Fatal(err)
	}
	checkClean(t, dir)
}

func TestDeepDue(t *testing.T) {
	for _, tc := range []struct {
		total, deep int64
		want        bool
	}{
		{total: 0, deep: 0, want: false},
		{total: minDeepPack - 1, deep: 0, want: false}, // young: not worth it
		{total: minDeepPack, deep: 0, want: true},      // never deep-packed
		{total: 3 << 20, deep: 2 << 20, want: false},
		{total: 4 << 20, deep: 2 << 20, want: true}, // doubled
		{total: 5 << 20, deep: 2 << 20, want: true},
		{total: minDeepPack - 1, deep: 100, want: false},
	} {
		if got := deepDue(tc.total, tc.deep); got != tc.want {
			t.Errorf("deepDue(%d, %d) = %v, want %v", tc.total, tc.deep, got, tc.want)
		}
	}
}

// TestDeepRepack: once the packs have doubled since the last deep repack,
// Pack recomputes every delta into one pack and records its size; an
// object no ref reaches any more survives it (loose, for git's own prune
// to judge), since a commit in flight may be about to use it again.
func TestDeepRepack(t *testing.T) {
	r, dir := tempRepo(t)
	// Incompressible content, so the packs pass minDeepPack.
	noise := func(seed, n int) string {
		var b strings.Builder
		x := uint32(seed*2654435761 + 1)
		for b.Len() < n {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			fmt.Fprintf(&b, "%08x", x)
		}
		return b.String() + "\n"
	}
	for i := 0; i < 3; i++ {
		c := put(fmt.Sprintf("user_memory/big-%d.md", i), noise(i, 800<<10))
		writeFile(t, dir, c.Path, string(c.Data))
		if _, err := r.Commit([]Change{c}, "big "+strconv.Itoa(i), who, when); err != nil {
			t.Fatal(err)
		}
	}
	// A commit that will be dropped: its blob ends up packed, then
	// unreachable.
	gone := put("user_memory/gone.md", "dropped later\n")
	writeFile(t, dir, gone.Path, string(gone.Data))
	if _, err := r.Commit([]Change{gone}, "to drop", who, when); err != nil {
		t.Fatal(err)
	}
	goneBlob := gitCmd(t, dir, "rev-parse", "HEAD:user_memory/gone.md")
	if err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := r.deepSize()
	if first <= 0 || first != r.packedSize() {
		t.Fatalf("after the first pack: deep record %d, packed %d; want a deep repack recorded", first, r.packedSize())
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 1 {
		t.Fatalf("%d packs after a deep repack, want 1", len(packs))
	}

	// A small change does not double the packs: no deep repack.
	small := put("user_memory/small.md", "small\n")
	writeFile(t, dir, small.Path, string(small.Data))
	if _, err := r.Commit([]Change{small}, "small", who, when); err != nil {
		t.Fatal(err)
	}
	if err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.deepSize(); got != first {
		t.Fatalf("deep record moved %d -> %d without the packs doubling", first, got)
	}

	// Drop the commit (no ref, no reflog reaches its blob), and make the
	// next pack a deep one.
	gitCmd(t, dir, "reset", "-q", "--hard", "HEAD~2")
	gitCmd(t, dir, "reflog", "expire", "--expire=now", "--all")
	r.setDeepSize(1)
	if err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.deepSize(); got == 1 {
		t.Fatal("no deep repack although the record says the packs grew")
	}
	gitCmd(t, dir, "cat-file", "-e", goneBlob) // fails if the repack deleted it
	gitCmd(t, dir, "fsck", "--strict", "--no-progress")
}

// TestPackSlots: a repack waits for a free slot, and gives up waiting when
// its context ends (a daemon shutting down).
func TestPackSlots(t *testing.T) {
	s := newSlots(1)
	release, err := s.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		rel, err := s.acquire(context.Background())
		if err == nil {
			rel()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second acquire returned (%v) while the only slot was taken", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	release, _ = s.acquire(context.Background())
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.acquire(ctx); err != context.Canceled {
		t.Fatalf("acquire with a cancelled context: %v, want context.Canceled", err)
	}

	// Pack itself takes a slot of the process's: with all of them taken, it
	// waits, and gives up with its context without running git.
	r, dir := tempRepo(t)
	for range cap(packSlots) {
		rel, _ := packSlots.acquire(context.Background())
		defer rel()
	}
	writeFile(t, dir, "user_memory/a.md", "a\n")
	if _, err := r.Commit([]Change{put("user_memory/a.md", "a\n")}, "a", who, when); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := r.Pack(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Pack while every slot is taken: %v, want context.DeadlineExceeded", err)
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 0 {
		t.Fatalf("git ran although no slot was free: %v", packs)
	}
}
