package consolidate

import (
	"slices"

	"github.com/mindmount/mindmount/memgraph/secret"
)

// Redaction happens at three gates, all through package secret (the one
// home of the rules): the transcript text before the model sees it, every
// field the model returns before anything is built from it (facts and
// decisions, on every path: ADD, UPDATE, DELETE, NONE), and every planned
// file before it is written (plan's validate refuses a file that would
// hold a secret its committed version did not). Problems and errors that
// quote model output are redacted too, since they reach the commit
// message, the log and the status file.

// redactor counts what it removed for the run's report.
type redactor struct{ n int }

// text redacts one string.
func (r *redactor) text(s string) string {
	out, found := secret.Redact(s)
	r.n += len(found)
	return out
}

// fact redacts every field of f.
func (r *redactor) fact(f *Fact) {
	f.Kind = r.text(f.Kind)
	f.Slug = r.text(f.Slug)
	f.Description = r.text(f.Description)
	f.Fact = r.text(f.Fact)
	f.Episode = r.text(f.Episode)
	f.Topic = r.text(f.Topic)
	for i := range f.Search {
		f.Search[i] = r.text(f.Search[i])
	}
	// A keyword is one word: one that held a secret is dropped, not
	// written as a redaction mark.
	f.Keywords = slices.DeleteFunc(f.Keywords, func(k string) bool { return r.text(k) != k })
}

// decision redacts every field of d that is written or quoted.
func (r *redactor) decision(d *Decision) {
	d.Target = r.text(d.Target)
	d.Description = r.text(d.Description)
	d.Text = r.text(d.Text)
}

// redacted is secret.Redact without the findings, for problems and errors
// that may quote model output.
func redacted(s string) string {
	out, _ := secret.Redact(s)
	return out
}
