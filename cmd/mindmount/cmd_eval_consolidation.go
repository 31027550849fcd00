package main

import (
	"context"
	"fmt"
	"io"
	"os"

	cgolden "github.com/mindmount/mindmount/consolidate/golden"
)

// evalConsolidation prints the consolidation section of "mindmount eval": the
// golden contradiction scenarios (consolidate/golden) played with a
// scripted model through the fake server, with topics (today) and without
// them (as before topics existed), and says whether the goals were met: the memory
// to retire is always among the candidates, no contradictory memory is
// left active, no unrelated memory is changed.
func evalConsolidation(ctx context.Context, w io.Writer) (ok bool, why []string, err error) {
	tmp, err := os.MkdirTemp("", "mindmount-eval-consolidation-")
	if err != nil {
		return false, nil, err
	}
	defer os.RemoveAll(tmp)
	rs, err := cgolden.Run(ctx, tmp, cgolden.Options{})
	if err != nil {
		return false, nil, err
	}
	fmt.Fprintln(w)
	cgolden.WriteText(w, "scripted model, with topics", rs)
	before, err := cgolden.Run(ctx, tmp+"-before", cgolden.Options{NoTopics: true})
	defer os.RemoveAll(tmp + "-before")
	if err == nil {
		b := cgolden.Summarize(before)
		fmt.Fprintf(w, "  for comparison, without topics: %d/%d offered, %d left active\n", b.Offered, b.Contradictions, b.LeftActive)
	}
	s := cgolden.Summarize(rs)
	if !s.Pass() {
		why = append(why, fmt.Sprintf("consolidation: %d/%d candidates held the memory to retire, %d contradictory memories left active, %d unrelated changed, %d failed",
			s.Offered, s.Contradictions, s.LeftActive, s.WronglyChanged, s.Failed))
	}
	skills := cgolden.RunSkills(ctx, tmp+"-skills", cgolden.Options{})
	defer os.RemoveAll(tmp + "-skills")
	cgolden.WriteSkillsText(w, "scripted model", skills)
	for _, r := range skills {
		if !r.OK() {
			why = append(why, "skills: "+r.Scenario.Name+" missed its goal")
		}
	}
	pok, pwhy, err := evalPRs(ctx, w)
	if err != nil {
		return false, nil, err
	}
	why = append(why, pwhy...)
	return s.Pass() && pok && len(why) == 0, why, nil
}
