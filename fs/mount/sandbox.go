package mount

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// sandboxes names the sandbox a writing process runs in, for the commit's
// Mindmount-Sandbox trailer: the nearest bubblewrap ancestor ("bwrap[PID]"),
// else a container's cgroup ("cgroup:/system.slice/docker-….scope"), else
// nothing. Answers are cached per pid for callerTTL, as process names are.
type sandboxes struct {
	cache pidCache
	self  string // the daemon's own cgroup: a writer in it is not sandboxed
}

// containerMarks are the cgroup path parts container runtimes create.
var containerMarks = []string{"docker", "libpod", "containerd", "kubepods", "lxc", "machine.slice", "crio", "podman"}

func newSandboxes() *sandboxes {
	return &sandboxes{self: cgroupOf("self")}
}

// of returns the sandbox of pid, or "".
func (s *sandboxes) of(pid uint32) string {
	return s.cache.get(pid, time.Now(), func(pid uint32) (string, bool) { return s.find(pid), true })
}

func (s *sandboxes) find(pid uint32) string {
	// The process tree first: bubblewrap leaves itself as the sandboxed
	// program's parent (or grand-parent with --die-with-parent helpers).
	p := strconv.FormatUint(uint64(pid), 10)
	for range 32 {
		if p == "0" || p == "1" || p == "" {
			break
		}
		comm, ppid := procStat(p)
		if comm == "bwrap" {
			return "bwrap[" + p + "]"
		}
		p = ppid
	}
	cg := cgroupOf(strconv.FormatUint(uint64(pid), 10))
	if cg == "" || cg == s.self {
		return ""
	}
	for _, m := range containerMarks {
		if strings.Contains(cg, m) {
			return "cgroup:" + cg
		}
	}
	return ""
}

// procStat returns the command name and parent pid of /proc/<pid>.
func procStat(pid string) (comm, ppid string) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", ""
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", ""
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 2 {
		return "", ""
	}
	return string(b[open+1 : end]), f[1]
}

// cgroupOf returns the cgroup v2 path of /proc/<pid> ("" when unknown).
func cgroupOf(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return rest
		}
	}
	return ""
}
