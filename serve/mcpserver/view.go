package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/memgraph"
)

// view shows a file with line numbers or lists a directory.
func (s *server) view(ctx context.Context, req *mcp.CallToolRequest, in viewArgs) (*mcp.CallToolResult, any, error) {
	rel, err := resolve(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if data, ok := s.synthesized(rel); ok {
		text, err := numbered(rel, data, in.ViewRange)
		if err != nil {
			return nil, nil, err
		}
		return textResult(text), nil, nil
	}
	if rel == "." || s.tree.isDir(rel) {
		text, err := s.listing(rel)
		if err != nil {
			return nil, nil, err
		}
		return textResult(text), nil, nil
	}
	data, ok, err := s.tree.read(rel)
	switch {
	case errors.Is(err, errSymlink):
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	case err != nil:
		return nil, nil, fmt.Errorf("cannot read %s: %v", rel, err)
	case !ok:
		return nil, nil, fmt.Errorf("%s does not exist; view %s lists what there is", rel, parentOf(rel))
	}
	text, err := numbered(rel, data, in.ViewRange)
	if err != nil {
		return nil, nil, err
	}
	s.g.RecordSkillUse(rel) // a skill's SKILL.md read is a use of it
	return textResult(text), nil, nil
}

// synthesized renders the views the mount makes up on read.
func (s *server) synthesized(rel string) ([]byte, bool) {
	switch rel {
	case memgraph.UserIndexFile:
		return s.g.Index(memgraph.KindUser), true
	case memgraph.CharIndexFile:
		return s.g.Index(memgraph.KindCharacter), true
	case memgraph.FullIndexPath(memgraph.KindUser): // named by a cut index's footer
		return s.g.FullIndex(memgraph.KindUser), true
	case memgraph.FullIndexPath(memgraph.KindCharacter):
		return s.g.FullIndex(memgraph.KindCharacter), true
	case memgraph.ContextFile:
		return s.g.Context(memgraph.ContextOptions{}), true
	case memgraph.StatusFile:
		return s.tr.Status(), true
	}
	return nil, false
}

func parentOf(rel string) string {
	if i := strings.LastIndex(rel, "/"); i > 0 {
		return shown(rel[:i])
	}
	return rootAlias
}

// numbered renders data with right-aligned line numbers and a tab, as the
// memory tool does, limited to view_range when given.
func numbered(rel string, data []byte, vr []int) (string, error) {
	text := strings.TrimSuffix(string(data), "\n")
	lines := strings.Split(text, "\n")
	if text == "" {
		lines = nil
	}
	first, last := 1, len(lines)
	if len(vr) > 0 {
		if len(vr) != 2 {
			return "", errors.New("view_range takes two numbers: [first, last], last -1 for the end")
		}
		first, last = vr[0], vr[1]
		if last == -1 {
			last = len(lines)
		}
		if first < 1 || first > len(lines) || last < first || last > len(lines) {
			return "", fmt.Errorf("view_range %v is outside %s, which has %d lines; use [1, %d]", vr, rel, len(lines), max(len(lines), 1))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d lines):\n", shown(rel), len(lines))
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return b.String(), nil
}

// listing lists a directory: sub-directories, then files with each
// memory's description, use count and status.
func (s *server) listing(rel string) (string, error) {
	ents, err := s.tree.list(rel)
	if errors.Is(err, errSymlink) {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	if err != nil {
		return "", fmt.Errorf("cannot list %s: %v", rel, err)
	}
	var dirs, files []string
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // .git, .mindmount, editor locks
		}
		seen[name] = true
		if e.IsDir() {
			dirs = append(dirs, name)
		} else {
			files = append(files, name)
		}
	}
	if rel == "." {
		// The generated views, present on disk in watch mode only.
		for _, n := range []string{memgraph.UserIndexFile, memgraph.CharIndexFile, memgraph.ContextFile} {
			if !seen[n] {
				files = append(files, n)
			}
		}
	}
	sort.Strings(dirs)
	sort.Strings(files)
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", shown(rel))
	for _, d := range dirs {
		fmt.Fprintf(&b, "  %s/\n", memgraph.SafeLine(d))
	}
	for _, f := range files {
		p := f
		if rel != "." {
			p = rel + "/" + f
		}
		b.WriteString("  " + memgraph.SafeLine(f) + s.describe(p) + "\n")
	}
	if len(dirs)+len(files) == 0 {
		b.WriteString("  (empty)\n")
	}
	return b.String(), nil
}

// describe is a listing's note on one file.
func (s *server) describe(rel string) string {
	if memgraph.IsSynthesized(rel) {
		return " — generated view"
	}
	m := s.g.Get(rel)
	if m == nil {
		if memgraph.IsMemoryPath(rel) {
			for _, p := range s.g.Problems() {
				if p.Path == rel {
					return " — INVALID: " + memgraph.SafeLine(p.String())
				}
			}
		}
		return ""
	}
	note := ""
	if m.Front.Description != "" {
		note = " — " + memgraph.SafeLine(m.Front.Description)
	}
	note += fmt.Sprintf(" (%d %s", m.Uses, memgraph.Plural(m.Uses, "use", "uses"))
	if !m.Active() {
		note += ", " + string(m.Front.Status)
	}
	if m.Front.ReadOnly {
		note += ", read_only"
	}
	return note + ")"
}
