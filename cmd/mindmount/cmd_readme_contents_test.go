package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// githubAnchor is the anchor GitHub gives a heading: lower-case, letters,
// digits, spaces (as "-"), "-" and "_" kept, everything else dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestReadmeContents (issue 27): README's table of contents lists every
// section and each entry leads to one; the "Compared with" table names the
// systems a newcomer weighs mindmount against; the Go install pointer is
// there.
func TestReadmeContents(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	inCode := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
		}
		if h, ok := strings.CutPrefix(l, "## "); ok && !inCode && h != "Contents" {
			sections = append(sections, githubAnchor(h))
		}
	}
	_, toc, ok := strings.Cut(string(data), "\n## Contents\n")
	if !ok {
		t.Fatal("README has no ## Contents")
	}
	toc, _, _ = strings.Cut(toc, "\n## ")
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^- \[[^\]]+\]\(#([^)]+)\)$`).FindAllStringSubmatch(toc, -1) {
		listed = append(listed, m[1])
	}
	if !slices.Equal(listed, sections) {
		t.Errorf("the table of contents lists\n  %q\nthe sections are\n  %q", listed, sections)
	}
	_, cmp, _ := strings.Cut(string(data), "\n## Compared with\n")
	cmp, _, _ = strings.Cut(cmp, "\n## ")
	for _, name := range []string{"mindmount", "viral-git-agent-memory", "Letta", "gitmemory", "Mem0", "basic-memory", "claude-mem"} {
		if !strings.Contains(cmp, "| **"+name) {
			t.Errorf("the Compared with table has no row for %s", name)
		}
	}
	if !strings.Contains(string(data), "(https://go.dev/doc/install)") {
		t.Error("README does not point at Go's install page")
	}
}
