package control

import (
	"context"
	"net"
	"path/filepath"
)

// socketPath is where the daemon of the repository whose git directory is
// gitDir listens: a file in the repository's own folder, 0700 and owned
// by its user, so that nobody else can connect to it through the file
// system, nor take its name before the daemon binds it.
func socketPath(gitDir string) string {
	return filepath.Join(gitDir, filepath.FromSlash(SocketFile))
}

// Dial connects to the unix socket at path, however long path is.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var c net.Conn
	err := shortPath(path, func(name string) error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, "unix", name)
		return err
	})
	return c, err
}

// ListenUnix binds a unix socket at path, however long path is (a team
// writer's socket under a deep ROOT): see listen.
func ListenUnix(path string) (*net.UnixListener, error) { return listen(path) }

// listen binds a unix socket at path, however long path is. The listener
// does not remove its file when closed: the name it was bound by may be a
// handle that is gone by then (Server.Serve removes path itself).
func listen(path string) (*net.UnixListener, error) {
	var ln *net.UnixListener
	err := shortPath(path, func(name string) error {
		var err error
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
		return err
	})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	return ln, nil
}
