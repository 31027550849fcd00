package memgraph

import (
	"strings"
	"testing"
	"time"
)

func TestPrivacySettings(t *testing.T) {
	s, probs := ParseSettings([]byte("commit_secrets: true\ntranscript_retention: 72h\n"))
	if len(probs) != 0 || !s.CommitSecrets || s.TranscriptRetention != 72*time.Hour {
		t.Fatalf("%+v %v", s, probs)
	}
	s, probs = ParseSettings([]byte("transcript_retention: forever\n"))
	if len(probs) != 0 || s.TranscriptRetention != -1 || s.CommitSecrets {
		t.Fatalf("%+v %v", s, probs)
	}
	for _, bad := range []string{"commit_secrets: yes", "transcript_retention: -1h", "transcript_retention: soon"} {
		s, probs := ParseSettings([]byte(bad + "\n"))
		if len(probs) != 1 || probs[0].Line != 1 || s.CommitSecrets || s.TranscriptRetention != 0 {
			t.Errorf("%q: %+v %v", bad, s, probs)
		}
		if !strings.Contains(probs[0].Msg, strings.SplitN(bad, ":", 2)[0]) {
			t.Errorf("%q: message %q", bad, probs[0].Msg)
		}
	}
}
