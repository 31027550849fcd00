package secret

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// scanBound is the most heap a scan may hold beyond the file itself,
// whatever the file weighs: a few chunks per stream, the rules' own work
// on one chunk, and the decoders.
const scanBound = 48 << 20

// TestScanBoundedMemory: a 60 MB file of random bytes and one of text are
// scanned holding at most scanBound of heap beyond the file (the old scan
// built the whole file's text, a copy and more as large as the file).
func TestScanBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("scans 120 MB")
	}
	const size = 60_000_000
	random := make([]byte, size)
	rand.New(rand.NewSource(1)).Read(random)
	line := "You mentioned a bag of Ethiopian coffee from a local roaster.\n"
	text := []byte(strings.Repeat(line, size/len(line)))
	copy(text[size/2:], "key "+stripeKey+"\n")
	// The compiled rules are kept for the life of the process (a few
	// detectors for sets of rules, then the full one): built before the
	// measure, they are not what a scan holds.
	if _, err := Scan(random[:8<<20]); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		data  []byte
		found int
	}{{"random", random, -1}, {"text", text, 1}} {
		var found []Finding
		var err error
		peak := secrettest.HeapPeak(func() { found, err = Scan(c.data) })
		t.Logf("%s: %d MB scanned, heap peak %.1f MiB beyond the file, findings %v", c.name, len(c.data)/1e6, float64(peak)/(1<<20), found)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if peak > scanBound {
			t.Errorf("%s: the scan held %d MiB, more than its bound of %d MiB", c.name, peak>>20, scanBound>>20)
		}
		if c.found >= 0 && len(found) != c.found {
			t.Errorf("%s: %v, want %d finding", c.name, found, c.found)
		}
	}
}
