package memgraph

import (
	"strings"
	"time"
)

// PromotedFrom is the promoted_from value of a memory copied from user's
// repository at commit, path rel: "<user>:<commit>:<path>", each part one
// line with no colon in user.
func PromotedFrom(user, commit, rel string) string {
	return SafeLine(strings.ReplaceAll(user, ":", "_")) + ":" + SafeLine(commit) + ":" + SafeLine(rel)
}

// Promoted returns a copy of m to be written into a team's repository: its
// access log emptied (how often one person used it says nothing to the
// team), promoted_from set to from.
func Promoted(m *Memory, from string) *Memory {
	c := m.Clone()
	if i := c.findSection(secAccessLog); i >= 0 {
		head, _ := splitHeading(c.raw.secs[i].raw)
		c.raw.secs[i].raw = head
	}
	c.Uses = 0
	c.LastUsed = time.Time{}
	from = SafeLine(from)
	c.setKey("promoted_from", from)
	c.Front.PromotedFrom = from
	return c
}
