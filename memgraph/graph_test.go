package memgraph

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// writeRepo creates files (path -> content) under a temp dir.
func writeRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		writeFile(t, dir, rel, data)
	}
	return dir
}

func writeFile(t testing.TB, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func testRepo(t testing.TB) string {
	return writeRepo(t, map[string]string{
		"character.md":                    "---\ndescription: Base persona\nread_only: true\n---\n# Character\n\nYou are a warm, concise assistant.\n",
		"user.md":                         "# User\n\nThe user is Ada.\n",
		"user_memory/likes-coffee.md":     mem("", "Likes coffee", "", "Coffee.", "01.01.26", "02.01.26"),
		"user_memory/likes-tea.md":        mem("", "Likes tea", "", "Tea. used, used, used", "01.01.26"),
		"user_memory/old-job.md":          mem("", "Worked at ACME", "contradicted", "ACME.", "01.01.26", "02.01.26", "03.01.26", "04.01.26", "05.01.26", "06.01.26"),
		"character_memory/be-brief.md":    mem("", "Keep answers brief", "", "Brief.", "03.01.26"),
		"system/tools.md":                 "---\ndescription: Tools\n---\nUse `grep` to search memory.\n",
		"projects/mindmount/notes.md":     "---\ndescription: Notes on the mindmount project\n---\n# Notes\n",
		"projects/mindmount/old.md":       "---\ndescription: Retracted plan\nstatus: retracted\n---\n",
		"projects/readme.md":              "# Projects overview\n",
		"README.md":                       "---\ndescription: How to use this memory\n---\n# README\n",
		"transcripts/s1.md":               "not a memory",
		".git/HEAD.md":                    "not a memory",
		"user_memory/broken.md":           "---\ndescription: broken\nbogus: 1\n---\n",
		"user_memory.md":                  "synthesized, stale copy from watch mode",
		"notes.txt":                       "not markdown",
		"character_memory/contradicts.md": mem("", "Retired adaptation", "superseded", "x", "01.01.26", "02.01.26", "03.01.26"),
	})
}

func TestScanIndexContext(t *testing.T) {
	g, err := Scan(testRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	idx := string(g.Index(KindUser))
	wantLines := []string{
		"- user_memory/likes-coffee.md — Likes coffee (uses: 2)\n- user_memory/likes-tea.md — Likes tea (uses: 1)\n",
	}
	for _, w := range wantLines {
		if !strings.Contains(idx, w) {
			t.Errorf("user index lacks %q:\n%s", w, idx)
		}
	}
	if strings.Contains(idx, "old-job") || strings.Contains(idx, "broken") {
		t.Errorf("retired or invalid memory in index:\n%s", idx)
	}
	ch := string(g.Index(KindCharacter))
	if !strings.Contains(ch, "character_memory/be-brief.md") || strings.Contains(ch, "contradicts") {
		t.Errorf("character index:\n%s", ch)
	}
	ctx := string(g.Context(ContextOptions{}))
	order := []string{"You are a warm, concise assistant.", "## Character memory", "character_memory/be-brief.md", "The user is Ada.", "## User memory", "user_memory/likes-coffee.md", "Use `grep` to search memory.", "## External memory", "- README.md — How to use this memory", "- projects/\n", "  - projects/mindmount/\n", "    - projects/mindmount/notes.md — Notes on the mindmount project\n", "  - projects/readme.md — Projects overview\n"}
	last := -1
	for _, o := range order {
		i := strings.Index(ctx, o)
		if i < 0 || i < last {
			t.Errorf("context: %q missing or out of order:\n%s", o, ctx)
			break
		}
		last = i
	}
	for _, absent := range []string{"old-job", "ACME", "contradicts", "old.md", "read_only", "description: Base persona", "truncated", "transcripts", "broken"} {
		if strings.Contains(ctx, absent) {
			t.Errorf("context contains %q:\n%s", absent, ctx)
		}
	}
	probs := g.Problems()
	if len(probs) != 1 || probs[0].Path != "user_memory/broken.md" || probs[0].Line != 3 {
		t.Errorf("problems = %v", probs)
	}
	if !g.ReadOnly("character.md") || g.ReadOnly("user.md") {
		t.Errorf("ReadOnly wrong")
	}
	if len(g.Memories(KindUser)) != 3 {
		t.Errorf("Memories(user) = %d, want 3 (any status, valid only)", len(g.Memories(KindUser)))
	}
}

func TestGraphChanges(t *testing.T) {
	dir := testRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events [][]string
	g.Subscribe(func(c []string) {
		mu.Lock()
		events = append(events, c)
		mu.Unlock()
		_ = g.Index(KindUser) // reading from a callback must not deadlock
	})
	v0 := g.Version()

	// A valid update re-ranks.
	writeFile(t, dir, "user_memory/likes-tea.md", mem("", "Likes tea", "", "Tea.", "01.01.26", "02.01.26", "03.01.26"))
	if err := g.Update("user_memory/likes-tea.md"); err != nil {
		t.Fatal(err)
	}
	if g.Version() == v0 {
		t.Errorf("version did not change")
	}
	idx := string(g.Index(KindUser))
	if strings.Index(idx, "likes-tea") > strings.Index(idx, "likes-coffee") {
		t.Errorf("tea should now rank first:\n%s", idx)
	}

	// Invalid content: last valid version keeps serving, problem recorded.
	writeFile(t, dir, "user_memory/likes-tea.md", "---\nstatus: active\n---\n")
	if err := g.Update("user_memory/likes-tea.md"); err != nil {
		t.Fatal(err)
	}
	if m := g.Get("user_memory/likes-tea.md"); m == nil || m.Uses != 3 {
		t.Errorf("last valid version not served: %+v", m)
	}
	if !strings.Contains(string(g.Index(KindUser)), "likes-tea.md — Likes tea (uses: 3)") {
		t.Errorf("index lost the last valid version")
	}
	found := false
	for _, p := range g.Problems() {
		if p.Path == "user_memory/likes-tea.md" && strings.Contains(p.Msg, "missing description") {
			found = true
		}
	}
	if !found {
		t.Errorf("problem not recorded: %v", g.Problems())
	}
	// Fixing it clears the problem.
	writeFile(t, dir, "user_memory/likes-tea.md", mem("", "Likes tea", "", "Tea."))
	g.Put("user_memory/likes-tea.md", []byte(mem("", "Likes tea", "", "Tea.")))
	for _, p := range g.Problems() {
		if p.Path == "user_memory/likes-tea.md" {
			t.Errorf("problem not cleared: %v", p)
		}
	}

	// Retiring a memory removes it from index and context.
	g.Put("user_memory/likes-coffee.md", []byte(mem("", "Likes coffee", "contradicted", "Coffee.", "01.01.26", "02.01.26")))
	if strings.Contains(string(g.Index(KindUser)), "likes-coffee") || strings.Contains(string(g.Context(ContextOptions{})), "likes-coffee") {
		t.Errorf("contradicted memory still listed")
	}

	// Rename and remove.
	if err := os.Rename(filepath.Join(dir, "user_memory/likes-tea.md"), filepath.Join(dir, "user_memory/tea.md")); err != nil {
		t.Fatal(err)
	}
	g.Rename("user_memory/likes-tea.md", "user_memory/tea.md")
	idx = string(g.Index(KindUser))
	if strings.Contains(idx, "likes-tea") || !strings.Contains(idx, "user_memory/tea.md") {
		t.Errorf("rename not reflected:\n%s", idx)
	}
	os.Remove(filepath.Join(dir, "user_memory/tea.md"))
	if err := g.Update("user_memory/tea.md"); err != nil {
		t.Fatal(err)
	}
	if g.Get("user_memory/tea.md") != nil || strings.Contains(string(g.Index(KindUser)), "tea.md") {
		t.Errorf("removed file still known")
	}

	// Directory rename moves every memory under it.
	if err := os.Rename(filepath.Join(dir, "projects"), filepath.Join(dir, "work")); err != nil {
		t.Fatal(err)
	}
	g.Rename("projects", "work")
	ctx := string(g.Context(ContextOptions{}))
	if strings.Contains(ctx, "projects/") || !strings.Contains(ctx, "work/mindmount/notes.md") {
		t.Errorf("directory rename not reflected:\n%s", ctx)
	}

	// Non-memory paths are ignored and do not notify.
	n := len(events)
	g.Put("transcripts/x.md", []byte("hi"))
	g.Put("CONTEXT.md", []byte("hi"))
	// The same content twice is not a change.
	g.Put("user.md", []byte("# User\n\nThe user is Ada.\n"))
	if len(events) != n {
		t.Errorf("no-op events notified: %v", events[n:])
	}
	if len(events) == 0 {
		t.Errorf("no events")
	}
}

func TestGetReturnsCopy(t *testing.T) {
	g, err := Scan(testRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	m := g.Get("user_memory/likes-coffee.md")
	m.SetFact("changed by a caller")
	m.AddUse(m.LastUsed)
	if got := g.Get("user_memory/likes-coffee.md"); got.Fact != "Coffee." || got.Uses != 2 {
		t.Errorf("caller mutation leaked into graph: %+v", got)
	}
}

func TestContextBudget(t *testing.T) {
	files := map[string]string{
		"character.md": "# Character\n\n" + strings.Repeat("Be kind. ", 50) + "\n",
		"user.md":      "# User\n\nAda.\n",
	}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("user_memory/m%03d.md", i)] = mem("", fmt.Sprintf("user fact number %d", i), "", "f", "01.01.26")
		files[fmt.Sprintf("character_memory/c%03d.md", i)] = mem("", fmt.Sprintf("adaptation %d", i), "", "f")
		files[fmt.Sprintf("docs/d%03d.md", i)] = "---\ndescription: doc\n---\n"
	}
	g, err := Scan(writeRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{2000, 8000, 32 << 10} {
		ctx := string(g.Context(ContextOptions{MaxBytes: max}))
		if len(ctx) > max {
			t.Errorf("budget %d: context is %d bytes", max, len(ctx))
		}
		if !strings.Contains(ctx, "<!-- mindmount: context truncated at ") {
			t.Errorf("budget %d: no truncation marker:\n%s", max, ctx)
		}
		for _, w := range []string{"Ada.", "## User memory", "## Character memory", "## External memory", "more user memories not shown in .mindmount/index/user_memory.md", "more character memories not shown"} {
			if !strings.Contains(ctx, w) {
				t.Errorf("budget %d: context lacks %q:\n%s", max, w, ctx)
			}
		}
	}
	if ctx := string(g.Context(ContextOptions{MaxBytes: 8000})); !strings.Contains(ctx, "more external files not shown") {
		t.Errorf("external list not cut at 8000 bytes:\n%s", ctx)
	}
	// Whatever the budget, the output stays within it once the marker fits.
	for max := 250; max < 12000; max += 97 {
		ctx := g.Context(ContextOptions{MaxBytes: max})
		if len(ctx) > max || !strings.Contains(string(ctx), "<!-- mindmount: context truncated") {
			t.Fatalf("budget %d: %d bytes", max, len(ctx))
		}
	}
	// A budget too small even for the blocks cuts them with a marker.
	ctx := string(g.Context(ContextOptions{MaxBytes: 300}))
	if !strings.Contains(ctx, "lines of character.md") || !strings.Contains(ctx, "300 user memories") {
		t.Errorf("tiny budget:\n%s", ctx)
	}
	// Large enough: nothing is cut.
	ctx = string(g.Context(ContextOptions{MaxBytes: 1 << 20}))
	if strings.Contains(ctx, "truncated") || !strings.Contains(ctx, "m299.md") || !strings.Contains(ctx, "docs/d299.md") {
		t.Errorf("large budget cut something")
	}
}

func TestGraphConcurrent(t *testing.T) {
	dir := testRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	g.Subscribe(func([]string) {})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				rel := fmt.Sprintf("user_memory/w%d-%d.md", w, i%5)
				g.Put(rel, []byte(mem("", fmt.Sprintf("w%d %d", w, i), "", "f", "01.01.26")))
				if i%7 == 0 {
					g.Remove(rel)
				}
			}
		}(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_ = g.Index(KindUser)
				_ = g.Context(ContextOptions{MaxBytes: 4000 + i})
				_ = g.Problems()
				_ = g.Get("user_memory/likes-coffee.md")
			}
		}()
	}
	wg.Wait()
	// Folder counts agree with the files.
	dirs := map[string]int{}
	for rel := range g.files {
		for i := strings.LastIndexByte(rel, '/'); i > 0; i = strings.LastIndexByte(rel[:i], '/') {
			dirs[rel[:i]]++
		}
	}
	if fmt.Sprint(dirs) != fmt.Sprint(g.dirs) {
		t.Errorf("dirs = %v, want %v", g.dirs, dirs)
	}
	// Running byte totals agree with the lists.
	for s := range g.ranked {
		n := 0
		for _, it := range g.ranked[s] {
			n += len(it.line)
		}
		if n != g.listSize[s] {
			t.Errorf("listSize[%d] = %d, lines sum to %d", s, g.listSize[s], n)
		}
	}
	// The incremental index equals a full re-rank of the final state.
	want := string(RenderIndex(KindUser, Rank(g.Memories(KindUser))))
	if got := string(g.Index(KindUser)); got != want {
		t.Errorf("incremental index differs from full rank:\n%s\nvs\n%s", got, want)
	}
}

func TestUpdateIgnoresSymlinksAndReadsFolders(t *testing.T) {
	dir := testRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, filepath.Dir(outside), "secret.md", mem("", "Secret from outside", "", "x"))
	if err := os.Symlink(outside, filepath.Join(dir, "user_memory/link.md")); err != nil {
		t.Skip(err)
	}
	if err := g.Update("user_memory/link.md"); err != nil {
		t.Fatal(err)
	}
	if g.Get("user_memory/link.md") != nil || strings.Contains(string(g.Index(KindUser)), "Secret") {
		t.Errorf("symlink followed")
	}
	// A folder that appears at once (git checkout, mv of a folder) is read
	// by one Update of the folder.
	writeFile(t, dir, "notes/new/a.md", "---\ndescription: New note A\n---\n")
	writeFile(t, dir, "notes/new/b.md", "---\ndescription: New note B\n---\n")
	if err := g.Update("notes"); err != nil {
		t.Fatal(err)
	}
	ctx := string(g.Context(ContextOptions{}))
	if !strings.Contains(ctx, "notes/new/a.md — New note A") || !strings.Contains(ctx, "notes/new/b.md — New note B") {
		t.Errorf("folder update missed files:\n%s", ctx)
	}
	os.RemoveAll(filepath.Join(dir, "notes"))
	if err := g.Update("notes"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(g.Context(ContextOptions{})), "notes/new") {
		t.Errorf("removed folder still listed")
	}
}

func TestScanThroughSymlinkedRoot(t *testing.T) {
	dir := testRepo(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	g, err := Scan(link)
	if err != nil {
		t.Fatal(err)
	}
	if g.Get("user_memory/likes-coffee.md") == nil {
		t.Errorf("scan through a symlinked root found nothing: %v", g.Paths())
	}
}

// TestRenderDoesNotReadFiles removes the repository after the scan: the
// indexes and the context come from memory alone.
func TestRenderDoesNotReadFiles(t *testing.T) {
	dir := testRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	g.Put("user_memory/new.md", []byte(mem("", "Fresh memory", "", "x")))
	if !strings.Contains(string(g.Index(KindUser)), "likes-coffee") || !strings.Contains(string(g.Index(KindUser)), "Fresh memory") {
		t.Errorf("index after the files are gone:\n%s", g.Index(KindUser))
	}
	if ctx := string(g.Context(ContextOptions{})); !strings.Contains(ctx, "You are a warm, concise assistant.") || !strings.Contains(ctx, "Fresh memory") {
		t.Errorf("context after the files are gone:\n%s", ctx)
	}
}

func TestContextManyLongBlocks(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("system/%s-%02d.md", strings.Repeat("très-long-nom-de-bloc-", 8), i)] = strings.Repeat("line of a system block\n", 20)
	}
	g, err := Scan(writeRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{300, 1000, 5000} {
		ctx := string(g.Context(ContextOptions{MaxBytes: max}))
		if len(ctx) > max || !strings.Contains(ctx, "context truncated") || !utf8.ValidString(ctx) {
			t.Errorf("budget %d: %d bytes\n%s", max, len(ctx), ctx)
		}
	}
}
