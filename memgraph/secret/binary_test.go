package secret

import (
	"math/rand/v2"
	"testing"
)

// TestBinaryIsHeldToTokenShapes: in binary content the phrasing rule does
// not apply (its short labels turn up by chance in random bytes, and a file
// of random bytes was then held back as holding a password), while a
// token's own shape is still found there.
func TestBinaryIsHeldToTokenShapes(t *testing.T) {
	flagged := 0
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 0x6d6d))
		big := make([]byte, 2<<20)
		for i := range big {
			big[i] = byte(r.Uint32())
		}
		fs, err := Scan(big)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(fs) > 0 {
			flagged++
			t.Errorf("seed %d: random bytes flagged: rule %s", seed, fs[0].Rule)
		}
	}
	bin := []byte("\x00\x01\x02my password is hunter2x9\x00\x03")
	if fs, _ := Scan(bin); len(fs) != 0 {
		t.Errorf("a phrasing inside binary content was flagged: %v", fs)
	}
	tok := append([]byte("\x00\x01\x02token "), []byte("ghp_"+"x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3\x00\x03")...)
	if fs, _ := Scan(tok); len(fs) == 0 {
		t.Error("a GitHub token inside binary content was not found")
	}
}
