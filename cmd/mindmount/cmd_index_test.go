package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16.2: "mindmount index" keeps the same budget as the mount's and watch
// mode's indexes — index_tokens from .mindmount/settings, --max-tokens over
// it, the footer naming the full listing — and --all prints every memory.
func TestIndexCommandBudget(t *testing.T) {
	files := map[string]string{"user.md": "# User\n"}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("user_memory/m-%02d.md", i)] = fmt.Sprintf("---\ndescription: Memory number %d about something\n---\n# M\n\n## Fact\nx\n", i)
	}
	dir := mgRepo(t, files)
	footer := func(out string) string {
		_, f, _ := strings.Cut(out, "\n<!-- mindmount: index cut at its budget of ")
		return f
	}
	all, _, code := mgRun("index", dir, "--all")
	if code != 0 || strings.Count(all, "\n- user_memory/") != 60 || footer(all) != "" {
		t.Fatalf("--all: exit %d, %d lines\n%s", code, strings.Count(all, "\n- user_memory/"), all)
	}
	// The default budget holds 60 short lines: no cut.
	if out, _, _ := mgRun("index", dir); out != all {
		t.Errorf("index within the default budget differs from --all:\n%s", out)
	}
	out, _, code := mgRun("index", dir, "--max-tokens", "150")
	shown := strings.Count(out, "\n- user_memory/")
	if code != 0 || len(out) > 150*4 || shown == 0 || shown >= 60 {
		t.Fatalf("--max-tokens 150: exit %d, %d bytes, %d shown\n%s", code, len(out), shown, out)
	}
	want := fmt.Sprintf("150 tokens -->\n… %d more user memories not shown. All of them: .mindmount/index/user_memory.md; the files: ls user_memory/; search: cat .mindmount/search/<words>\n", 60-shown)
	if got := footer(out); got != want {
		t.Errorf("footer %q, want %q", got, want)
	}
	if body, _, _ := strings.Cut(out, "\n<!-- mindmount:"); !strings.HasPrefix(all, body) {
		t.Errorf("the cut index is not the top of the full listing")
	}
	// The settings file sets the budget; the flag overrides it.
	if err := os.MkdirAll(filepath.Join(dir, ".mindmount"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mindmount", "settings"), []byte("index_tokens: 200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := mgRun("index", dir); !strings.HasPrefix(footer(out), "200 tokens -->") || len(out) > 200*4 {
		t.Errorf("index_tokens: 200 in .mindmount/settings not applied (%d bytes):\n%s", len(out), out)
	}
	if out, _, _ := mgRun("index", dir, "--max-tokens", "150"); !strings.HasPrefix(footer(out), "150 tokens -->") {
		t.Errorf("--max-tokens does not override the settings file:\n%s", out)
	}
	if out, _, _ := mgRun("index", dir, "--all"); out != all {
		t.Errorf("--all is cut by the settings file")
	}
	// A bad settings file: the default applies (mindmount check reports it).
	if err := os.WriteFile(filepath.Join(dir, ".mindmount", "settings"), []byte("index_tokens: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := mgRun("index", dir); out != all {
		t.Errorf("an invalid index_tokens changed the budget:\n%s", out)
	}
	if out, _, code := mgRun("check", dir); code == 0 || !strings.Contains(out, ".mindmount/settings:1: index_tokens must be a whole number of tokens from 100 to 1000000") {
		t.Errorf("mindmount check on a bad settings file: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--max-tokens", "-1"}, {"--max-tokens", "100", "--all"}} {
		if _, errs, code := mgRun(append([]string{"index", dir}, bad...)...); code == 0 || !strings.Contains(errs, "give one of --max-tokens N") {
			t.Errorf("index %v: exit %d %q", bad, code, errs)
		}
	}
}
