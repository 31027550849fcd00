package gitrepo

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// selfStart is this process's start time, recorded in lock owner files.
var selfStart = procStart(os.Getpid())

// procStart reads a process's start time (field 22 of /proc/PID/stat, in
// clock ticks since boot); 0 when the process does not exist.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(string(f[19]), 10, 64) // field 22 is the 20th after the name
	return v
}

// processAlive reports whether the process pid that started at start is
// still running (a reused pid has another start time).
func processAlive(pid int, start uint64) bool {
	got := procStart(pid)
	return got != 0 && (start == 0 || got == start)
}

var errWouldBlock = syscall.EWOULDBLOCK

func flock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
