package secret

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// benchScanEnv names what the helper process does: "none" (start and
// exit), "scan" (scan one memory as the pre-commit hook does) or "full"
// (the same with every gitleaks rule compiled, as before detectorFor).
const benchScanEnv = "MINDMOUNT_BENCH_SCAN"

// TestHelperScanProcess is the process BenchmarkScanProcess starts; it
// does nothing when run as a test.
func TestHelperScanProcess(t *testing.T) {
	memory := []byte("---\ndescription: Likes tea\nstatus: active\n---\n# Likes Tea\n\n## Fact\nYou like tea.\n\n## Access log\nused, 01.09.26\nused, 02.09.26\n")
	switch os.Getenv(benchScanEnv) {
	case "scan":
		if _, err := ScanAdded(memory[:len(memory)-15], memory); err != nil {
			t.Fatal(err)
		}
	case "full":
		detector()
		if _, err := ScanAdded(memory[:len(memory)-15], memory); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkScanProcess is the secret scan's cost per commit in the
// pre-commit hook, a new process per commit: a process that scans one
// memory whose only gitleaks keyword is its "## Access log" heading
// ("scan"), the same with all of gitleaks' rules compiled as before
// detectorFor ("full"), and one that starts and exits ("none"), in turn,
// each a whole process (this test binary re-run for TestHelperScanProcess
// alone). It reports each one's median CPU time (user + system, what the
// hook costs on an idle machine) and the ratios to "none":
//
//	go test ./memgraph/secret/ -run '^$' -bench ScanProcess -benchtime 15x
func BenchmarkScanProcess(b *testing.B) {
	modes := []string{"none", "scan", "full"}
	cpu := map[string][]time.Duration{}
	for b.Loop() {
		for _, mode := range modes {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScanProcess$")
			cmd.Env = append(os.Environ(), benchScanEnv+"="+mode)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			cpu[mode] = append(cpu[mode], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	none := median(cpu["none"])
	for _, mode := range modes {
		m := median(cpu[mode])
		b.ReportMetric(m, mode+"-cpu-ms")
		if mode != "none" && none > 0 {
			b.ReportMetric(m/none, mode+"/none")
		}
	}
}
