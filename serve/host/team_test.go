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

// TestTeamPrint: a worker is replaced when its user's teams, a role or a
// team's group change, and only then.
func TestTeamPrint(t *testing.T) {
	parse := func(s string) team.Config {
		c, err := team.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := parse("team eng 3001 3001\nmember eng alice read\n")
	for _, tc := range []struct {
		name, conf string
		same       bool
	}{
		{"unchanged", "team eng 3001 3001\nmember eng alice read\n", true},
		{"another user joins", "team eng 3001 3001\nmember eng alice read\nmember eng bob write\n", true},
		{"role", "team eng 3001 3001\nmember eng alice write\n", false},
		{"removed", "team eng 3001 3001\n", false},
		{"group", "team eng 3001 3009\nmember eng alice read\n", false},
		{"joins another", "team eng 3001 3001\nteam ops 3002 3002\nmember eng alice read\nmember ops alice read\n", false},
	} {
		if got := teamPrint(parse(tc.conf), "/r", "alice") == teamPrint(base, "/r", "alice"); got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
}

// TestGiveToTeam: the team's tree becomes its uid's, readable and never
// writable by its group; its inbox stays the team's and a symlink is not
// followed.
func TestGiveToTeam(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand files to another uid")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "user_memory"), 0o700)
	os.MkdirAll(filepath.Join(dir, "transcripts"), 0o700)
	os.WriteFile(filepath.Join(dir, "user_memory/a.md"), []byte("a"), 0o600)
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("o"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "user_memory/link.md"))
	if err := GiveToTeam(dir, 3001, 3001); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]os.FileMode{"": 0o750, "user_memory": 0o750, "user_memory/a.md": 0o640, "transcripts": 0o700} {
		fi, err := os.Stat(filepath.Join(dir, rel))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%q: %v %v, want %v", rel, fi.Mode().Perm(), err, want)
		}
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a symlink was followed: %v", fi.Mode().Perm())
	}
}
