package failpoint

import (
	"os"
	"os/exec"
	"testing"
)

func TestEnableFiresOnce(t *testing.T) {
	n := 0
	off := Enable("q", func() { n++ })
	Inject("other")
	Inject("q")
	Inject("q")
	off()
	Inject("q")
	if n != 1 {
		t.Fatalf("hook ran %d times, want once (first hit only, nothing once disabled)", n)
	}
}

// TestKillsTheProcess runs this test binary again with the point armed and
// expects it to die by SIGKILL at the point, not to return.
func TestKillsTheProcess(t *testing.T) {
	if os.Getenv("FAILPOINT_CHILD") != "" {
		Inject(IndexLocked) // armed @2: survives the first
		Inject(IndexLocked)
		os.Exit(0) // reached only when Inject did not kill
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKillsTheProcess$")
	cmd.Env = append(os.Environ(), "FAILPOINT_CHILD=1", EnvVar+"=ref-updated,"+IndexLocked+"@2")
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ProcessState.String() != "signal: killed" {
		t.Fatalf("child: %v, want killed by SIGKILL", err)
	}
}

func BenchmarkInjectUnarmed(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Inject(RefUpdated)
	}
}
