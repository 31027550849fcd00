package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// askMountHere posts POST /v1/cluster/mount for user to n with key
// ("" for none) and returns the status and the answer.
func askMountHere(t *testing.T, n clusterNode, key, user string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", n.base+"/v1/cluster/mount", strings.NewReader(`{"userId":"`+user+`"}`))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	json.Unmarshal(raw, &v)
	return resp.StatusCode, v
}

// TestClusterMountRequestMovesTheUser: two nodes with --mount. A user is
// mounted only on the node that holds it (never at start: that would be
// a second writer); a mount request on the other node hands the user
// over (flushed, pushed, moved) and mounts it there, the first node's
// mount ends, and writes through either node go on. Only the admin key
// may ask.
func TestClusterMountRequestMovesTheUser(t *testing.T) {
	etcd, tmp, host, bare := clusterBase(t)
	env := append(fakeModelEnv(noteModel(t)), "MINDMOUNT_API_KEY=cluster-test-key")
	var nodes []clusterNode
	var mnts []string
	for _, name := range []string{"a", "b"} {
		root := filepath.Join(tmp, name)
		os.MkdirAll(root, 0o755)
		runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
		runCmd(t, "remote", "set", filepath.Join(root, "users", "alice"), host+"/alice.git")
		mnt := mountDir(t)
		t.Cleanup(func() { detachUnder(mnt) })
		mnts = append(mnts, filepath.Join(mnt, "alice"))
		nodes = append(nodes, startClusterNode(t, name, root, etcd, env, "--mount", mnt))
	}
	a, b := nodes[0], nodes[1]
	if mounted(mnts[0]) || mounted(mnts[1]) {
		t.Fatalf("alice is mounted before any node holds her")
	}
	var log ackLog
	log.write(t, a, "alice")
	waitMounted(t, mnts[0], true, a)
	if mounted(mnts[1]) {
		t.Fatalf("b mounts alice while a holds her: two writers")
	}
	for _, key := range []string{"", "not-the-key"} {
		if code, v := askMountHere(t, b, key, "alice"); code != http.StatusUnauthorized {
			t.Fatalf("mount request with key %q: %d %v", key, code, v)
		}
	}
	if code, v := askMountHere(t, b, "cluster-test-key", "nobody"); code != http.StatusNotFound {
		t.Fatalf("mount request for an unknown user: %d %v", code, v)
	}
	code, v := askMountHere(t, b, "cluster-test-key", "alice")
	if code != 200 || v["mount"] != mnts[1] {
		t.Fatalf("mount request on b: %d %v\na:\n%s\nb:\n%s", code, v, a.logs, b.logs)
	}
	if !mounted(mnts[1]) {
		t.Fatalf("b answered the mount request but does not mount alice\n%s", b.logs)
	}
	waitMounted(t, mnts[0], false, a)
	if ha, hb := clusterHealth(t, a), clusterHealth(t, b); ha.UsersHeld != 0 || hb.UsersHeld != 1 {
		t.Fatalf("after the mount request a holds %d, b %d", ha.UsersHeld, hb.UsersHeld)
	}
	remoteHas(t, bare, log.acked()...)
	log.write(t, a, "alice") // through a, forwarded to b
	remoteHas(t, bare, log.acked()...)
	checkRemote(t, bare)
}

// waitMounted waits (a minute at most) until dir is (or is not) a mount.
func waitMounted(t *testing.T, dir string, want bool, n clusterNode) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for mounted(dir) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s mounted: %v, want %v\n%s", dir, !want, want, n.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
