package mcpserver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const coffee = "---\ndescription: Enjoys Ethiopian single origin coffee\nstatus: active\n---\n# Likes Coffee\n\n## Fact\nYou enjoy specialty coffee, especially Ethiopian single origin.\n\n## Access log\n"

func TestToolList(t *testing.T) {
	c := setup(t)
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{"context", "create", "delete", "insert", "recall", "rename", "skills", "str_replace", "use", "view"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if ins := c.cs.InitializeResult().Instructions; !strings.Contains(ins, "One fact per file") || !strings.Contains(ins, "retracted") {
		t.Errorf("instructions do not explain the memory:\n%s", ins)
	}
}

func TestCreateCommitsWithClientAuthor(t *testing.T) {
	c := setup(t)
	text := c.ok("create", map[string]any{"path": "/memories/user_memory/likes-coffee.md", "file_text": coffee})
	if !strings.Contains(text, "created /memories/user_memory/likes-coffee.md (commit ") {
		t.Errorf("create said %q", text)
	}
	if got := c.committed("user_memory/likes-coffee.md"); got != coffee {
		t.Errorf("HEAD has %q, want %q", got, coffee)
	}
	if got := c.git("log", "-1", "--format=%an <%ae>|%s"); got != "mcp (test-client) <mcp@mindmount.local>|mcp (test-client): add user_memory/likes-coffee.md" {
		t.Errorf("last commit %q", got)
	}
	if n := c.git("rev-list", "--count", "HEAD"); n != "2" {
		t.Errorf("%s commits, want 2 (seed + one per call)", n)
	}
	// The graph serves it at once: index, view, recall.
	if got := c.ok("view", map[string]any{"path": "user_memory.md"}); !strings.Contains(got, "likes-coffee") {
		t.Errorf("user_memory.md lacks the new memory:\n%s", got)
	}
	if got := c.ok("recall", map[string]any{"query": "what coffee does the user like?"}); !strings.HasPrefix(got, "1. /memories/user_memory/likes-coffee.md") {
		t.Errorf("recall:\n%s", got)
	}
	// Overwriting says so.
	if got := c.ok("create", map[string]any{"path": "user_memory/likes-coffee.md", "file_text": strings.Replace(coffee, "Ethiopian", "Kenyan", -1)}); !strings.HasPrefix(got, "overwrote") {
		t.Errorf("second create said %q", got)
	}
}

func TestCreateInvalidRefused(t *testing.T) {
	c := setup(t)
	head := c.head()
	cases := map[string]struct{ path, text, want string }{
		"no description": {"user_memory/bad.md", "# Bad\n\n## Fact\nNo frontmatter.\n", "user_memory/bad.md"},
		"unknown key":    {"user_memory/bad.md", "---\ndescription: x\ncolour: red\n---\n# Bad\n", "user_memory/bad.md:3: "},
		"bad status":     {"user_memory/bad.md", "---\ndescription: x\nstatus: maybe\n---\n# Bad\n", "user_memory/bad.md:3: "},
		"read_only new":  {"user_memory/bad.md", "---\ndescription: x\nread_only: true\n---\n# Bad\n", "read_only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c.t = t
			c.fails("create", map[string]any{"path": tc.path, "file_text": tc.text}, "refused, nothing was written", tc.want)
			if _, ok := c.disk(tc.path); ok {
				t.Errorf("%s was written", tc.path)
			}
		})
	}
	if h := c.head(); h != head {
		t.Errorf("HEAD moved to %s", h)
	}
}

func TestReadOnlyRefused(t *testing.T) {
	c := setup(t)
	head := c.head()
	before, _ := c.disk("character.md")
	c.fails("str_replace", map[string]any{"path": "character.md", "old_str": "careful", "new_str": "careless"}, "read_only")
	c.fails("insert", map[string]any{"path": "character.md", "insert_line": 0, "insert_text": "x"}, "read_only")
	c.fails("create", map[string]any{"path": "character.md", "file_text": "# Character\n"}, "read_only")
	c.fails("delete", map[string]any{"path": "character.md"}, "read_only")
	c.fails("delete", map[string]any{"path": "character.md", "hard": true}, "read_only")
	c.fails("rename", map[string]any{"old_path": "character.md", "new_path": "persona.md"}, "read_only")
	// Removing the flag is a change of it too.
	c.fails("str_replace", map[string]any{"path": "character.md", "old_str": "read_only: true\n", "new_str": ""}, "read_only")
	if after, _ := c.disk("character.md"); after != before {
		t.Errorf("character.md changed:\n%s", after)
	}
	if h := c.head(); h != head {
		t.Errorf("HEAD moved")
	}
}

func TestPathsConfined(t *testing.T) {
	c := setup(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte(coffee), 0o644)
	if err := os.Symlink(outside, filepath.Join(c.dir, "user_memory", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(c.dir, "user_memory", "link.md")); err != nil {
		t.Fatal(err)
	}
	// A link that stays inside the repository is refused too: a memory
	// tool edits the file it names, never another one behind a link.
	if err := os.Symlink("../user.md", filepath.Join(c.dir, "user_memory", "alias.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../character_memory", filepath.Join(c.dir, "user_memory", "chars")); err != nil {
		t.Fatal(err)
	}
	userBefore, _ := c.disk("user.md")
	briefBefore, _ := c.disk("character_memory/brief.md")
	head := c.head()
	c.fails("str_replace", map[string]any{"path": "user_memory/alias.md", "old_str": "Ada", "new_str": "Eve"}, "symbolic link")
	c.fails("view", map[string]any{"path": "user_memory/alias.md"}, "symbolic link")
	c.fails("view", map[string]any{"path": "user_memory/chars/brief.md"}, "symbolic link")
	c.fails("view", map[string]any{"path": "user_memory/chars"}, "symbolic link")
	c.fails("str_replace", map[string]any{"path": "user_memory/chars/brief.md", "old_str": "short", "new_str": "long"}, "symbolic link")
	if after, _ := c.disk("character_memory/brief.md"); after != briefBefore {
		t.Error("brief.md was changed through a directory link")
	}
	if after, _ := c.disk("user.md"); after != userBefore {
		t.Error("user.md was changed through a link")
	}
	c.fails("create", map[string]any{"path": "../escape.md", "file_text": coffee}, "`..`")
	c.fails("create", map[string]any{"path": "user_memory/../../escape.md", "file_text": coffee}, "`..`")
	c.fails("view", map[string]any{"path": "/memories/../etc/passwd"}, "`..`")
	c.fails("view", map[string]any{"path": ".git/config"}, ".git")
	c.fails("create", map[string]any{"path": "sub/.GIT/x.md", "file_text": coffee}, ".git")
	c.fails("view", map[string]any{"path": "/etc/passwd"}, "absolute")
	c.fails("create", map[string]any{"path": "user_memory/out/evil.md", "file_text": coffee}, "symbolic link")
	c.fails("view", map[string]any{"path": "user_memory/out/secret.md"}, "symbolic link")
	c.fails("view", map[string]any{"path": "user_memory/link.md"}, "symbolic link")
	c.fails("str_replace", map[string]any{"path": "user_memory/link.md", "old_str": "Ethiopian", "new_str": "x"}, "symbolic link")
	c.fails("create", map[string]any{"path": "user_memory/link.md", "file_text": coffee}, "symbolic link")
	c.fails("rename", map[string]any{"old_path": "user_memory/likes-tea.md", "new_path": "user_memory/out/tea.md"}, "symbolic link")
	c.fails("create", map[string]any{"path": "notes.txt", "file_text": "x"}, "not a memory file")
	c.fails("create", map[string]any{"path": ".mindmount/x.md", "file_text": coffee}, "not a memory file")
	c.fails("create", map[string]any{"path": "CONTEXT.md", "file_text": coffee}, "generated")
	if _, err := os.Stat(filepath.Join(outside, "evil.md")); err == nil {
		t.Error("a file was written outside the repository")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(b) != coffee {
		t.Error("the symlink target was changed")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(c.dir), "escape.md")); err == nil {
		t.Error("a file escaped with ..")
	}
	if h := c.head(); h != head {
		t.Errorf("HEAD moved")
	}
}

func TestStrReplace(t *testing.T) {
	c := setup(t)
	c.ok("create", map[string]any{"path": "user_memory/pets.md", "file_text": "---\ndescription: Has two cats\n---\n# Pets\n\n## Fact\nA cat named Tom.\nA cat named Kit.\n\n## Access log\n"})
	head := c.head()
	c.fails("str_replace", map[string]any{"path": "user_memory/pets.md", "old_str": "dog", "new_str": "x"}, "0 matches")
	c.fails("str_replace", map[string]any{"path": "user_memory/pets.md", "old_str": "A cat named", "new_str": "x"}, "occurs 2 times", "lines 7, 8")
	c.fails("str_replace", map[string]any{"path": "user_memory/missing.md", "old_str": "a", "new_str": "b"}, "does not exist")
	c.fails("str_replace", map[string]any{"path": "user_memory/pets.md", "old_str": "description: Has two cats\n", "new_str": ""}, "refused, nothing was written", "description")
	if h := c.head(); h != head {
		t.Fatal("a failed str_replace committed")
	}
	c.ok("str_replace", map[string]any{"path": "user_memory/pets.md", "old_str": "named Tom", "new_str": "named Tim"})
	if got := c.committed("user_memory/pets.md"); !strings.Contains(got, "A cat named Tim.\nA cat named Kit.") {
		t.Errorf("HEAD has:\n%s", got)
	}
	if got := c.git("log", "-1", "--format=%s"); got != "mcp (test-client): update user_memory/pets.md" {
		t.Errorf("subject %q", got)
	}
}

func TestInsertAndView(t *testing.T) {
	c := setup(t)
	c.ok("insert", map[string]any{"path": "user_memory/likes-tea.md", "insert_line": 8, "insert_text": "Especially sencha."})
	got := c.committed("user_memory/likes-tea.md")
	if !strings.Contains(got, "You drink green tea every morning.\nEspecially sencha.\n") {
		t.Errorf("HEAD has:\n%s", got)
	}
	c.fails("insert", map[string]any{"path": "user_memory/likes-tea.md", "insert_line": 99, "insert_text": "x"}, "insert_line 99", "use 0 to")
	v := c.ok("view", map[string]any{"path": "user_memory/likes-tea.md", "view_range": []int{8, 9}})
	if want := "     8\tYou drink green tea every morning.\n     9\tEspecially sencha.\n"; !strings.HasSuffix(v, want) {
		t.Errorf("view_range:\n%q\nwant suffix %q", v, want)
	}
	c.fails("view", map[string]any{"path": "user_memory/likes-tea.md", "view_range": []int{5, 50}}, "outside")
	dir := c.ok("view", map[string]any{"path": "/memories"})
	for _, w := range []string{"user_memory/", "character_memory/", "user.md", "CONTEXT.md", "character.md — The assistant's persona (0 uses, read_only)"} {
		if !strings.Contains(dir, w) {
			t.Errorf("root listing lacks %q:\n%s", w, dir)
		}
	}
	if strings.Contains(dir, ".git") {
		t.Errorf("root listing shows .git:\n%s", dir)
	}
	um := c.ok("view", map[string]any{"path": "user_memory"})
	if !strings.Contains(um, "likes-tea.md — Drinks green tea every morning (0 uses)") {
		t.Errorf("user_memory listing:\n%s", um)
	}
	c.fails("view", map[string]any{"path": "user_memory/nope.md"}, "does not exist")
	if got := c.ok("view", map[string]any{"path": "CONTEXT.md"}); !strings.Contains(got, "careful assistant") {
		t.Errorf("CONTEXT.md view:\n%s", got)
	}
}

func TestDeleteSoftAndHard(t *testing.T) {
	c := setup(t)
	text := c.ok("delete", map[string]any{"path": "user_memory/likes-tea.md"})
	if !strings.Contains(text, "retired") || !strings.Contains(text, "status is now retracted") {
		t.Errorf("soft delete said %q", text)
	}
	if got := c.committed("user_memory/likes-tea.md"); !strings.Contains(got, "status: retracted") {
		t.Errorf("HEAD has:\n%s", got)
	}
	if got := c.git("log", "-1", "--format=%s"); got != "mcp (test-client): retire user_memory/likes-tea.md" {
		t.Errorf("soft delete's subject %q", got)
	}
	if got := c.ok("view", map[string]any{"path": "user_memory.md"}); strings.Contains(got, "likes-tea") {
		t.Errorf("the index still lists a retired memory:\n%s", got)
	}
	if got := c.ok("recall", map[string]any{"query": "green tea"}); strings.Contains(got, "likes-tea") {
		t.Errorf("recall returns a retired memory:\n%s", got)
	}
	if got := c.ok("recall", map[string]any{"query": "green tea", "all": true}); !strings.Contains(got, "likes-tea.md [retracted]") {
		t.Errorf("recall all:\n%s", got)
	}
	if got := c.ok("delete", map[string]any{"path": "user_memory/likes-tea.md"}); !strings.Contains(got, "already retired") {
		t.Errorf("second soft delete said %q", got)
	}
	text = c.ok("delete", map[string]any{"path": "user_memory/likes-tea.md", "hard": true})
	if !strings.Contains(text, "removed") || !strings.Contains(text, "hard delete") {
		t.Errorf("hard delete said %q", text)
	}
	if _, ok := c.disk("user_memory/likes-tea.md"); ok {
		t.Error("file still on disk")
	}
	if got := c.committed("user_memory/likes-tea.md"); got != "" {
		t.Error("file still in HEAD")
	}
	if got := c.git("log", "-1", "--format=%s"); got != "mcp (test-client): remove user_memory/likes-tea.md" {
		t.Errorf("subject %q", got)
	}
	c.fails("delete", map[string]any{"path": "user_memory/likes-tea.md", "hard": true}, "does not exist")
	c.fails("delete", map[string]any{"path": "user.md"}, "always in the context", "hard: true")
}

func TestRename(t *testing.T) {
	c := setup(t)
	c.ok("rename", map[string]any{"old_path": "user_memory/likes-tea.md", "new_path": "/memories/user_memory/drinks-tea.md"})
	if c.committed("user_memory/likes-tea.md") != "" || !strings.Contains(c.committed("user_memory/drinks-tea.md"), "green tea") {
		t.Error("rename not committed")
	}
	if got := c.git("log", "-1", "--format=%s"); got != "mcp (test-client): rename user_memory/likes-tea.md -> user_memory/drinks-tea.md" {
		t.Errorf("subject %q", got)
	}
	c.fails("rename", map[string]any{"old_path": "user_memory/drinks-tea.md", "new_path": "character_memory/brief.md"}, "already exists")
	c.fails("rename", map[string]any{"old_path": "user_memory/gone.md", "new_path": "user_memory/x.md"}, "does not exist")
	// A file without a description may not move into user_memory/.
	c.ok("create", map[string]any{"path": "notes/plain.md", "file_text": "# Plain\n\nA note.\n"})
	c.fails("rename", map[string]any{"old_path": "notes/plain.md", "new_path": "user_memory/plain.md"}, "refused, nothing was written")
	if _, ok := c.disk("notes/plain.md"); !ok {
		t.Error("a refused rename moved the file")
	}
}

func TestUseCounts(t *testing.T) {
	c := setup(t)
	now = func() time.Time { return time.Date(2026, 9, 2, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { now = time.Now })
	c.ok("use", map[string]any{"path": "user_memory/likes-tea.md"})
	text := c.ok("use", map[string]any{"path": "user_memory/likes-tea.md"})
	if !strings.Contains(text, "used, 02.09.26") || !strings.Contains(text, "(2 uses)") {
		t.Errorf("use said %q", text)
	}
	if got := c.committed("user_memory/likes-tea.md"); !strings.HasSuffix(got, "## Access log\nused, 02.09.26\nused, 02.09.26\n") {
		t.Errorf("HEAD has:\n%s", got)
	}
	if got := c.git("log", "-1", "--format=%s"); got != "mcp (test-client): use user_memory/likes-tea.md" {
		t.Errorf("use's subject %q", got)
	}
	if got := c.ok("view", map[string]any{"path": "user_memory.md"}); !strings.Contains(got, "likes-tea.md — Drinks green tea every morning (uses: 2)") {
		t.Errorf("index:\n%s", got)
	}
	if m := c.rt.Graph.Get("user_memory/likes-tea.md"); m == nil || m.Uses != 2 {
		t.Errorf("graph uses = %v", m)
	}
	c.fails("use", map[string]any{"path": "user_memory/none.md"}, "does not exist")
}

func TestRecallAndContext(t *testing.T) {
	c := setup(t)
	c.fails("recall", map[string]any{"query": "  "}, "query is empty")
	c.fails("recall", map[string]any{"query": "tea", "kind": "animal"}, "kind \"animal\"")
	got := c.ok("recall", map[string]any{"query": "answers", "kind": "character", "k": 1})
	if !strings.Contains(got, "character_memory/brief.md") || strings.Contains(got, "likes-tea") {
		t.Errorf("recall kind=character:\n%s", got)
	}
	full := c.ok("context", nil)
	if !strings.Contains(full, "careful assistant") || !strings.Contains(full, "likes-tea") {
		t.Errorf("context:\n%s", full)
	}
	small := c.ok("context", map[string]any{"budget": 60})
	if len(small) > 60*4 || !strings.Contains(small, "truncated") {
		t.Errorf("context within 60 tokens is %d bytes:\n%s", len(small), small)
	}
	c.fails("context", map[string]any{"budget": -1}, "positive")
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	c := setup(t)
	c.fails("create", map[string]any{"path": "user_memory/x.md"}, "file_text")
	c.fails("insert", map[string]any{"path": "user_memory/likes-tea.md", "insert_line": "two", "insert_text": "x"})
	// The memory tool's single-tool form sends "command" too.
	if got := c.ok("view", map[string]any{"command": "view", "path": "/memories"}); !strings.Contains(got, "user_memory/") {
		t.Errorf("view with command: %s", got)
	}
}

func TestResourcesNotifySubscribers(t *testing.T) {
	updated := make(chan string, 10)
	rt := startRuntime(t, newRepo(t))
	c := connect(t, rt, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	ctx := context.Background()
	res, err := c.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.Name)
	}
	slices.Sort(uris)
	if want := []string{"CONTEXT.md", "character_memory.md", "user_memory.md"}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	rr, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mindmount://memory/user_memory.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "likes-tea") {
		t.Fatalf("read user_memory.md: %v %v", err, rr)
	}
	if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mindmount://memory/user_memory.md"}); err != nil {
		t.Fatal(err)
	}
	// A change made beside the server, through the tracker like a mount's.
	c.ok("create", map[string]any{"path": "user_memory/likes-coffee.md", "file_text": coffee})
	select {
	case uri := <-updated:
		if uri != "mindmount://memory/user_memory.md" {
			t.Errorf("notified of %s", uri)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no resource update notification")
	}
	rr, err = c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mindmount://memory/user_memory.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "likes-coffee") {
		t.Errorf("after the change: %v %v", err, rr)
	}
}

func TestCleanClientName(t *testing.T) {
	for in, want := range map[string]string{
		"claude-code":            "claude-code",
		"Claude Desktop":         "Claude-Desktop",
		"evil\nname <x@y>":       "evil-name-x-y",
		"../../etc":              "etc",
		"":                       "",
		strings.Repeat("a", 100): strings.Repeat("a", 40),
		"\x1b[31mred\x1b[0m":     "31mred-0m",
		"ünïcode":                "n-code",
	} {
		if got := cleanClientName(in); got != want {
			t.Errorf("cleanClientName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/memories", "/memories/user_memory/x.md", "../x", "a/../../b", ".git/config", "a/.GiT", "/etc/passwd", "a//b/./c.md", "x\x00y", "/memories//", "/memories///etc/passwd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := resolve(p)
		if err != nil {
			return
		}
		if strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsRune(rel, 0) {
			t.Fatalf("resolve(%q) = %q escapes", p, rel)
		}
		for _, el := range strings.Split(rel, "/") {
			if el == ".." || strings.EqualFold(el, ".git") {
				t.Fatalf("resolve(%q) = %q has %q", p, rel, el)
			}
		}
	})
}

// TestPrivateModes: in a private repository (core.sharedRepository=0600,
// as mindmount init makes it) the files and folders MCP creates are 0600
// and 0700 whatever the umask — a new memory, a file in new folders and a
// renamed one's new folder; a file with a secret is refused by the gate
// before anything is written.
func TestPrivateModes(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "core.sharedRepository", "0600")
	c := connect(t, startRuntime(t, dir), nil)
	c.ok("create", map[string]any{"path": "user_memory/likes-coffee.md", "file_text": coffee})
	c.ok("create", map[string]any{"path": "projects/alpha/notes.md", "file_text": "---\ndescription: Alpha notes\n---\n# Alpha\n"})
	c.ok("rename", map[string]any{"old_path": "projects/alpha/notes.md", "new_path": "archive/old/notes.md"})
	secret := "---\ndescription: Keys\n---\n# Keys\n\nThe deploy key is AKIAZ7QWERTYUIOPASDF and its secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYZ.\n"
	if text, _ := c.call("create", map[string]any{"path": "notes/keys.md", "file_text": secret}); !strings.Contains(text, "refused, nothing was written") || !strings.Contains(text, "secret found") {
		t.Fatalf("the file with a secret: %s", text)
	}
	if _, err := os.Lstat(filepath.Join(dir, "notes", "keys.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file with a secret reached the work tree: %v", err)
	}
	for rel, want := range map[string]os.FileMode{
		"user_memory/likes-coffee.md": 0o600,
		"archive/old/notes.md":        0o600,
		"projects":                    0o700,
		"projects/alpha":              0o700,
		"archive":                     0o700,
		"archive/old":                 0o700,
	} {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", rel, fi.Mode().Perm(), want)
		}
	}
	if c.committed("notes/keys.md") != "" {
		t.Error("the file with a secret was committed")
	}
}

// TestResolveTable: what each spelling of a path names inside the memory
// root, and which spellings are refused.
func TestResolveTable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/memories", "."},
		{"/memories/", "."},
		{"/memories//", "."},
		{"/memories///etc/passwd", "etc/passwd"},
		{"/memories/user_memory/x.md", "user_memory/x.md"},
		{"a//b/./c.md", "a/b/c.md"},
		{"  user_memory/x.md ", "user_memory/x.md"},
		{"/etc/passwd", ""},
		{"../x", ""},
		{"a/../../b", ""},
		{"/memories/../x", ""},
		{"a/.GiT/config", ""},
		{"x\x00y", ""},
		{"a\\b", ""},
		{"", ""},
	} {
		got, err := resolve(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("resolve(%q) = %q, want a refusal", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
