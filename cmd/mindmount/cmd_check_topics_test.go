package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsTopicConflicts: two active memories sharing a topic that
// had retirements are a warning on stderr, not a failure (issue 15).
func TestCheckWarnsTopicConflicts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	for rel, status := range map[string]string{
		"user_memory/lives-in-porto.md":  "contradicted",
		"user_memory/lives-in-lisbon.md": "active",
		"user_memory/lives-in-braga.md":  "active",
	} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := "---\ndescription: " + rel + "\nstatus: " + status + "\ntopic: home-city\n---\n# T\n"
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"check", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	if w := errOut.String(); !strings.Contains(w, `warning: user memories share the topic "home-city"`) ||
		!strings.Contains(w, "user_memory/lives-in-braga.md, user_memory/lives-in-lisbon.md") {
		t.Fatalf("stderr %q", w)
	}
	if !strings.Contains(out.String(), "all valid") {
		t.Fatalf("stdout %q", out.String())
	}
}
