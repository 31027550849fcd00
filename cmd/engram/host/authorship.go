package host

// setAuthorship makes the commits of rt name the user they were written
// for (an Engram-User trailer; the mount adds Engram-Sandbox when the
// writer runs in a sandbox).
func setAuthorship(rt *Runtime, id string) { rt.Tracker.SetUser(id) }
