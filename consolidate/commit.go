package consolidate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// commit records the planned files and the cursor as one commit on the
// run's dream (dream.go).
func (s *chunkRun) commit(out *outcome, next *Cursor) (string, error) {
	rels := make([]string, 0, len(out.files)+len(out.skills))
	for rel := range out.files {
		rels = append(rels, rel)
	}
	for rel := range out.skills {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	subject := fmt.Sprintf("consolidate %s: %s", s.src, counts(out.added, out.updated, out.contradicted, out.unchanged, out.skipped))
	next.Last = &LastRun{Message: s.message(subject, rels, out), Files: rels}
	changes := make([]gitrepo.Change, 0, len(rels)+1)
	for _, rel := range rels {
		if f, ok := out.skills[rel]; ok {
			changes = append(changes, gitrepo.Change{Path: rel, Data: f.data, Exec: f.exec})
			continue
		}
		changes = append(changes, gitrepo.Change{Path: rel, Data: out.files[rel].Render()})
	}
	changes = append(changes, gitrepo.Change{Path: CursorFile, Data: next.Render()})
	hash, err := s.c.commitDream(s.d, changes, next.Last.Message, s.now)
	if err != nil {
		return "", fmt.Errorf("committing %s on %s: %w", s.src, s.d.branch, err)
	}
	return hash, nil
}

// message is the commit message: the subject, the files, what was skipped,
// and trailers naming the model and the source range.
func (s *chunkRun) message(subject string, rels []string, out *outcome) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	for _, rel := range rels {
		b.WriteString("  " + rel + "\n")
	}
	if len(out.problems) > 0 {
		b.WriteString("\nskipped:\n")
		for _, p := range out.problems {
			b.WriteString("  " + oneLineText(redacted(p), 200) + "\n")
		}
	}
	if len(rels) > 0 || len(out.problems) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Mindmount-Model: %s/%s\nMindmount-Source: %s\n", s.c.p.Name(), s.c.p.Model(), s.src)
	if s.prov != "" {
		fmt.Fprintf(&b, "Mindmount-Transcript: %s\n", s.prov)
	}
	if s.origin != nil {
		b.WriteString(s.origin.trailer())
	}
	fmt.Fprintf(&b, "Mindmount-Dream: %s\n", s.d.branch)
	return b.String()
}
