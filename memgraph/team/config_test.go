package team

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     error
		members  map[string]Role // of team eng
	}{
		{"empty", "", nil, nil},
		{"comments", "# x\n\n  # y\n", nil, nil},
		{"team", "team eng\nmember eng alice write\nmember eng bob read\n", nil, map[string]Role{"alice": Write, "bob": Read}},
		{"uid", "team eng 2001 2001\nmember eng carol maintain\n", nil, map[string]Role{"carol": Maintain}},
		{"member before team", "member eng alice write\nteam eng\n", ErrBadConfig, nil},
		{"unknown role", "team eng\nmember eng alice admin\n", ErrBadConfig, nil},
		{"bad team name", "team ../x\n", ErrBadConfig, nil},
		{"bad user", "team eng\nmember eng Alice write\n", ErrBadConfig, nil},
		{"dup team", "team eng\nteam eng\n", ErrBadConfig, nil},
		{"root uid", "team eng 0 0\n", ErrBadConfig, nil},
		{"signed uid", "team eng +5 5\n", ErrBadConfig, nil},
		{"three fields", "team eng 5\n", ErrBadConfig, nil},
		{"unknown word", "owner eng alice\n", ErrBadConfig, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.in))
			if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if c.members != nil && !reflect.DeepEqual(cfg.Teams["eng"].Members, c.members) {
				t.Fatalf("members %v, want %v", cfg.Teams["eng"].Members, c.members)
			}
		})
	}
}

func TestEditAndForUser(t *testing.T) {
	var c Config
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.AddTeam("eng", 0, 0))
	must(c.AddTeam("ops", 3001, 3001))
	must(c.SetMember("eng", "alice", Write))
	must(c.SetMember("ops", "alice", Read))
	must(c.SetMember("eng", "bob", Propose))
	if err := c.AddTeam("eng", 0, 0); !errors.Is(err, ErrExists) {
		t.Fatalf("second add: %v", err)
	}
	if err := c.SetMember("nope", "bob", Read); !errors.Is(err, ErrUnknownTeam) {
		t.Fatalf("member of unknown team: %v", err)
	}
	if err := c.SetMember("eng", "bob", "owner"); !errors.Is(err, ErrBadRole) {
		t.Fatalf("bad role: %v", err)
	}
	got := c.ForUser("/srv", "alice")
	want := []Attachment{{"eng", "/srv/teams/eng", Write}, {"ops", "/srv/teams/ops", Read}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("alice: %v, want %v", got, want)
	}
	if got := c.ForUser("/srv", "carol"); len(got) != 0 {
		t.Fatalf("carol belongs to %v", got)
	}
	must(c.RemoveMember("eng", "alice"))
	if err := c.RemoveMember("eng", "alice"); !errors.Is(err, ErrNotMember) {
		t.Fatalf("second removal: %v", err)
	}
	again, err := Parse(c.Format())
	must(err)
	if !bytes.Equal(again.Format(), c.Format()) {
		t.Fatalf("format does not round-trip:\n%s", c.Format())
	}
	must(c.RemoveTeam("eng"))
	if got := c.ForUser("/srv", "bob"); len(got) != 0 {
		t.Fatalf("bob still in %v", got)
	}
}

func TestRoles(t *testing.T) {
	for _, c := range []struct {
		r                         Role
		mutates, commits, approve bool
	}{
		{Read, false, false, false},
		{Propose, true, false, false},
		{Write, true, true, false},
		{Maintain, true, true, true},
		{"", false, false, false},
	} {
		if c.r.Mutates() != c.mutates || c.r.Commits() != c.commits || c.r.Approves() != c.approve {
			t.Errorf("%q: mutates %v commits %v approves %v", c.r, c.r.Mutates(), c.r.Commits(), c.r.Approves())
		}
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"eng": true, "a.b_c-d": true, "0x": true,
		"": false, ".": false, "..": false, "-x": false, "a/b": false, "A": false, "a\x00": false,
		string(make([]byte, 65)): false,
	} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", name, err, ok)
		}
	}
}

// TestLoadRefusesUnsafe: a configuration only root may write is read; one
// another user owns, or anyone else may write, is refused outright.
func TestLoadRefusesUnsafe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own the file")
	}
	root := t.TempDir()
	p := filepath.Join(root, ConfigFile)
	if c, err := Load(root); err != nil || len(c.Teams) != 0 {
		t.Fatalf("missing file: %v %v", c, err)
	}
	if err := os.WriteFile(p, []byte("team eng\nmember eng alice write\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(root); err != nil || c.Teams["eng"].Members["alice"] != Write {
		t.Fatalf("root's file: %v %v", c, err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		undo func() error
	}{
		{"group-writable", func() error { return os.Chmod(p, 0o664) }, func() error { return os.Chmod(p, 0o644) }},
		{"world-writable", func() error { return os.Chmod(p, 0o646) }, func() error { return os.Chmod(p, 0o644) }},
		{"a user's", func() error { return os.Chown(p, 1234, 0) }, func() error { return os.Chown(p, 0, 0) }},
		{"a symlink", func() error {
			if err := os.Rename(p, p+".real"); err != nil {
				return err
			}
			return os.Symlink(p+".real", p)
		}, func() error { os.Remove(p); return os.Rename(p+".real", p) }},
	} {
		if err := c.do(); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(root); err == nil {
			t.Errorf("%s file accepted", c.name)
		}
		if err := c.undo(); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "team eng\nmember eng alice write\n", "team a 1 2\nmember a b maintain\n#x", "member x y z", "team \xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		// What parses formats to something that parses to itself.
		again, err := Parse(c.Format())
		if err != nil {
			t.Fatalf("formatted config does not parse: %v\n%s", err, c.Format())
		}
		if !bytes.Equal(again.Format(), c.Format()) {
			t.Fatalf("format not stable:\n%s\n%s", c.Format(), again.Format())
		}
		for _, tm := range c.Teams {
			if ValidName(tm.Name) != nil {
				t.Fatalf("invalid team name %q accepted", tm.Name)
			}
			for u, r := range tm.Members {
				if ValidName(u) != nil {
					t.Fatalf("invalid user %q accepted", u)
				}
				if _, err := ParseRole(string(r)); err != nil {
					t.Fatalf("role %q accepted", r)
				}
			}
		}
	})
}

func TestAttached(t *testing.T) {
	git := t.TempDir()
	dir := LaptopDir(git)
	for _, n := range []string{"eng", "ops", "Bad", "half"} {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if n != "half" {
			os.Mkdir(filepath.Join(dir, n, ".git"), 0o755)
		}
	}
	os.WriteFile(RoleFile(git, "eng"), []byte("write\n"), 0o644)
	os.WriteFile(RoleFile(git, "ops"), []byte("propose\n"), 0o644)
	got, err := Attached(git)
	if err != nil {
		t.Fatal(err)
	}
	want := []Attachment{{"eng", filepath.Join(dir, "eng"), Write}, {"ops", filepath.Join(dir, "ops"), Propose}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attached %v, want %v", got, want)
	}
	for role, want := range map[string]Role{"maintain\n": Maintain, "owner\n": Read, "": Read} {
		os.WriteFile(RoleFile(git, "ops"), []byte(role), 0o644) // unknown or empty: read
		if got, _ := Attached(git); got[1].Role != want {
			t.Fatalf("role file %q: %s, want %s", role, got[1].Role, want)
		}
	}
	if got[0].Scope() != "shared/eng" {
		t.Fatalf("scope %q", got[0].Scope())
	}
	if got, err := Attached(t.TempDir()); err != nil || got != nil {
		t.Fatalf("none: %v %v", got, err)
	}
}
