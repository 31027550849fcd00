package mount

// CheckFUSE reports whether this process could mount anywhere: /dev/fuse
// opens and, for a normal user, fusermount3 is there and set-user-ID
// root; the error is the one line the mount itself would print, cause and
// fix. helper is the fusermount3 found ("" when none: root mounts
// directly).
func CheckFUSE() (helper string, err error) {
	e := probeFUSE("/")
	e.mntWritable = true // no mountpoint is asked about
	if e.devErr != nil {
		return e.fusermount, e.devProblem()
	}
	return e.fusermount, e.problem("")
}
