package host

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mindmount/mindmount/memgraph/team"
)

// TestTeamGroups: a worker keeps the groups of its user's teams, and none
// when the configuration is not root's alone.
func TestTeamGroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own the configuration")
	}
	root := t.TempDir()
	conf := filepath.Join(root, team.ConfigFile)
	os.WriteFile(conf, []byte("team ops 3002 3002\nteam eng 3001 3001\nmember eng alice read\nmember ops alice write\nmember eng bob write\n"), 0o644)
	for user, want := range map[string][]uint32{"alice": {3001, 3002}, "bob": {3001}, "carol": nil} {
		got, err := TeamGroups(root, user)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v %v, want %v", user, got, err, want)
		}
	}
	os.Chmod(conf, 0o666)
	if got, err := TeamGroups(root, "alice"); err == nil || got != nil {
		t.Fatalf("a writable configuration gave %v", got)
	}
}
