package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCgroupsConfine: a process confined for a user sits in that user's
// group of every hierarchy, whose bounds are written; Remove leaves no
// group behind once the process is gone.
func TestCgroupsConfine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	c := Cgroups{Root: "/sys/fs/cgroup", Name: fmt.Sprintf("mindmount-test-%d", os.Getpid()), Memory: 256 << 20, Pids: 64, CPU: 0.5}
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait(); c.Remove() }()
	err := c.Confine("alice", sleep.Process.Pid)
	if errors.Is(err, ErrNoCgroups) {
		t.Skipf("this host has no writable cgroups: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	own, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(own), "/"+c.Name+"/alice\n") {
		t.Fatalf("the process is not in alice's group:\n%s", own)
	}
	want := map[string]string{"pids.max": "64"}
	if c.v2() {
		want["memory.max"], want["cpu.max"] = "268435456", "50000 100000"
	} else {
		want["memory.limit_in_bytes"], want["cpu.cfs_quota_us"], want["cpu.cfs_period_us"] = "268435456", "50000", "100000"
	}
	groups, err := c.groups("alice")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for name := range g.limits {
			b, err := os.ReadFile(filepath.Join(g.dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != want[name] {
				t.Errorf("%s/%s = %q, want %q", g.dir, name, got, want[name])
			}
			seen[name] = true
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("bound %s was not written", name)
		}
	}
	sleep.Process.Kill()
	sleep.Wait()
	c.Remove()
	for _, p := range c.parents() {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left behind: %v", p, err)
		}
	}
}

// TestCgroupsRefuseNames: a user name never makes a path outside the
// parent group.
func TestCgroupsRefuseNames(t *testing.T) {
	c := Cgroups{Root: t.TempDir(), Name: "mindmount"}
	for _, name := range []string{"", ".", "..", "a/b", "../x", "a\x00b", "a\nb"} {
		if err := c.Confine(name, os.Getpid()); err == nil || errors.Is(err, ErrNoCgroups) {
			t.Errorf("Confine(%q) = %v, want a refusal of the name", name, err)
		}
	}
	if err := c.Confine("alice", os.Getpid()); !errors.Is(err, ErrNoCgroups) {
		t.Errorf("a folder without controllers: %v, want ErrNoCgroups", err)
	}
}
