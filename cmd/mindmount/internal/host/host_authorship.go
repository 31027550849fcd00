package host

// setAuthorship makes the commits of rt name the user they were written
// for (a Mindmount-User trailer; the mount adds Mindmount-Sandbox when the
// writer runs in a sandbox).
func setAuthorship(rt *Runtime, id string) { rt.SetUser(id) }

// SetUser makes rt the runtime of served user id: ID is set, and commits
// carry the Mindmount-User trailer.
func (rt *Runtime) SetUser(id string) {
	rt.ID = id
	rt.Tracker.SetUser(id)
}
