package cluster

// currentFence is the live session's fence, for tests that watch it fall.
func (n *Node) currentFence() *fence {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.term.fence
}
