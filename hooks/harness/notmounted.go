package harness

import (
	"fmt"
	"os"

	"github.com/mindmount/mindmount/memgraph"
)

// NotMountedError is a hook's memory that is a mountpoint with no mount on
// it (after a reboot, or once its daemon stopped): the agent would start
// with an empty memory, so the hook says so in the context it returns.
type NotMountedError struct{ Dir string }

func (e *NotMountedError) Error() string {
	return fmt.Sprintf("memory is not mounted at %s: run mindmount mount REPO %s (or, installed as a service, systemctl --user start %s)", e.Dir, e.Dir, UnitName(e.Dir))
}

// NotMounted returns a *NotMountedError when dir is an empty folder that
// is not a mount (a mountpoint whose mount is gone), else nil: a folder
// that holds anything (a repository, a watched work tree, other files) is
// for the caller to judge.
func NotMounted(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || mounted(dir) {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return nil
	}
	return &NotMountedError{Dir: dir}
}

// UnitName is the name of the systemd user service that mounts a memory
// at mnt ("mindmount service install"): mindmount- and the mountpoint's
// absolute path as a slug.
func UnitName(mnt string) string {
	return "mindmount-" + memgraph.Slug(mnt) + ".service"
}
