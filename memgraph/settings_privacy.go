package memgraph

import "time"

// setPrivacy parses the settings about transcripts (the transcripts rule)
// and returns a problem message, or "".
func (s *Settings) setPrivacy(key, val string) string {
	switch key {
	case "transcript_retention":
		if val == "forever" {
			s.TranscriptRetention = -1
			return ""
		}
		d, err := time.ParseDuration(val)
		if err != nil || d <= 0 {
			return "transcript_retention must be a duration like 720h (30 days) or forever"
		}
		s.TranscriptRetention = d
	}
	return ""
}
