package tracker

import "testing"

func TestMessage(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		msg     string
		author  string
	}{
		{
			name:    "one update",
			entries: []entry{{op: opModify, path: "user_memory/likes-tea.md", writer: "agent"}},
			msg:     "agent: update user_memory/likes-tea.md\n\nM user_memory/likes-tea.md\n",
			author:  "agent",
		},
		{
			name:    "one add",
			entries: []entry{{op: opAdd, path: "user_memory/a.md", writer: "editor"}},
			msg:     "editor: add user_memory/a.md\n\nA user_memory/a.md\n",
			author:  "editor",
		},
		{
			name:    "one rename",
			entries: []entry{{op: opRename, from: "user_memory/a.md", path: "user_memory/b.md", writer: "agent"}},
			msg:     "agent: rename user_memory/a.md -> user_memory/b.md\n\nR user_memory/a.md -> user_memory/b.md\n",
			author:  "agent",
		},
		{
			name:    "one remove",
			entries: []entry{{op: opDelete, path: "notes/x.md", writer: "agent"}},
			msg:     "agent: remove notes/x.md\n\nD notes/x.md\n",
			author:  "agent",
		},
		{
			name: "burst sorted by kind then path",
			entries: []entry{
				{op: opDelete, path: "a.md", writer: "agent"},
				{op: opModify, path: "z.md", writer: "agent"},
				{op: opAdd, path: "y.md", writer: "agent"},
				{op: opAdd, path: "b.md", writer: "agent"},
				{op: opRename, from: "c.md", path: "d.md", writer: "agent"},
			},
			msg:    "agent: 5 changes\n\nA b.md\nA y.md\nM z.md\nR c.md -> d.md\nD a.md\n",
			author: "agent",
		},
		{
			name: "several writers: most frequent authors, all named",
			entries: []entry{
				{op: opModify, path: "a.md", writer: "editor"},
				{op: opModify, path: "b.md", writer: "agent"},
				{op: opAdd, path: "c.md", writer: "agent"},
			},
			msg:    "agent, editor: 3 changes\n\nA c.md (agent)\nM a.md (editor)\nM b.md (agent)\n",
			author: "agent",
		},
		{
			name:    "control characters quoted",
			entries: []entry{{op: opAdd, path: "notes/a\nb.md", writer: "agent"}},
			msg:     "agent: add \"notes/a\\nb.md\"\n\nA \"notes/a\\nb.md\"\n",
			author:  "agent",
		},
		{
			name: "tie goes to the first writer",
			entries: []entry{
				{op: opModify, path: "a.md", writer: "editor"},
				{op: opModify, path: "b.md", writer: "agent"},
			},
			msg:    "editor, agent: 2 changes\n\nM a.md (editor)\nM b.md (agent)\n",
			author: "editor",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, author := message(tt.entries)
			if msg != tt.msg {
				t.Errorf("message:\n%s\nwant:\n%s", msg, tt.msg)
			}
			if author != tt.author {
				t.Errorf("author = %q, want %q", author, tt.author)
			}
		})
	}
	if msg, author := message(nil); msg != "" || author != "" {
		t.Errorf("message(nil) = %q, %q", msg, author)
	}
}

func TestAddTrailers(t *testing.T) {
	tests := []struct {
		name      string
		msg, user string
		sandboxes []string
		want      string
	}{
		{"nothing to add", "agent: add a.md\n\nA a.md\n", "", nil, "agent: add a.md\n\nA a.md\n"},
		{"user", "agent: add a.md\n\nA a.md\n", "alice", nil, "agent: add a.md\n\nA a.md\n\nMindmount-User: alice\n"},
		{"user and sandboxes", "m\n", "alice", []string{"bwrap[1]", "bwrap[2]"}, "m\n\nMindmount-User: alice\nMindmount-Sandbox: bwrap[1]\nMindmount-Sandbox: bwrap[2]\n"},
		{"sandbox only", "m", "", []string{"bwrap[1]"}, "m\n\nMindmount-Sandbox: bwrap[1]\n"},
		{"user kept on one line", "m", "al\nice", nil, "m\n\nMindmount-User: \"al\\nice\"\n"},
	}
	for _, tt := range tests {
		if got := addTrailers(tt.msg, tt.user, tt.sandboxes); got != tt.want {
			t.Errorf("%s: addTrailers = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRecoveryMessage(t *testing.T) {
	got := recoveryMessage("mindmount: recover 2 uncommitted changes", []entry{
		{op: opModify, path: "user_memory/b.md", writer: "mindmount"},
		{op: opRename, from: "x.md", path: "y.md", writer: "mindmount"},
	})
	want := "mindmount: recover 2 uncommitted changes\n\nM user_memory/b.md\nR x.md -> y.md\n"
	if got != want {
		t.Errorf("recoveryMessage = %q, want %q", got, want)
	}
}

// TestQuote: a path with any character mindmount counts as a control
// (memgraph.IsControl) is Go-quoted in a commit message, so it cannot
// start a new line or trailer there; other names are written as they are.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"user_memory/likes-tea.md", "user_memory/likes-tea.md"},
		{"user_memory/café.md", "user_memory/café.md"},
		{"user_memory/a\nMindmount-User: x.md", `"user_memory/a\nMindmount-User: x.md"`},
		{"user_memory/\x1b[31mred.md", `"user_memory/\x1b[31mred.md"`},
		{"user_memory/line\u2028sep.md", `"user_memory/line\u2028sep.md"`},
		{"user_memory/c1\u0085.md", `"user_memory/c1\u0085.md"`},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
