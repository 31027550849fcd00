package host

import (
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// FuzzParseTeamChange: any line is a known change of a path git can hold
// with a blob-id-shaped base, or an error; never a panic.
func FuzzParseTeamChange(f *testing.F) {
	for _, s := range []string{
		`{"op":"put","path":"user_memory/a.md","base":"` + gitrepo.BlobID([]byte("x")) + `","data":"eA=="}`,
		`{"op":"remove","path":"user_memory/a.md"}`,
		`{"op":"put","path":"../etc/passwd"}`,
		`{"op":"put","path":"/abs"}`,
		`{"op":"chmod","path":"a"}`,
		`{"op":"put","path":".git/config"}`,
		`not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := parseTeamChange(line)
		if err != nil {
			return
		}
		if c.Op != TeamPut && c.Op != TeamRemove {
			t.Fatalf("accepted op %q", c.Op)
		}
		if gitrepo.CheckPath(c.Path) != nil {
			t.Fatalf("accepted path %q", c.Path)
		}
		if c.Base != "" && len(c.Base) != 40 {
			t.Fatalf("accepted base %q", c.Base)
		}
	})
}
