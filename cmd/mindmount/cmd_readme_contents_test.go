package main

import (
	"os"
	"path/filepath"
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

// headings returns the anchors of a markdown text's headings of the given
// level ("## "), or of every level when level is "", outside fenced code.
func headings(text, level string) []string {
	var out []string
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		marks, h, ok := strings.Cut(l, " ")
		if !ok || strings.Trim(marks, "#") != "" || (level != "" && marks+" " != level) {
			continue
		}
		out = append(out, githubAnchor(h))
	}
	return out
}

// docsPages returns docs/*.md, relative to the repository's root, sorted.
func docsPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		pages[i], _ = filepath.Rel(root, p)
	}
	slices.Sort(pages)
	return pages
}

// TestReadmeContents: README's map lists every section of the front page
// and every page under docs/, one page a line; the "Compared with" table
// names the systems a newcomer weighs mindmount against; the Go install
// pointer is there; the front page stays short.
func TestReadmeContents(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, toc, ok := strings.Cut(string(data), "\n## Contents\n")
	if !ok {
		t.Fatal("README has no ## Contents")
	}
	toc, _, _ = strings.Cut(toc, "\n## ")
	for _, s := range headings(string(data), "## ") {
		if s != "contents" && !strings.Contains(toc, "(#"+s+")") {
			t.Errorf("the Contents do not link the section #%s", s)
		}
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^- \[[^\]]+\]\((docs/[^)#]+\.md)\)`).FindAllStringSubmatch(toc, -1) {
		listed = append(listed, m[1])
	}
	for _, p := range docsPages(t, "../..") {
		if !slices.Contains(listed, p) {
			t.Errorf("the Contents have no line \"- [Title](%s)…\"", p)
		}
	}
	if n := strings.Count(string(data), "\n"); n > 320 {
		t.Errorf("README.md has %d lines: the front page stays at about 300, the rest goes to docs/", n)
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

// TestDocsLinks: every relative link of README.md and docs/*.md leads to a
// file that exists and, when it names an anchor, to a heading there.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range append([]string{"README.md"}, docsPages(t, root)...) {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(root, page)
			if file != "" {
				path = filepath.Join(filepath.Dir(path), file)
			}
			if rel, err := filepath.Rel(root, path); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %s leaves the repository", page, target)
				continue
			}
			linked, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(headings(string(linked), ""), anchor) {
				t.Errorf("%s: link %s: no heading #%s there", page, target, anchor)
			}
		}
	}
}

// withoutCode blanks fenced code blocks and inline code spans, where a
// "](…)" is text, not a link.
func withoutCode(text string) string {
	var b strings.Builder
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			b.WriteString("\n")
			continue
		}
		if !inCode {
			b.WriteString(regexp.MustCompile("`[^`]*`").ReplaceAllString(l, "``"))
		}
		b.WriteString("\n")
	}
	return b.String()
}
