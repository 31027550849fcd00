package golden

import (
	"fmt"
	"io"
)

// Summary counts what the evaluation prints.
type Summary struct {
	Contradictions int // scenarios whose old memory must be retired
	Offered        int // ... and was among the candidates (goal: all)
	LeftActive     int // ... and was left active beside the new fact (goal: none)
	Converse       int // scenarios whose old memory must stay
	WronglyChanged int // ... and was changed (goal: none)
	Failed         int // runs that failed
}

// Summarize counts results.
func Summarize(rs []Result) Summary {
	var s Summary
	for _, r := range rs {
		if r.Err != "" {
			s.Failed++
		}
		if r.Scenario.Retire {
			s.Contradictions++
			if r.Offered {
				s.Offered++
			}
			if !r.Retired {
				s.LeftActive++
			}
			continue
		}
		s.Converse++
		if r.Changed {
			s.WronglyChanged++
		}
	}
	return s
}

// Pass reports whether the goals were met.
func (s Summary) Pass() bool {
	return s.Failed == 0 && s.Offered == s.Contradictions && s.LeftActive == 0 && s.WronglyChanged == 0
}

// WriteText prints one line per scenario and the two figures.
func WriteText(w io.Writer, label string, rs []Result) {
	s := Summarize(rs)
	fmt.Fprintf(w, "consolidation (%s): %d contradiction scenarios, %d converse\n", label, s.Contradictions, s.Converse)
	for _, r := range rs {
		mark := "ok  "
		if !r.OK() {
			mark = "MISS"
		}
		fmt.Fprintf(w, "  %s %-38s offered=%-5v retired=%-5v changed=%v", mark, r.Scenario.Name, r.Offered, r.Retired, r.Changed)
		if r.Err != "" {
			fmt.Fprintf(w, " error: %s", r.Err)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  candidates holding the memory to retire: %d/%d (goal: all)\n", s.Offered, s.Contradictions)
	fmt.Fprintf(w, "  contradictory memories left active:      %d (goal: none)\n", s.LeftActive)
	fmt.Fprintf(w, "  unrelated memories changed (converse):   %d (goal: none)\n", s.WronglyChanged)
}
