package main

import (
	"context"
	"fmt"
	"io"
	"os"

	cgolden "github.com/mindmount/mindmount/consolidate/golden"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/serve/github"
)

// evalPRs prints the pull-request section of "mindmount eval": the
// pull-request golden set (consolidate/golden) ingested one batch at a
// time with the scripted model, then recalled as "mindmount github
// recall" would comment on new pull requests (its query, its threshold,
// three memories at most). It fails when a superseded memory is ranked,
// a sibling superseded or a conflict decided otherwise than expected.
func evalPRs(ctx context.Context, w io.Writer) (ok bool, why []string, err error) {
	tmp, err := os.MkdirTemp("", "mindmount-eval-prs-")
	if err != nil {
		return false, nil, err
	}
	defer os.RemoveAll(tmp)
	r, err := cgolden.RunPRs(ctx, tmp, cgolden.PROptions{
		Query: func(title, body string, paths []string) string {
			return github.Query(github.Item{Title: title, Body: body, Paths: paths})
		},
		Select: func(h []recall.Hit) []recall.Hit { return github.Relevant(h, github.DefaultMinScore, 3) },
	})
	if err != nil {
		return false, nil, err
	}
	fmt.Fprintln(w)
	cgolden.WritePRsText(w, "scripted model, the recall comment's query and threshold", r, false)
	if s := r.Summarize(); !s.Pass() {
		why = append(why, fmt.Sprintf("pull requests: %d superseded memories ranked, %d siblings superseded, %d/%d conflicts as expected",
			s.Stale, s.Siblings, s.Correct, s.Facts))
	}
	return len(why) == 0, why, nil
}
