package mount

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// sh runs a shell command line with the mount as working directory.
func (tm *testMount) sh(script string) {
	tm.t.Helper()
	cmd := inDir(tm.mnt, "sh", "-c", script)
	if out, err := cmd.CombinedOutput(); err != nil {
		tm.t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

// committed returns the content of rel at HEAD.
func (tm *testMount) committed(rel string) string {
	tm.t.Helper()
	return tm.git("show", "HEAD:"+rel)
}

func TestShellRedirections(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	const rel = "user_memory/likes-jazz.md"
	tm.sh(`printf -- '---\ndescription: Listens to jazz\n---\n# Likes Jazz\n\n## Fact\n' > ` + rel)
	tm.sh(`echo 'You listen to jazz while working.' >> ` + rel)
	if !strings.Contains(tm.read("user_memory.md"), "likes-jazz") {
		t.Errorf("index after echo >> lacks likes-jazz")
	}
	tm.settle()
	want := "---\ndescription: Listens to jazz\n---\n# Likes Jazz\n\n## Fact\nYou listen to jazz while working.\n"
	if got := tm.committed(rel); got+"\n" != want {
		t.Errorf("committed:\n%q\nwant\n%q", got, want)
	}
	if an := tm.git("log", "-1", "--format=%an"); an != "agent" {
		t.Errorf("author %q, want agent", an)
	}
	tm.clean()
}

func TestSedInPlace(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	tm := mountRepo(t, newRepo(t, nil), Options{})
	tm.sh(`sed -i 's/green tea/black tea/' user_memory/likes-tea.md`)
	if !strings.Contains(tm.read("user_memory.md"), "black tea") {
		t.Errorf("index after sed -i:\n%s", tm.read("user_memory.md"))
	}
	tm.settle()
	if got := tm.committed("user_memory/likes-tea.md"); !strings.Contains(got, "black tea every morning") {
		t.Errorf("committed after sed -i:\n%s", got)
	}
	if files := tm.git("ls-files", "user_memory"); strings.Contains(files, "sed") {
		t.Errorf("sed temp file committed: %s", files)
	}
	tm.clean()
}

func TestTempThenRename(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	tm.sh(`printf -- '---\ndescription: Written atomically\n---\n# Atomic\n' > user_memory/.atomic.md.tmp && mv user_memory/.atomic.md.tmp user_memory/atomic.md`)
	tm.settle()
	if got := tm.committed("user_memory/atomic.md"); !strings.Contains(got, "Written atomically") {
		t.Errorf("committed: %q", got)
	}
	// A plain rename of a memory is committed as a rename.
	tm.sh(`mv user_memory/atomic.md user_memory/atomic-2.md`)
	if idx := tm.read("user_memory.md"); !strings.Contains(idx, "atomic-2") {
		t.Errorf("index after mv:\n%s", idx)
	}
	tm.settle()
	if files := tm.git("ls-files", "user_memory"); strings.Contains(files, "user_memory/atomic.md") || !strings.Contains(files, "atomic-2.md") {
		t.Errorf("files after mv: %s", files)
	}
	// mkdir, rmdir, truncate, chmod, fsync behave.
	tm.sh(`mkdir -p notes/sub && echo hi > notes/sub/a.txt && rm notes/sub/a.txt && rmdir notes/sub notes`)
	tm.sh(`echo hello > plain.txt && truncate -s 2 plain.txt && chmod 0755 plain.txt`)
	if got := tm.read("plain.txt"); got != "he" {
		t.Errorf("after truncate: %q", got)
	}
	f, err := os.OpenFile(tm.p("plain.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("llo\n")
	if err := f.Sync(); err != nil {
		t.Errorf("fsync: %v", err)
	}
	f.Close()
	tm.settle()
	if got := tm.committed("plain.txt"); got != "hello" {
		t.Errorf("plain.txt committed as %q", got)
	}
	if mode := tm.git("ls-files", "-s", "plain.txt"); !strings.HasPrefix(mode, "100755") {
		t.Errorf("mode after chmod: %s", mode)
	}
	tm.clean()
}

func TestVimExMode(t *testing.T) {
	vim := ""
	for _, name := range []string{"vim", "vim.tiny", "vim.basic"} {
		if p, err := exec.LookPath(name); err == nil {
			vim = p
			break
		}
	}
	if vim == "" {
		t.Skip("vim not installed")
	}
	tm := mountRepo(t, newRepo(t, nil), Options{})
	cmd := inDir(tm.mnt, vim, "-u", "NONE", "-N", "-es", "-c", "%s/green tea/jasmine tea/", "-c", "wq", "user_memory/likes-tea.md")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vim: %v\n%s", err, out)
	}
	// And a swap-file-writing session: the swap file is never committed.
	cmd = inDir(tm.mnt, vim, "-u", "NONE", "-N", "-es", "-c", "set swapfile", "-c", "$put ='extra line'", "-c", "wq", "user_memory/likes-tea.md")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vim: %v\n%s", err, out)
	}
	tm.settle()
	got := tm.committed("user_memory/likes-tea.md")
	if !strings.Contains(got, "jasmine tea every morning") || !strings.Contains(got, "extra line") {
		t.Errorf("committed after vim:\n%s", got)
	}
	if an := tm.git("log", "-1", "--format=%an"); an != "editor" {
		t.Errorf("author %q, want editor", an)
	}
	if files := tm.git("ls-files"); strings.Contains(files, ".swp") || strings.Contains(files, "4913") || strings.Contains(files, "~") {
		t.Errorf("vim temp files committed:\n%s", files)
	}
	tm.clean()
}

// Several writers at once, different files and the same file, while the
// tracker commits: nothing a writer closed is lost, and the repository
// stays consistent.
func TestConcurrentWriters(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	const writers, rounds = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				own := fmt.Sprintf("user_memory/w%d-%d.md", w, i)
				if err := os.WriteFile(tm.p(own), []byte(memoryFile("W", fmt.Sprintf("Writer %d round %d", w, i), "x")), 0o644); err != nil {
					errs <- err
				}
				f, err := os.OpenFile(tm.p("shared.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					errs <- err
					continue
				}
				fmt.Fprintf(f, "w%d r%d\n", w, i)
				if err := f.Close(); err != nil {
					errs <- err
				}
				if i%5 == 0 {
					os.ReadFile(tm.p("user_memory.md"))
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tm.settle()
	files := tm.git("ls-files", "user_memory")
	for w := 0; w < writers; w++ {
		for i := 0; i < rounds; i++ {
			if !strings.Contains(files, fmt.Sprintf("user_memory/w%d-%d.md", w, i)) {
				t.Errorf("w%d-%d.md not committed", w, i)
			}
		}
	}
	shared := tm.committed("shared.log")
	if n := strings.Count(shared, "\n") + 1; n != writers*rounds {
		t.Errorf("shared.log has %d lines, want %d", n, writers*rounds)
	}
	idx := tm.read("user_memory.md")
	if n := strings.Count(idx, "w"); n < writers*rounds {
		t.Errorf("index lists too few memories (%d)", n)
	}
	tm.clean()
}

// The same writes with kernel passthrough (when the kernel and our
// privileges allow it; otherwise it falls back silently and this is the
// default mode again).
func TestPassthroughMode(t *testing.T) {
	tm := mountRepo(t, newRepo(t, map[string]string{
		"user_memory/likes-tea.md": memoryFile("Likes Tea", "Drinks green tea every morning", "You drink green tea every morning.") + "\n## Access log\n",
	}), Options{Passthrough: true})
	const rel = "user_memory/likes-jazz.md"
	r, err := os.Open(tm.p("user_memory/likes-tea.md")) // a reader stays open meanwhile
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tm.sh(`printf -- '---\ndescription: Listens to jazz\n---\n# Likes Jazz\n' > ` + rel + ` && echo 'You listen to jazz.' >> ` + rel)
	tm.sh(`echo 'used, 01.09.26' >> user_memory/likes-tea.md`)
	if got := tm.read(rel); !strings.HasSuffix(got, "You listen to jazz.\n") {
		t.Errorf("read back: %q", got)
	}
	if !strings.Contains(tm.read("user_memory.md"), "likes-jazz") {
		t.Errorf("index lacks likes-jazz")
	}
	tm.settle()
	if got := tm.committed("user_memory/likes-tea.md"); !strings.Contains(got, "used, 01.09.26") {
		t.Errorf("append through passthrough not committed:\n%s", got)
	}
	tm.clean()
}
