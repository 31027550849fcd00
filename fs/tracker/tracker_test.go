package tracker_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// logWriter sends the tracker's logs to the test log.
type logWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// open builds a tracker over dir without starting it.
func open(t testing.TB, dir string, cfg tracker.Config) (*tracker.Tracker, *memgraph.Graph, *gitrepo.Repo) {
	t.Helper()
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	lw := &logWriter{t: t}
	t.Cleanup(func() { lw.mu.Lock(); lw.done = true; lw.mu.Unlock() })
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.Debounce == 0 {
		cfg.Debounce = 50 * time.Millisecond
	}
	return tracker.New(g, r, cfg), g, r
}

// watch starts watch mode on dir: recovery, then Run until the test ends.
func watch(t testing.TB, dir string, cfg tracker.Config) (*tracker.Tracker, *memgraph.Graph) {
	t.Helper()
	cfg.WriteSynthesized = true
	tr, g, _ := open(t, dir, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := tr.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := tr.Flush(context.Background()); err != nil {
			t.Errorf("Flush: %v", err)
		}
	})
	select {
	case <-tr.Ready():
	case err := <-done:
		t.Fatalf("Run stopped before it was ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("watcher not ready after 10s")
	}
	return tr, g
}

func settle(t testing.TB, tr *tracker.Tracker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tr.Settle(ctx); err != nil {
		t.Fatalf("settle: %v", err)
	}
}

func TestWatchConformance(t *testing.T) {
	for _, name := range slices.Sorted(mapsKeys(conformance.Suite)) {
		fn := conformance.Suite[name]
		t.Run(name, func(t *testing.T) {
			dir := conformance.NewRepo(t)
			// Long enough that a burst written in a loop stays one burst
			// on a loaded machine, short enough to keep the suite quick.
			tr, _ := watch(t, dir, tracker.Config{Debounce: 250 * time.Millisecond})
			fn(t, conformance.Env{Dir: dir, Repo: dir, Settle: func(t *testing.T) { settle(t, tr) }})
		})
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sh runs a shell command in dir and returns its trimmed output.
func sh(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

func commitCount(t testing.TB, dir string) int {
	t.Helper()
	n, err := strconv.Atoi(sh(t, dir, "git log --oneline | wc -l"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBurstIsOneCommit(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 300 * time.Millisecond})
	before := commitCount(t, dir)
	for i := range 5 {
		n := strconv.Itoa(i)
		conformance.WriteFile(t, dir, "user_memory/quick-"+n+".md", conformance.Memory("Quick "+n, "Quick "+n, "Quick."))
	}
	settle(t, tr)
	if got := commitCount(t, dir); got != before+1 {
		t.Fatalf("git log --oneline | wc -l = %d, want %d", got, before+1)
	}
	conformance.CheckRepo(t, dir)
}

func TestMaxWaitBoundsABurst(t *testing.T) {
	dir := conformance.NewRepo(t)
	// Only MaxWait can make this commit: the debounce never runs out
	// while the test waits.
	tr, _ := watch(t, dir, tracker.Config{Debounce: time.Hour, MaxWait: 100 * time.Millisecond})
	before := commitCount(t, dir)
	conformance.WriteFile(t, dir, "user_memory/patient.md", conformance.Memory("Patient", "Patient", "Yes."))
	settle(t, tr)
	if got := commitCount(t, dir); got != before+1 {
		t.Fatalf("commits = %d, want %d", got, before+1)
	}
}

func TestIdentitiesAndFlush(t *testing.T) {
	dir := conformance.NewRepo(t)
	var got [][]string
	var mu sync.Mutex
	tr, g, _ := open(t, dir, tracker.Config{Identities: map[string]string{"vim": "editor", "sed": "agent", "dreamer": "consolidator"},
		Listener: tracker.Listener{Changed: func(paths []string) { mu.Lock(); got = append(got, paths); mu.Unlock() }}})

	tests := []struct {
		writer, author string
	}{
		{"vim", "editor"},
		{"sed", "agent"},
		{"python3", "agent"},
		{"dreamer", "consolidator"},
	}
	for i, tt := range tests {
		rel := "user_memory/by-" + tt.writer + ".md"
		conformance.WriteFile(t, dir, rel, conformance.Memory("Written by "+tt.writer, "By", "Fact "+strconv.Itoa(i)+"."))
		tr.Touch(rel, tt.writer)
		if err := tr.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if an := conformance.Git(t, dir, "log", "-1", "--format=%an"); an != tt.author {
			t.Errorf("writer %s: author %q, want %q", tt.writer, an, tt.author)
		}
		if s := conformance.Subject(t, dir); s != tt.author+": add "+rel {
			t.Errorf("subject %q", s)
		}
		if g.Get(rel) == nil {
			t.Errorf("graph lacks %s after flush", rel)
		}
	}
	mu.Lock()
	if len(got) != len(tests) {
		t.Errorf("subscriber called %d times, want %d: %v", len(got), len(tests), got)
	}
	mu.Unlock()

	// A burst from two writers names both; the one with more changes authors.
	for _, w := range []string{"a", "b"} {
		rel := "user_memory/two-" + w + ".md"
		conformance.WriteFile(t, dir, rel, conformance.Memory("Two "+w, "Two", "Two."))
		tr.Touch(rel, "sed")
	}
	conformance.WriteFile(t, dir, "user_memory/two-c.md", conformance.Memory("Two c", "Two", "Two."))
	tr.Touch("user_memory/two-c.md", "vim")
	tr.Touch("user_memory/two-c.md", "") // fsnotify saw it too: the claim stays
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := conformance.Subject(t, dir); s != "agent, editor: 3 changes" {
		t.Errorf("subject %q", s)
	}
	if an := conformance.Git(t, dir, "log", "-1", "--format=%an <%ae>"); an != "agent <agent@mindmount.local>" {
		t.Errorf("author %q", an)
	}
	conformance.CheckRepo(t, dir)
}

func TestExplicitRenameWithEdit(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g, _ := open(t, dir, tracker.Config{})
	old, new := filepath.Join(dir, "user_memory", "likes-tea.md"), filepath.Join(dir, "user_memory", "drinks-tea.md")
	if err := os.Rename(old, new); err != nil {
		t.Fatal(err)
	}
	conformance.WriteFile(t, dir, "user_memory/drinks-tea.md", strings.Replace(conformance.LikesTea, "green", "white", -1))
	tr.Renamed("user_memory/likes-tea.md", "user_memory/drinks-tea.md", "mv")
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := conformance.Subject(t, dir); s != "agent: rename user_memory/likes-tea.md -> user_memory/drinks-tea.md" {
		t.Errorf("subject %q", s)
	}
	if g.Get("user_memory/likes-tea.md") != nil || g.Get("user_memory/drinks-tea.md") == nil {
		t.Errorf("graph not renamed")
	}
	conformance.CheckRepo(t, dir)
}

func TestInvalidRetriedAndReported(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	rel := "user_memory/broken.md"
	conformance.WriteFile(t, dir, rel, "---\ndescription: ok\nmood: grumpy\n---\n# Broken\n")
	settle(t, tr)
	st := string(tr.Status())
	if !strings.Contains(st, rel+":3: ") {
		t.Errorf("Status lacks %s:3:\n%s", rel, st)
	}
	if ps := tr.Invalid(); len(ps) == 0 || ps[0].Path != rel {
		t.Errorf("Invalid() = %v", ps)
	}
	// An unrelated change retries it; still invalid, still out of git.
	conformance.WriteFile(t, dir, "notes/other.md", "# Other\n")
	settle(t, tr)
	if _, ok := conformance.HeadFile(t, dir, rel); ok {
		t.Fatal("invalid file committed")
	}
	// Fixed by renaming a corrected copy over it (editor-style save).
	conformance.WriteFile(t, dir, "user_memory/broken.md.tmp", "---\ndescription: ok\n---\n# Broken\n")
	if err := os.Rename(filepath.Join(dir, "user_memory/broken.md.tmp"), filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
	settle(t, tr)
	if _, ok := conformance.HeadFile(t, dir, rel); !ok {
		t.Fatal("fixed file not committed")
	}
	if len(tr.Invalid()) != 0 {
		t.Errorf("still reported: %v", tr.Invalid())
	}
	conformance.CheckRepo(t, dir)
}

func TestVimAndSedTemporaries(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	rel := "user_memory/likes-tea.md"
	sh(t, dir, "sed -i 's/green/jasmine/' "+rel)
	settle(t, tr)
	if got, _ := conformance.HeadFile(t, dir, rel); !strings.Contains(got, "jasmine") {
		t.Fatalf("sed -i change not committed:\n%s", got)
	}
	vim, err := exec.LookPath("vim")
	if err != nil {
		if vim, err = exec.LookPath("vim.tiny"); err != nil {
			t.Log("no vim: skipping the vim part")
		}
	}
	if vim != "" {
		// Ex mode with a swap file and the default backup dance, as a
		// person's vim would save.
		cmd := exec.Command(vim, "-u", "NONE", "-i", "NONE", "-N", "-es",
			"-c", "set swapfile backup writebackup", "-c", "%s/jasmine/oolong/", "-c", "wq", rel)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("vim: %v\n%s", err, out)
		}
		settle(t, tr)
		if got, _ := conformance.HeadFile(t, dir, rel); !strings.Contains(got, "oolong") {
			t.Fatalf("vim change not committed:\n%s", got)
		}
	}
	files := conformance.Git(t, dir, "ls-files")
	for _, bad := range []string{"sed", ".swp", "~", "4913"} {
		if strings.Contains(files, bad) {
			t.Errorf("temp file committed (%q):\n%s", bad, files)
		}
	}
	conformance.CheckRepo(t, dir, "user_memory/likes-tea.md~")
}

func TestRecoverOnStart(t *testing.T) {
	dir := conformance.NewRepo(t)
	conformance.WriteFile(t, dir, "user_memory/left-over.md", conformance.Memory("Left over", "Left", "Left."))
	conformance.WriteFile(t, dir, "user_memory/likes-tea.md", strings.Replace(conformance.LikesTea, "green", "mint", 1))
	conformance.WriteFile(t, dir, "user_memory/bad.md", "no frontmatter at all\n")
	conformance.WriteFile(t, dir, "user_memory/.left-over.md.swp", "swap")
	before := commitCount(t, dir)
	tr, g := watch(t, dir, tracker.Config{})
	if got := commitCount(t, dir); got != before+1 {
		t.Fatalf("commits = %d, want %d", got, before+1)
	}
	if s := conformance.Subject(t, dir); s != "mindmount: recover 2 uncommitted changes" {
		t.Errorf("subject %q", s)
	}
	if an := conformance.Git(t, dir, "log", "-1", "--format=%an"); an != "mindmount" {
		t.Errorf("author %q", an)
	}
	if !strings.Contains(string(tr.Status()), "user_memory/bad.md") {
		t.Errorf("invalid leftover not reported:\n%s", tr.Status())
	}
	if g.Get("user_memory/left-over.md") == nil {
		t.Errorf("graph lacks the recovered memory")
	}
	conformance.CheckRepo(t, dir, "user_memory/bad.md")
}

func TestRescanCatchesMissedChanges(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{Rescan: 20 * time.Millisecond, WriteSynthesized: true})
	// Written before Run and without Recover: no event will ever say so.
	conformance.WriteFile(t, dir, "user_memory/unseen.md", conformance.Memory("Unseen", "Unseen", "Unseen."))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := conformance.HeadFile(t, dir, "user_memory/unseen.md"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rescan did not commit the unseen file")
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a readiness wait
	}
	settle(t, tr)
	conformance.CheckRepo(t, dir)
}

func TestSynthesizedWrittenOnlyWhenChanged(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	idx := filepath.Join(dir, "user_memory.md")
	fi1, err := os.Stat(idx)
	if err != nil {
		t.Fatalf("index not written at start: %v", err)
	}
	// A transcript does not change the user index: the file stays as is.
	conformance.WriteFile(t, dir, "transcripts/t.txt", "User: hi\n")
	settle(t, tr)
	fi2, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi1, fi2) || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Errorf("user_memory.md rewritten although unchanged")
	}
	for _, rel := range []string{"user_memory.md", "character_memory.md", "CONTEXT.md", ".mindmount/status"} {
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	conformance.CheckRepo(t, dir)
}

func TestSubscribersHearHeadMoves(t *testing.T) {
	dir := conformance.NewRepo(t)
	heard := make(chan []string, 16)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 300 * time.Millisecond, Listener: tracker.Listener{Changed: func(paths []string) { heard <- paths }}})
	conformance.PushFrom(t, dir, "user_memory/has-a-cat.md", "")
	settle(t, tr)
	if s := conformance.Subject(t, dir); s != "elsewhere: user_memory/has-a-cat.md" {
		t.Errorf("HEAD subject %q: the pulled commit should be the last one", s)
	}
	found := false
	for len(heard) > 0 {
		if slices.Contains(<-heard, "user_memory/has-a-cat.md") {
			found = true
		}
	}
	if !found {
		t.Errorf("no notification for the path the outside commit removed")
	}
	if strings.Contains(conformance.ReadFile(t, dir, "user_memory.md"), "has-a-cat") {
		t.Errorf("index still lists the removed memory")
	}
	conformance.CheckRepo(t, dir)
}

func TestControlFileRequestsAndIsNeverCommitted(t *testing.T) {
	dir := conformance.NewRepo(t)
	requests := make(chan struct{}, 4)
	tr, _, _ := open(t, dir, tracker.Config{Listener: tracker.Listener{Control: func() { requests <- struct{}{} }}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-tr.Ready()
	conformance.WriteFile(t, dir, tracker.ControlFile, "now\n")
	settle(t, tr)
	select {
	case <-requests:
	default:
		t.Fatal("writing the control file did not request a consolidation")
	}
	if _, err := os.Stat(filepath.Join(dir, tracker.ControlFile)); !os.IsNotExist(err) {
		t.Errorf("control file left behind: %v", err)
	}
	if strings.Contains(conformance.Git(t, dir, "ls-files"), "consolidate") {
		t.Error("control file committed")
	}
	conformance.CheckRepo(t, dir)
}

func TestStatusReport(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{Debounce: time.Hour, Listener: tracker.Listener{Status: func() string { return "consolidation: idle, last run 2 added" }}})
	conformance.WriteFile(t, dir, "user_memory/new.md", conformance.Memory("New", "New", "New."))
	tr.Touch("user_memory/new.md", "python3")
	st := string(tr.Status())
	for _, want := range []string{
		"invalid files: none",
		"pending changes (1, commit in about",
		"  user_memory/new.md (agent)",
		"last commit: ",
		" mindmount init\n  by test at ",
		"consolidation: idle, last run 2 added",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
	// Inspect (mindmount status without a daemon) lists uncommitted files.
	conformance.WriteFile(t, dir, "user_memory/bad.md", "---\ndescription: x\nnope: 1\n---\n")
	other, _, _ := open(t, dir, tracker.Config{})
	if err := other.Inspect(context.Background()); err != nil {
		t.Fatal(err)
	}
	st = string(other.Status())
	for _, want := range []string{"user_memory/bad.md:3: ", "uncommitted changes (1;", "  A user_memory/new.md"} {
		if !strings.Contains(st, want) {
			t.Errorf("inspect status lacks %q:\n%s", want, st)
		}
	}
}

func TestCommitsWaitForGitCommands(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	before := commitCount(t, dir)
	// A git merge stopped for a conflict: nothing may be committed on top.
	marker := filepath.Join(dir, ".git", "MERGE_HEAD")
	if err := os.WriteFile(marker, []byte(conformance.Git(t, dir, "rev-parse", "HEAD")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conformance.WriteFile(t, dir, "user_memory/during-merge.md", conformance.Memory("During", "During", "During."))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(string(tr.Status()), "commits paused: a git merge is in progress") {
		if time.Now().After(deadline) {
			t.Fatalf("status never said commits are paused:\n%s", tr.Status())
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	if got := commitCount(t, dir); got != before {
		t.Fatalf("committed during a merge")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	settle(t, tr)
	if got := commitCount(t, dir); got != before+1 {
		t.Fatalf("commits = %d after the merge ended, want %d", got, before+1)
	}
	conformance.CheckRepo(t, dir)
}

// TestConcurrentWriters: goroutines write their own files and one shared
// file while the tracker commits underneath; the final content of every
// file ends up in HEAD and git stays consistent.
func TestConcurrentWriters(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 5 * time.Millisecond, MaxWait: 20 * time.Millisecond})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				s := strconv.Itoa(w) + "-" + strconv.Itoa(i)
				conformance.WriteFile(t, dir, "user_memory/w"+strconv.Itoa(w)+".md", conformance.Memory("Writer "+s, "W", s+"."))
				conformance.WriteFile(t, dir, "user_memory/shared.md", conformance.Memory("Shared "+s, "Shared", s+"."))
				if i%5 == 0 {
					tr.Touch("user_memory/shared.md", "python3")
				}
			}
		}()
	}
	wg.Wait()
	settle(t, tr)
	for _, rel := range []string{"user_memory/w0.md", "user_memory/w1.md", "user_memory/w2.md", "user_memory/w3.md", "user_memory/shared.md"} {
		disk := conformance.ReadFile(t, dir, rel)
		if head, _ := conformance.HeadFile(t, dir, rel); head != strings.TrimSpace(disk) {
			t.Errorf("%s: HEAD has\n%s\ndisk has\n%s", rel, head, disk)
		}
	}
	conformance.CheckRepo(t, dir)
}

// TestNestedGitNeverCommitted: a clone inside the repository (vendor/lib)
// has its files committed but never its .git directory, which git fsck
// would reject.
func TestNestedGitNeverCommitted(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	conformance.WriteFile(t, dir, "vendor/lib/.git/config", "[core]\n")
	conformance.WriteFile(t, dir, "vendor/lib/.GIT/HEAD", "ref: refs/heads/main\n")
	conformance.WriteFile(t, dir, "vendor/lib/README.md", "# Lib\n")
	settle(t, tr)
	files := conformance.Git(t, dir, "ls-files", "vendor")
	if files != "vendor/lib/README.md" {
		t.Errorf("ls-files vendor = %q, want only the README", files)
	}
	if out, err := conformance.GitErr(dir, "fsck", "--strict", "--no-progress"); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestTrackedFileStaysTrackedWhenIgnored: like git, a pattern in
// .gitignore does not stop changes to a file HEAD already has.
func TestTrackedFileStaysTrackedWhenIgnored(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{})
	conformance.WriteFile(t, dir, ".gitignore", conformance.Ignore+"notes/\n")
	conformance.WriteFile(t, dir, "notes/project.md", "# Project\n\nChanged.\n")
	conformance.WriteFile(t, dir, "notes/new.md", "# New\n")
	for _, rel := range []string{".gitignore", "notes/project.md", "notes/new.md"} {
		tr.Touch(rel, "sed")
	}
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := conformance.HeadFile(t, dir, "notes/project.md"); !strings.Contains(got, "Changed.") {
		t.Errorf("tracked file under an ignored folder not committed: %q", got)
	}
	if _, ok := conformance.HeadFile(t, dir, "notes/new.md"); ok {
		t.Errorf("new ignored file committed")
	}
	conformance.CheckRepo(t, dir)
}

// TestSettleWithoutRun: with no Run loop there is no debounce timer, so
// Settle commits by itself.
func TestSettleWithoutRun(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{Debounce: time.Hour})
	conformance.WriteFile(t, dir, "user_memory/quiet.md", conformance.Memory("Quiet", "Quiet", "Quiet."))
	tr.Touch("user_memory/quiet.md", "")
	settle(t, tr)
	if s := conformance.Subject(t, dir); s != "editor: add user_memory/quiet.md" {
		t.Errorf("subject %q", s)
	}
	conformance.CheckRepo(t, dir)
}

// TestSlowCommitDoesNotDelayTheNextBurst is issue 14 defect 10 ("a burst
// committed 14-17 s after its first write although --max-wait is 10 s"):
// while one commit is slow, the changes of the next burst must still be
// noticed at once, so their MaxWait counts from their first write and not
// from the end of the slow commit.
func TestSlowCommitDoesNotDelayTheNextBurst(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 20 * time.Millisecond})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	off := failpoint.Enable(failpoint.ObjectsWritten, func() {
		entered <- struct{}{}
		<-release
	})
	defer off()
	conformance.WriteFile(t, dir, "user_memory/first.md", conformance.Memory("First", "First", "One."))
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("first commit never started")
	}
	// The first commit is stuck in the middle; the next write must show
	// as pending now.
	conformance.WriteFile(t, dir, "user_memory/second.md", conformance.Memory("Second", "Second", "Two."))
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(tr.Pending(), "user_memory/second.md") {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("a write made during a slow commit was not noticed until the commit ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	settle(t, tr)
	conformance.CheckRepo(t, dir)
}

// TestFixedFileLeavesStatusAtOnce: a fixed file is no longer reported
// invalid once it is written, not only once the fix is committed a
// debounce later; the indexes already show it (issue 11.8).
func TestFixedFileLeavesStatusAtOnce(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g, _ := open(t, dir, tracker.Config{Debounce: time.Hour})
	rel := "user_memory/broken.md"
	conformance.WriteFile(t, dir, rel, "---\ndescription: ok\nmood: grumpy\n---\n# Broken\n")
	tr.Touch(rel, "agent")
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := string(tr.Status()); !strings.Contains(st, rel+":3: ") {
		t.Fatalf("Status lacks %s:3:\n%s", rel, st)
	}
	// The fix, as the mount sees it: written, the graph updated, the
	// commit still a debounce (here an hour) away.
	conformance.WriteFile(t, dir, rel, "---\ndescription: ok\n---\n# Broken\n")
	if err := g.Update(rel); err != nil {
		t.Fatal(err)
	}
	tr.Touch(rel, "agent")
	st := string(tr.Status())
	if strings.Contains(st, rel+":") || !strings.Contains(st, "invalid files: none") || !strings.Contains(st, "  "+rel+" (agent)") {
		t.Errorf("after the fix, before its commit:\n%s", st)
	}
	// Written again, still broken: the graph's reading says so at once.
	conformance.WriteFile(t, dir, rel, "---\ndescription: ok\ncolour: red\n---\n# Broken\n")
	if err := g.Update(rel); err != nil {
		t.Fatal(err)
	}
	tr.Touch(rel, "agent")
	if st := string(tr.Status()); !strings.Contains(st, rel+":3: ") || strings.Contains(st, "mood") {
		t.Errorf("broken again, before its commit:\n%s", st)
	}
}
