package control

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestClientLinksNoServingSide: a client of the control socket (a command
// that only asks a daemon) links the protocol, not what serves it: no
// consolidation, no memory graph, no secret scanner, no model SDK, so
// linking this package costs a command nothing at start. The serving side
// names its errors (NameErrors) instead of this package importing them.
func TestClientLinksNoServingSide(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/mindmount/mindmount/"
	// Packages of the module by name; dependencies with everything below.
	banned := map[string]bool{mod + "consolidate": true, mod + "memgraph": true, mod + "memgraph/secret": true,
		mod + "serve/host": true, mod + "fs/tracker": true}
	bannedTrees := []string{"github.com/zricethezav/gitleaks/", "github.com/anthropics/anthropic-sdk-go/", "github.com/ollama/ollama/"}
	reported := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		if banned[d] {
			t.Errorf("serve/control links %s", d)
		}
		for _, tree := range bannedTrees {
			if strings.HasPrefix(d, tree) && !reported[tree] {
				reported[tree] = true
				t.Errorf("serve/control links %s", d)
			}
		}
	}
}
