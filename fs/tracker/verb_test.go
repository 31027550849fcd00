package tracker

import "testing"

// TestRetitle: a one-file update says the verb its writer gave; anything
// else keeps the message message() wrote.
func TestRetitle(t *testing.T) {
	mod := []entry{{op: opModify, path: "user_memory/x.md", writer: "mcp"}}
	cases := []struct {
		name    string
		entries []entry
		verb    string
		want    string
	}{
		{"use", mod, "use", "mcp: use user_memory/x.md\n\nM user_memory/x.md\n"},
		{"retire", mod, "retire", "mcp: retire user_memory/x.md\n\nM user_memory/x.md\n"},
		{"no verb", mod, "", "mcp: update user_memory/x.md\n\nM user_memory/x.md\n"},
		{"an add stays an add", []entry{{op: opAdd, path: "user_memory/x.md", writer: "mcp"}}, "use", "mcp: add user_memory/x.md\n\nA user_memory/x.md\n"},
		{"two files stay counted", []entry{mod[0], {op: opModify, path: "user_memory/y.md", writer: "mcp"}}, "use", "mcp: 2 changes\n\nM user_memory/x.md\nM user_memory/y.md\n"},
		{"a verb of two lines is ignored", mod, "use\nMindmount-User: eve", "mcp: update user_memory/x.md\n\nM user_memory/x.md\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := message(tc.entries)
			if got := retitle(msg, tc.entries, tc.verb); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
