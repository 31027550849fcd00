package secret

import (
	"fmt"
	"sync"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// TestDetectorsBuiltConcurrently: a daemon scans from several goroutines
// at once (the tracker's flush, a consolidation run, MCP), each text
// compiling its own subset of gitleaks' rules. Building one subset must not
// write into the configuration another goroutine is reading (run with
// -race: gitleaks' Translate lower-cases keywords in place).
func TestDetectorsBuiltConcurrently(t *testing.T) {
	partialMu.Lock()
	saved := partial
	partial = map[string]*detect.Detector{}
	partialMu.Unlock()
	t.Cleanup(func() {
		partialMu.Lock()
		partial = saved
		partialMu.Unlock()
	})
	texts := []string{
		"the slack token for the build is in the vault",
		"my github access goes through the gh cli",
		"stripe and twilio keys rotate monthly",
		"aws access key rotation happens on fridays",
		"the heroku and npm tokens are kept apart",
		"a private key for ssh stays on the laptop",
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := texts[i%len(texts)] + fmt.Sprintf(" (%d)", i)
			_ = Find(text)
		}()
	}
	wg.Wait()
}
