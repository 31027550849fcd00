package host

import "context"

// Unload stops user id's worker now, committing what is pending (within
// the stop grace), as when the user moves to another serve node; the
// user's next Forward starts it again.
func (ws *Workers) Unload(ctx context.Context, id string) error {
	w, err := ws.lookup(id)
	if err != nil {
		return err
	}
	ws.stop(ctx, w)
	w.mu.Lock()
	w.stopping = false
	w.mu.Unlock()
	return nil
}

// Kill ends user id's worker at once, without waiting for it to commit:
// this node may no longer write the user's repository.
func (ws *Workers) Kill(id string) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ws.Unload(ctx, id)
}
