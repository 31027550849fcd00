package github

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// Marker is hidden in the body of mindmount's recall comment: a new run
// edits the comment that holds it instead of posting another.
const Marker = "<!-- mindmount:recall -->"

// Query is recall's question for a new pull request or issue: its title,
// body and the words of the paths it changes ("internal/cache/sqlite.go"
// asks for "internal cache sqlite go").
func Query(it Item) string {
	parts := []string{it.Title, it.Body}
	for _, p := range it.Paths {
		parts = append(parts, strings.Join(strings.FieldsFunc(p, func(r rune) bool {
			return r == '/' || r == '.' || r == '_' || r == '-'
		}), " "))
	}
	return memgraph.ClipLine(strings.Join(strings.Fields(strings.Join(parts, "\n")), " "), 4000)
}

// DefaultMinScore is the least recall score a memory needs to be
// commented on a new pull request or issue.
const DefaultMinScore = 1.0

// Relevant keeps the active hits scoring at least min, at most k of them.
func Relevant(hits []recall.Hit, min float64, k int) []recall.Hit {
	var out []recall.Hit
	for _, h := range hits {
		if h.Status != "" && h.Status != string(memgraph.StatusActive) {
			continue
		}
		if h.Score < min || len(out) >= k {
			continue
		}
		out = append(out, h)
	}
	return out
}

// Links says where a comment points: the web address of the repository
// (memory files link into its memory branch).
type Links struct {
	Server      string // "https://github.com"
	Owner, Repo string
}

// file is the web address of a memory file on the memory branch.
func (l Links) file(rel string) string {
	u := strings.TrimSuffix(l.Server, "/") + "/" + url.PathEscape(l.Owner) + "/" + url.PathEscape(l.Repo) + "/blob/" + MemoryBranch + "/"
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return u + strings.Join(parts, "/")
}

// Comment is the body of the recall comment for hits (Relevant's), each
// with its source as source lines name it (sources: path -> source line).
func Comment(hits []recall.Hit, sources map[string]string, l Links) string {
	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("**From this project's memory** — decisions and conventions that may bear on this:\n\n")
	for _, h := range hits {
		desc := mdText(memgraph.ClipLine(memgraph.SafeLine(h.Description), 200))
		fmt.Fprintf(&b, "- **%s** — [%s](%s)", desc, mdText(path.Base(h.Path)), l.file(h.Path))
		if src := sourceLink(sources[h.Path]); src != "" {
			b.WriteString(" · from " + src)
		}
		if s := strings.TrimSpace(h.Snippet); s != "" {
			fmt.Fprintf(&b, "\n  > %s", mdText(memgraph.ClipLine(memgraph.SafeLine(s), 300)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n<sub>mindmount recalls only active memories; a superseded decision is not shown. This comment is edited, not repeated, when the pull request or issue changes.</sub>\n")
	return b.String()
}

// sourceLink renders a source line ("PR#231 https://… merge abc1234") as
// a link to where it came from, or its label alone.
func sourceLink(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	label := mdText(fields[0])
	for _, f := range fields[1:] {
		if u, err := url.Parse(f); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			return "[" + label + "](" + u.String() + ")"
		}
	}
	return label
}

// mdText escapes what markdown or HTML would read in a memory's words: a
// memory cannot add a link, an image, a mention or markup to the comment.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "[", "\\[", "]", "\\]", "(", "\\(", ")", "\\)", "<", "&lt;", ">", "&gt;",
		"*", "\\*", "_", "\\_", "`", "\\`", "!", "\\!", "@", "@\u200b", "#", "\\#", "|", "\\|")
	return r.Replace(s)
}
