package gitrepo

// HeadExec reports whether HEAD has a regular file at rel and whether it is
// executable (mode 100755). The change tracker uses it to commit a chmod
// that left the content alone. (Added by the tracker's author as a new
// file; the owner may fold it into read.go.)
func (r *Repo) HeadExec(rel string) (exec, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHeadRef()
	if err != nil {
		return false, false, err
	}
	e, found, err := r.lookup(h.tree, rel)
	if err != nil || !found || e.isTree() || e.mode == modeGitlink {
		return false, false, err
	}
	return e.mode == modeExec, true, nil
}
