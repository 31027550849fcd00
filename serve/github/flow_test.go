package github_test

import (
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
)

// TestSiblingsNeverSupersede: a pull request ingested again after its
// text changed meets the memories it gave the first time; a fact of it
// that claims to contradict one of them (the convention against the
// decision it supports) is added beside it, never retires it.
func TestSiblingsNeverSupersede(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	d := newDemo(t)
	d.merged(1, "Cache: store in SQLite", "We decided to use SQLite for the cache. Reach it only through cache.Store.", nil)
	out, n := d.ingest(event(t, 1, "closed", "Cache: store in SQLite", "Edited: we decided to use SQLite for the cache; only through cache.Store.", true, "main", "feature-1"))
	if n == 0 || len(out.Opened) != 1 {
		t.Fatalf("the edited pull request was not consolidated again: %d, %+v", n, out)
	}
	if err := d.fake.Merge(out.Opened[0].Number); err != nil {
		t.Fatal(err)
	}
	if m := d.memory("user_memory/cache-uses-sqlite.md"); !m.Active() {
		t.Fatalf("the decision was retired by its sibling: %+v", m.Front)
	}
	var body string
	for _, p := range d.fake.PRs() {
		if p.Number == out.Opened[0].Number {
			body = p.Body
		}
	}
	if !strings.Contains(body, "distilled from the same source, PR\\#1") {
		t.Errorf("the proposal does not say why the sibling was kept:\n%s", body)
	}
}

// TestClosedProposalIsRejected: a proposal closed without merging is
// rejected by the next run (its branch deleted, the memory branch's
// cursor covering its source), and neither that run nor an ingest of the
// same event proposes it again.
func TestClosedProposalIsRejected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	d := newDemo(t)
	d.fake.AddPR(6, "No ORM", "Plain SQL only.", nil, nil)
	ev := event(t, 6, "closed", "No ORM", "Plain SQL only.", true, "main", "feature-6")
	out, _ := d.ingest(ev)
	if len(out.Opened) != 1 {
		t.Fatalf("%+v", out)
	}
	d.fake.ClosePR(out.Opened[0].Number)
	ctx := context.Background()
	dir := clone(t, d.bare)
	got, err := proposeIn(d, dir)
	if err != nil || len(got.Rejected) != 1 || len(got.Opened) != 0 {
		t.Fatalf("propose after the close: %+v %v", got, err)
	}
	if refs := run(t, d.bare, "for-each-ref", "refs/heads/mindmount/dream/"); refs != "" {
		t.Errorf("the rejected dream's branch stays: %s", refs)
	}
	if log := run(t, d.bare, "log", "-1", "--format=%B", "mindmount/memory"); !strings.Contains(log, "Mindmount-Rejected: mindmount/dream/1") {
		t.Errorf("the memory branch does not record the rejection:\n%s", log)
	}
	out, n := d.ingest(ev)
	if n != 0 || len(out.Opened) != 0 {
		t.Fatalf("ingest after the rejection: %d sources, %+v", n, out)
	}
	_ = ctx
}

// TestTokenNeverLogged: the token reaches the API only in its
// Authorization header, never a log line or an error.
func TestTokenNeverLogged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	d := newDemo(t)
	var logs bytes.Buffer
	d.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d.fake.AddPR(6, "No ORM", "Plain SQL only.", nil, nil)
	d.ingest(event(t, 6, "closed", "No ORM", "Plain SQL only.", true, "main", "feature-6"))
	bad, err := newClient(d.fake.URL+"/api/v3", "wrong"+token)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.DreamPRs(context.Background())
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(logs.String(), token) {
		t.Fatalf("the token leaked or a bad one was accepted: %v\n%s", err, logs.String())
	}
}

// TestNothingDurableOpensNoPullRequest: a merged pull request with
// nothing worth remembering opens no pull request, and is not read again.
func TestNothingDurableOpensNoPullRequest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	d := newDemo(t)
	d.fake.AddPR(9, "Fix a typo", "teh -> the", nil, nil)
	ev := event(t, 9, "closed", "Fix a typo", "teh -> the", true, "main", "feature-9")
	out, _ := d.ingest(ev)
	if len(out.Opened) != 0 || len(out.Empty) != 1 {
		t.Fatalf("%+v", out)
	}
	if out, n := d.ingest(ev); n != 0 || len(out.Opened)+len(out.Empty) != 0 {
		t.Fatalf("ingest again: %d, %+v", n, out)
	}
}
