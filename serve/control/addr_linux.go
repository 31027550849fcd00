package control

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxSunPath is the longest path a unix socket address holds (sun_path is
// 108 bytes with its terminating NUL).
const maxSunPath = 107

// shortPath calls fn with a name for path short enough for a unix socket
// address, however long path is: path itself when it fits, else the same
// file reached through a handle on its folder (/proc/self/fd/N/NAME). The
// handle opens the very folder path names, so the socket is the same file
// with the same permissions either way; only the bytes of the address
// change. The handle is closed when fn returns (a bound or connected
// socket no longer needs its name).
func shortPath(path string, fn func(name string) error) error {
	if len(path) <= maxSunPath {
		return fn(path)
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(fd)
	return fn(fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path)))
}
