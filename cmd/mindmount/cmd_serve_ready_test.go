package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestServeReadyAfterWarmUp (issue 27, the cold first chat): serve --http
// prints its readiness line only once its users' workers are started (the
// repository opened, every memory read, the tracker running), so a client
// that waits for the line finds its first chat as quick as the next. The
// first /health after the line already counts every user loaded: no
// polling, so a line printed before the warm-up fails here.
func TestServeReadyAfterWarmUp(t *testing.T) {
	root := t.TempDir()
	reachable(root)
	users := []string{"alice", "bob", "carol"}
	for i, u := range users {
		runCmd(t, append([]string{"users", "add", root, u}, ownUID(aliceUID+i)...)...)
	}
	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=127.0.0.1:9", "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	cmd, logs, base := startServeHTTP(t, root, env)
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Users       int `json:"users"`
		UsersLoaded int `json:"usersLoaded"`
	}
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if h.Users != len(users) || h.UsersLoaded != len(users) {
		t.Fatalf("at the readiness line: %d of %d users loaded, want all %d\n%s", h.UsersLoaded, h.Users, len(users), logs)
	}
	stopMindmount(t, cmd, logs)
}
