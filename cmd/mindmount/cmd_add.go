package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

// addCommand is "mindmount add".
var addCommand = newCommand(command{
	name:    "add",
	usage:   `add REPO "fact" [--description TEXT] [--kind user|character] [--topic TOPIC]`,
	summary: "write one new memory without writing its frontmatter by hand",
	help: `Writes one new memory into REPO and commits it, then prints its path.
The file is named from the description (or the fact's first line) as
consolidation names the memories it adds: a slug, "-2", "-3"... when the name
is taken, in user_memory/ (--kind user, the default) or character_memory/
(--kind character).

The memory is judged like a write through the mount: a secret in it, a bad
topic or anything else the tracker would not commit refuses it, and
nothing is written. While a daemon (mount, watch, mcp, ui) serves REPO, the
daemon writes and commits it; otherwise mindmount add does, as its own
one writer of REPO for that moment.

Example:

    mindmount add ~/memory "You are allergic to peanuts." --topic allergy`,
}, runAdd)

// addOptions are the flags of "mindmount add".
type addOptions struct {
	description, kind, topic string
}

func (o *addOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.description, "description", "", "one line that says what the memory is (default: the fact's first line)")
	fl.StringVar(&o.kind, "kind", "user", "`user` (a fact about the user) or character (how to talk to them)")
	fl.StringVar(&o.topic, "topic", "", "what the memory is about, not its value (home-city, diet): lower-case a-z, 0-9 and dashes")
}

// errAddRefused means the new memory holds something the tracker would not
// commit; nothing was written.
var errAddRefused = errors.New("nothing was added")

// runAdd writes one new memory into REPO: through the daemon serving it,
// else itself.
func runAdd(ctx context.Context, o *addOptions, args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	spec := control.NewMemory{Fact: args[1], Description: o.description, Kind: o.kind, Topic: o.topic}
	if spec.Kind != "user" && spec.Kind != "character" {
		return fmt.Errorf("--kind %q: give user or character", spec.Kind)
	}
	if strings.TrimSpace(spec.Fact) == "" {
		return fmt.Errorf("the fact is empty: say what to remember")
	}
	dir := args[0]
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return err
	}
	a, err := control.Ask(ctx, r.GitDir(), control.Request{Verb: control.Add, Memory: &spec})
	if !errors.Is(err, control.ErrNoDaemon) {
		if err != nil {
			return fmt.Errorf("the daemon serving %s: %w", dir, err)
		}
		var rel string
		if err := json.Unmarshal(a.Data, &rel); err != nil {
			return fmt.Errorf("the daemon's answer: %w", err)
		}
		fmt.Fprintln(stdout, rel)
		return nil
	}
	unlock, err := r.LockDaemon()
	if errors.Is(err, gitrepo.ErrDaemonRunning) {
		return fmt.Errorf("a daemon without a control socket serves %s: write the memory through its mount, or stop it first", dir)
	}
	if err != nil {
		return err
	}
	defer unlock() // no daemon starts on the repository while this writes
	rel, _, err := addMemory(ctx, tracker.Alone{Repo: r}, r, spec, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, rel)
	return nil
}

// answerAdd is a daemon's answer to "mindmount add": the memory written
// through its own tracker.
func answerAdd(ctx context.Context, rt *host.Runtime, req control.Request) (control.Answer, error) {
	if req.Memory == nil {
		return control.Answer{}, fmt.Errorf("add: no memory in the request")
	}
	rel, hash, err := addMemory(ctx, rt.Tracker, rt.Repo, *req.Memory, time.Now())
	if err != nil {
		return control.Answer{}, err
	}
	data, err := json.Marshal(rel)
	return control.Answer{Commit: hash, Data: data}, err
}

// addMemory names, renders, judges and commits one new memory through w,
// and returns its path and the commit. A memory the tracker would refuse
// is errAddRefused with every problem (file, line and rule, never a
// secret) in the message.
func addMemory(ctx context.Context, w tracker.Writer, r *gitrepo.Repo, spec control.NewMemory, now time.Time) (rel, hash string, err error) {
	folder := memgraph.UserDir
	if spec.Kind == "character" {
		folder = memgraph.CharacterDir
	}
	fact := strings.TrimSpace(spec.Fact)
	first, _, _ := strings.Cut(fact, "\n")
	desc := cmp.Or(strings.TrimSpace(spec.Description), first)
	slug, err := memgraph.UniqueSlug(memgraph.Slug(desc), func(slug string) bool {
		p := folder + "/" + slug + ".md"
		_, inHead, err := r.ReadHead(p)
		if inHead || err != nil {
			return true
		}
		_, err = r.Tree().Lstat(p)
		return !errors.Is(err, fs.ErrNotExist)
	})
	if err != nil {
		return "", "", err
	}
	rel = folder + "/" + slug + ".md"
	m := memgraph.NewMemory(rel, "", desc, fact, "", now)
	m.SetSource("mindmount add")
	if spec.Topic != "" {
		m.SetTopic(spec.Topic)
	}
	data := m.Render()
	hash, err = w.Apply(ctx, tracker.Change{
		Changes:  []gitrepo.Change{{Path: rel, Data: data}},
		Message:  "add " + rel + "\n\n" + memgraph.SafeLine(desc) + "\n",
		Author:   gitrepo.Writer("add"),
		Worktree: true,
		Clean:    true,
	})
	var refused *tracker.RefusedError
	if errors.As(err, &refused) {
		// The gate's answer, a problem a line, never a secret's value.
		lines := make([]string, len(refused.Problems))
		for i, p := range refused.Problems {
			lines[i] = p.String()
		}
		return "", "", fmt.Errorf("%w:\n  %s", errAddRefused, strings.Join(lines, "\n  "))
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", errAddRefused, err)
	}
	return rel, hash, nil
}
