package host

// setAuthorship makes the commits of rt name the user they were written
// for (a Mindmount-User trailer; the mount adds Mindmount-Sandbox when the
// writer runs in a sandbox).
func setAuthorship(rt *Runtime, id string) { rt.Tracker.SetUser(id) }
