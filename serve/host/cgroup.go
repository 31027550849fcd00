package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Cgroups confines each worker to a control group of its own where the
// host lets root make groups: a memory bound that covers the worker and
// every git it runs (RLIMIT_DATA covers the worker's own heap only), a
// process count, and a CPU quota, so that one user's load never starves
// another's. cgroup v2 (the unified hierarchy at Root) and v1 (one
// hierarchy per controller under Root) are both understood. Where
// neither is writable Confine returns ErrNoCgroups and the rlimits are
// the only bounds.
type Cgroups struct {
	Root   string  // the cgroup file system, "/sys/fs/cgroup"
	Name   string  // the parent group of every worker's, "mindmount"
	Memory int64   // bytes for a worker and its children (0: no bound)
	Pids   int     // processes and threads (0: no bound)
	CPU    float64 // cores (0: no bound)
}

// ErrNoCgroups: the host has no cgroup file system root may write.
var ErrNoCgroups = errors.New("no writable cgroup file system")

// cpuPeriod is the scheduling period of the CPU quota, in microseconds.
const cpuPeriod = 100000

// Confine moves process pid into user's group, made with the bounds when
// missing. A group of a user stays for the user's next worker; Remove
// deletes the empty groups.
func (c Cgroups) Confine(user string, pid int) error {
	if user == "" || user == "." || user == ".." || strings.ContainsAny(user, "/\x00\n") {
		return fmt.Errorf("cgroup for user %q: not a name", user)
	}
	groups, err := c.groups(user)
	if err != nil {
		return err
	}
	for _, g := range groups {
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", g.dir, err)
		}
		for name, value := range g.limits {
			if err := os.WriteFile(filepath.Join(g.dir, name), []byte(value), 0); err != nil {
				return fmt.Errorf("cgroup %s: set %s: %w", g.dir, name, err)
			}
		}
		if err := os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup %s: move pid %d: %w", g.dir, pid, err)
		}
	}
	return nil
}

// Remove deletes the workers' groups that no process is in any more, and
// the parent once it is empty.
func (c Cgroups) Remove() {
	for _, parent := range c.parents() {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			if e.IsDir() {
				os.Remove(filepath.Join(parent, e.Name())) // fails while in use
			}
		}
		os.Remove(parent)
	}
}

// group is one hierarchy's group of a user and the bounds to write in it.
type group struct {
	dir    string
	limits map[string]string
}

// v2 reports whether Root is the unified hierarchy.
func (c Cgroups) v2() bool {
	_, err := os.Stat(filepath.Join(c.Root, "cgroup.controllers"))
	return err == nil
}

// parents are the parent groups of every hierarchy in use.
func (c Cgroups) parents() []string {
	if c.v2() {
		return []string{filepath.Join(c.Root, c.Name)}
	}
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		if _, err := os.Stat(filepath.Join(c.Root, ctrl)); err == nil {
			out = append(out, filepath.Join(c.Root, ctrl, c.Name))
		}
	}
	return out
}

// groups is where user's worker goes in each hierarchy, with its bounds.
func (c Cgroups) groups(user string) ([]group, error) {
	if c.v2() {
		return c.groupsV2(user)
	}
	var out []group
	add := func(ctrl string, limits map[string]string) {
		if _, err := os.Stat(filepath.Join(c.Root, ctrl, "cgroup.procs")); err == nil {
			out = append(out, group{dir: filepath.Join(c.Root, ctrl, c.Name, user), limits: limits})
		}
	}
	mem, pids, cpu := map[string]string{}, map[string]string{}, map[string]string{}
	if c.Memory > 0 {
		mem["memory.limit_in_bytes"] = strconv.FormatInt(c.Memory, 10)
	}
	if c.Pids > 0 {
		pids["pids.max"] = strconv.Itoa(c.Pids)
	}
	if c.CPU > 0 {
		cpu["cpu.cfs_period_us"] = strconv.Itoa(cpuPeriod)
		cpu["cpu.cfs_quota_us"] = strconv.Itoa(int(c.CPU * cpuPeriod))
	}
	add("memory", mem)
	add("pids", pids)
	add("cpu", cpu)
	if len(out) == 0 {
		return nil, ErrNoCgroups
	}
	return out, nil
}

// groupsV2 is user's group in the unified hierarchy; the controllers are
// enabled for the parent's children first.
func (c Cgroups) groupsV2(user string) ([]group, error) {
	parent := filepath.Join(c.Root, c.Name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCgroups, err)
	}
	for _, dir := range []string{c.Root, parent} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0); err != nil {
			return nil, fmt.Errorf("cgroup %s: enable memory, pids and cpu: %w", dir, err)
		}
	}
	limits := map[string]string{}
	if c.Memory > 0 {
		limits["memory.max"] = strconv.FormatInt(c.Memory, 10)
	}
	if c.Pids > 0 {
		limits["pids.max"] = strconv.Itoa(c.Pids)
	}
	if c.CPU > 0 {
		limits["cpu.max"] = fmt.Sprintf("%d %d", int(c.CPU*cpuPeriod), cpuPeriod)
	}
	return []group{{dir: filepath.Join(parent, user), limits: limits}}, nil
}
