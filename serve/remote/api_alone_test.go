package remote

import (
	"strings"
	"testing"
	"time"
)

// TestTextAlone: after a sync without a daemon, the state does not claim
// a retry that nothing will make.
func TestTextAlone(t *testing.T) {
	st := State{Remote: "r.git", Failure: "merge refused", Failures: 1, FailedAt: time.Now()}
	if !strings.Contains(st.Text(), "retrying with backoff") {
		t.Fatalf("daemon: %s", st.Text())
	}
	st.Alone = true
	if txt := st.Text(); strings.Contains(txt, "retrying") || !strings.Contains(txt, "no daemon serves this repository") {
		t.Fatalf("alone: %s", txt)
	}
}
