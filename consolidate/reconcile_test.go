package consolidate

import (
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// TestOneConversationNeverContradictsItself (gitmemory's lesson): a
// decision and the convention that supports it, extracted from one
// conversation, both stay active, even when the model calls the second a
// contradiction of the memory the first just refined.
func TestOneConversationNeverContradictsItself(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/uses-postgres.md": memoryFile("Uses Postgres 14 for the shop", "Uses Postgres", "Your shop runs on Postgres 14."),
	})
	e.addTranscript("transcripts/s.jsonl", jsonl(
		"We decided today: the shop moves to Postgres 16.",
		"Good choice.",
		"And from now on every Postgres schema change goes through a migration file.",
	))
	e.script([]Fact{
		{Kind: "user", Slug: "shop-on-postgres-16", Description: "The shop moves to Postgres 16", Fact: "Your shop moves to Postgres 16."},
		{Kind: "user", Slug: "postgres-migrations", Description: "Postgres schema changes go through migrations", Fact: "Every Postgres schema change of the shop goes through a migration file."},
	}, []Decision{
		{Fact: 0, Action: ActionUpdate, Target: "user_memory/uses-postgres", Description: "Shop runs on Postgres 16", Text: "Your shop runs on Postgres 16."},
		{Fact: 1, Action: ActionDelete, Target: "user_memory/uses-postgres"},
	})
	rep := e.run()
	if rep.Contradicted != 0 || rep.Updated != 1 || rep.Added != 1 {
		t.Fatalf("report %+v (problems %q)", rep, rep.Problems)
	}
	if m := e.mem("user_memory/uses-postgres.md"); !m.Active() || m.Fact != "Your shop runs on Postgres 16." {
		t.Fatalf("the decision's memory: active %v, fact %q", m.Active(), m.Fact)
	}
	if m := e.mem("user_memory/postgres-migrations.md"); !m.Active() || m.Front.Supersedes != "" {
		t.Fatalf("the convention: active %v, supersedes %q", m.Active(), m.Front.Supersedes)
	}
	if p := strings.Join(rep.Problems, "\n"); !strings.Contains(p, "same conversation") {
		t.Fatalf("the refused contradiction is not reported: %q", rep.Problems)
	}
	// A later conversation may still contradict it.
	e.addTranscript("transcripts/s2.jsonl", jsonl("We dropped Postgres for SQLite."))
	e.script([]Fact{{Kind: "user", Slug: "shop-on-sqlite", Description: "The shop runs on SQLite", Fact: "Your shop runs on SQLite, not Postgres."}},
		[]Decision{{Fact: 0, Action: ActionDelete, Target: "user_memory/uses-postgres"}})
	if rep := e.run(); rep.Contradicted != 1 {
		t.Fatalf("a later conversation's contradiction: %+v %q", rep, rep.Problems)
	}
}

// TestModelProposesPinning: a fact the user marked as one to always
// remember is saved pinned (ADD), pins the memory it refines (UPDATE) or
// confirms (NONE), and is then in the compiled context.
func TestModelProposesPinning(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/has-diabetes.md":      memoryFile("Has type 1 diabetes", "Has Diabetes", "You have type 1 diabetes."),
		"user_memory/emergency-contact.md": memoryFile("Emergency contact is Bea", "Emergency Contact", "Your emergency contact is your sister Bea."),
	})
	e.addTranscript("transcripts/s.jsonl", jsonl("Always remember: I am allergic to peanuts. I have type 1 diabetes and use an insulin pump. My emergency contact is Bea, never forget that."))
	e.script([]Fact{
		{Kind: "user", Slug: "peanut-allergy", Description: "Severely allergic to peanuts", Fact: "You are severely allergic to peanuts.", Pinned: true},
		{Kind: "user", Slug: "insulin-pump", Description: "Type 1 diabetes, uses an insulin pump", Fact: "You have type 1 diabetes and use an insulin pump.", Pinned: true},
		{Kind: "user", Slug: "emergency-contact", Description: "Emergency contact is Bea", Fact: "Your emergency contact is your sister Bea.", Pinned: true},
	}, []Decision{
		{Fact: 0, Action: ActionAdd},
		{Fact: 1, Action: ActionUpdate, Target: "user_memory/has-diabetes", Text: "You have type 1 diabetes and use an insulin pump."},
		{Fact: 2, Action: ActionNone, Target: "user_memory/emergency-contact"},
	})
	e.run()
	for _, rel := range []string{"user_memory/peanut-allergy.md", "user_memory/has-diabetes.md", "user_memory/emergency-contact.md"} {
		if m := e.mem(rel); !m.Front.Pinned || !strings.Contains(e.read(rel), "\npinned: true\n") {
			t.Errorf("%s is not pinned:\n%s", rel, e.read(rel))
		}
	}
	ctx := string(e.g.Context(memgraph.ContextOptions{}))
	if !strings.Contains(ctx, "## Pinned memory") || !strings.Contains(ctx, "You are severely allergic to peanuts.") {
		t.Errorf("the pinned fact is not in the context:\n%s", ctx)
	}
	// A fact without the mark pins nothing.
	e.addTranscript("transcripts/s2.jsonl", jsonl("I like figs."))
	e.script([]Fact{{Kind: "user", Slug: "likes-figs", Description: "Likes figs", Fact: "You like figs."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	e.run()
	if e.mem("user_memory/likes-figs.md").Front.Pinned {
		t.Error("an ordinary fact was pinned")
	}
}
