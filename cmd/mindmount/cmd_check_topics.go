package main

import (
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// warnTopicConflicts prints, on stderr, the likely missed contradictions
// of the repository at dir (memgraph.TopicConflicts): two active memories
// of one kind sharing a topic that had retirements. A warning, not a
// failure: people may mean both.
func warnTopicConflicts(dir string) {
	g, err := memgraph.Scan(dir)
	if err != nil {
		return // the per-file checks report what is wrong
	}
	defer g.Close()
	for _, c := range g.TopicConflicts() {
		fmt.Fprintf(stderr, "warning: %s\n", c)
	}
}
