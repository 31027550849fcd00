package mount

import (
	"os"
	"strings"
	"testing"
)

func TestReadThrough(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	if got, want := tm.read("user.md"), "The user is Ada."; !strings.Contains(got, want) {
		t.Errorf("user.md = %q, want it to contain %q", got, want)
	}
	ents, err := os.ReadDir(tm.mnt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, want := range []string{"user.md", "character.md", "user_memory", "user_memory.md", "character_memory.md", "CONTEXT.md", ".git", ".mindmount"} {
		if !contains(names, want) {
			t.Errorf("root listing %v lacks %s", names, want)
		}
	}
	if got := tm.read("user_memory.md"); !strings.Contains(got, "likes-tea") {
		t.Errorf("user_memory.md = %q, want likes-tea", got)
	}
	if got := tm.read("CONTEXT.md"); !strings.Contains(got, "careful assistant") {
		t.Errorf("CONTEXT.md lacks the character:\n%s", got)
	}
	if got := tm.read(".mindmount/status"); !strings.Contains(got, "invalid files: none") {
		t.Errorf(".mindmount/status = %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestReadAfterWrite(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	// Prime the kernel's caches of the synthesized files.
	before := tm.read("user_memory.md")
	ctxBefore := tm.read("CONTEXT.md")
	if strings.Contains(before, "likes-coffee") {
		t.Fatal("index already lists likes-coffee")
	}
	tm.write("user_memory/likes-coffee.md", memoryFile("Likes Coffee", "Enjoys Ethiopian coffee", "You enjoy Ethiopian coffee."))
	if got := tm.read("user_memory.md"); !strings.Contains(got, "likes-coffee") {
		t.Errorf("user_memory.md right after the write lacks likes-coffee:\n%s", got)
	}
	if got := tm.read("CONTEXT.md"); got == ctxBefore || !strings.Contains(got, "Ethiopian") {
		t.Errorf("CONTEXT.md right after the write lacks the new memory:\n%s", got)
	}
	fi, err := os.Stat(tm.p("user_memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if int(fi.Size()) != len(tm.read("user_memory.md")) {
		t.Errorf("stat size %d != content length %d", fi.Size(), len(tm.read("user_memory.md")))
	}
	if err := os.Remove(tm.p("user_memory/likes-coffee.md")); err != nil {
		t.Fatal(err)
	}
	if got := tm.read("user_memory.md"); strings.Contains(got, "likes-coffee") {
		t.Errorf("user_memory.md still lists a removed memory:\n%s", got)
	}
	tm.settle()
	tm.clean()
}
