package tracker

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// TestSecretProblemsBounds: a file the secret scan cannot read within its
// bounds (a gzip stream inflating past them) is held back with a problem
// that says so, never committed as if clean; a secret found inside an
// encoding is named with it, never with its value.
func TestSecretProblemsBounds(t *testing.T) {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(make([]byte, 80<<20))
	w.Close()
	probs := SecretProblems("files/backup.gz", b.Bytes(), nil)
	if len(probs) != 1 || !errors.Is(probs[0].Err, ErrUnscanned) || !strings.Contains(probs[0].Msg, "within mindmount's bounds") {
		t.Fatalf("a gzip bomb: %v", probs)
	}
	token := "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	b.Reset()
	w = gzip.NewWriter(&b)
	w.Write([]byte("export GH=" + token + "\n"))
	w.Close()
	probs = SecretProblems("files/env.gz", b.Bytes(), nil)
	if len(probs) == 0 || !errors.Is(probs[0].Err, ErrSecret) || !strings.Contains(probs[0].String(), "inside gzip") || strings.Contains(probs[0].String(), token) {
		t.Fatalf("a token in a gzip file: %v", probs)
	}
}
