package consolidate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// Review: the dreams that wait (merge: review, or an automatic merge that
// could not be settled), what each proposes, and a person's verdict.

// Reviewer is who approves or rejects a dream in the commit it makes.
var Reviewer = gitrepo.Writer("reviewer")

// Dream is a pending dream as review shows it.
type Dream struct {
	N        int
	Branch   string   // mindmount/dream/<n>
	Base     string   // the commit it started from
	Tip      string   // its last commit
	Messages []string // of its commits, oldest first
	Sources  []string // Mindmount-Source trailers of its commits
	Changes  []ProposedChange
}

// ProposedChange is one memory a dream adds, updates or retires.
type ProposedChange struct {
	Path        string `json:"path"`
	Kind        string `json:"kind"` // "added", "updated", "contradicted", "used" (an access-log stamp only)
	Description string `json:"description"`
	Fact        string `json:"fact"`
}

// Counts returns how many memories the dream adds, updates and retires.
func (d Dream) Counts() (added, updated, contradicted int) {
	for _, ch := range d.Changes {
		switch ch.Kind {
		case "added":
			added++
		case "updated":
			updated++
		case "contradicted":
			contradicted++
		}
	}
	return
}

// mergeMode is the repository's merge setting: its own operator file,
// else the default one (serve's), else auto.
func (c *Consolidator) mergeMode() memgraph.MergeMode {
	own := c.cfg.Operator
	if own == nil {
		own = &memgraph.OperatorSource{Path: filepath.Join(c.r.GitDir(), memgraph.OperatorFile)}
		c.cfg.Operator = own
	}
	for _, src := range []*memgraph.OperatorSource{own, c.cfg.Default} {
		if o, _ := src.Get(); o.Merge != "" {
			return o.Merge
		}
	}
	return memgraph.MergeAuto
}

// gateRules are the gate's rules for consolidation's changes (a prepared
// change), with commit_secrets from the repository's operator file, else
// the default one (serve's).
func (c *Consolidator) gateRules() tracker.Rules {
	c.mergeMode() // fills in c.cfg.Operator
	rules := tracker.Rules{Door: tracker.DoorPrepared}
	for _, src := range []*memgraph.OperatorSource{c.cfg.Operator, c.cfg.Default} {
		if o, _ := src.Get(); o.CommitSecrets {
			rules.CommitSecrets = true
		}
	}
	return rules
}

// MergeMode reports how this repository's dreams are integrated.
func (c *Consolidator) MergeMode() memgraph.MergeMode { return c.mergeMode() }

// startCursor is where a run starts: HEAD's cursor (with its floor) and,
// under review, every waiting dream's, so a run never proposes again what
// a dream waiting for a person already proposes. own is HEAD's cursor
// alone: the new dream commits its own advances on top of it, never the
// other waiting dreams' positions, or rejecting (or approving) it would
// also mark their transcripts done and take them off the list unmerged.
func (c *Consolidator) startCursor(mode memgraph.MergeMode) (start, own *Cursor, err error) {
	own, err = c.headCursor()
	if err != nil || mode != memgraph.MergeReview {
		return own, own, err
	}
	dreams, err := c.waitingDreams(own)
	if err != nil {
		return nil, nil, err
	}
	start = own.Clone()
	for _, d := range dreams {
		if tc, err := c.cursorAt(d.Tip); err == nil {
			start.Merge(tc)
		}
	}
	return start, own, nil
}

// cursorAt reads the cursor of a commit.
func (c *Consolidator) cursorAt(commit string) (*Cursor, error) {
	data, _, err := c.r.ReadAt(commit, CursorFile)
	if err != nil {
		return nil, err
	}
	return ParseCursor(data)
}

// covered reports whether head (with its floor) consumed everything cur
// consumed: a dream merged, rejected, or redone by a later one.
func covered(head, cur *Cursor) bool {
	for rel, e := range cur.Transcripts {
		best := head.Transcripts[rel].Messages
		for _, f := range head.floor[rel] {
			best = max(best, f.Messages)
		}
		if best < e.Messages {
			return false
		}
	}
	return true
}

// Dreams lists the dreams that wait, oldest first.
func (c *Consolidator) Dreams() ([]Dream, error) {
	head, err := c.headCursor()
	if err != nil {
		return nil, err
	}
	return c.waitingDreams(head)
}

// waitingDreams lists the dreams whose cursor head has not consumed, but
// not the one a run still writes (dreamHold): it is no proposal yet.
func (c *Consolidator) waitingDreams(head *Cursor) ([]Dream, error) {
	branches, err := c.r.Branches(DreamPrefix)
	if err != nil || len(branches) == 0 {
		return nil, err
	}
	held, err := heldDream(c.r.GitDir())
	if err != nil {
		return nil, err
	}
	delete(branches, held)
	repo, err := git.PlainOpenWithOptions(c.r.Dir(), &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, err
	}
	var out []Dream
	for name, tip := range branches {
		n, err := strconv.Atoi(strings.TrimPrefix(name, DreamPrefix))
		if err != nil {
			continue // not one of ours
		}
		tc, err := c.cursorAt(tip)
		if err != nil || covered(head, tc) {
			continue
		}
		d, err := c.describe(repo, n, name, tip)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// describe reads a dream: its commits (the first-parent chain of the
// commits naming the branch in a Mindmount-Dream trailer), its base, and
// the memories it changes.
func (c *Consolidator) describe(repo *git.Repository, n int, branch, tip string) (Dream, error) {
	d := Dream{N: n, Branch: branch, Tip: tip}
	id := plumbing.NewHash(tip)
	for range 10000 {
		cm, err := repo.CommitObject(id)
		if err != nil {
			return d, err
		}
		if !strings.Contains(cm.Message, "\nMindmount-Dream: "+branch+"\n") {
			d.Base = id.String()
			break
		}
		d.Messages = append([]string{cm.Message}, d.Messages...)
		for _, l := range strings.Split(cm.Message, "\n") {
			if src, ok := strings.CutPrefix(l, "Mindmount-Source: "); ok {
				d.Sources = append([]string{src}, d.Sources...)
			}
		}
		if len(cm.ParentHashes) == 0 {
			break
		}
		id = cm.ParentHashes[0]
	}
	paths, err := c.r.Changed(d.Base, d.Tip)
	if err != nil {
		return d, err
	}
	for _, p := range paths {
		if !memgraph.IsMemoryPath(p) {
			continue
		}
		before, _, _ := c.r.ReadAt(d.Base, p)
		after, ok, _ := c.r.ReadAt(d.Tip, p)
		if !ok {
			continue
		}
		m, _ := memgraph.Parse(p, after)
		ch := ProposedChange{Path: p, Description: memgraph.SafeLine(m.Front.Description), Fact: memgraph.ClipLine(m.Fact, 300)}
		var old *memgraph.Memory
		if before != nil {
			old, _ = memgraph.Parse(p, before)
		}
		switch {
		case old == nil:
			ch.Kind = "added"
		case old.Active() && !m.Active():
			ch.Kind = "contradicted"
		case old.Fact != m.Fact || old.Front.Description != m.Front.Description || old.Front.Pinned != m.Front.Pinned:
			ch.Kind = "updated"
		default:
			ch.Kind = "used"
		}
		d.Changes = append(d.Changes, ch)
	}
	return d, nil
}

// find returns pending dream n.
func (c *Consolidator) find(n int) (Dream, error) {
	ds, err := c.Dreams()
	if err != nil {
		return Dream{}, err
	}
	for _, d := range ds {
		if d.N == n {
			return d, nil
		}
	}
	return Dream{}, fmt.Errorf("%w: %d (mindmount review lists them)", ErrNoDream, n)
}

// DreamDiff is the unified diff of what pending dream n proposes.
func (c *Consolidator) DreamDiff(n int) (string, error) {
	_, diff, err := c.ShowDream(n)
	return diff, err
}

// ShowDream is pending dream n and the unified diff of what it proposes,
// at the same tip: the one an approval of what was shown names.
func (c *Consolidator) ShowDream(n int) (Dream, string, error) {
	d, err := c.find(n)
	if err != nil {
		return d, "", err
	}
	diff, err := c.diff(d)
	return d, diff, err
}

// diff is the unified diff of d from its base to its tip.
func (c *Consolidator) diff(d Dream) (string, error) {
	repo, err := git.PlainOpenWithOptions(c.r.Dir(), &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return "", err
	}
	tip, err := repo.CommitObject(plumbing.NewHash(d.Tip))
	if err != nil {
		return "", err
	}
	var patch *object.Patch
	if d.Base == "" {
		t, err := tip.Tree()
		if err != nil {
			return "", err
		}
		ch, err := object.DiffTree(nil, t)
		if err != nil {
			return "", err
		}
		patch, err = ch.Patch()
		if err != nil {
			return "", err
		}
	} else {
		base, err := repo.CommitObject(plumbing.NewHash(d.Base))
		if err != nil {
			return "", err
		}
		if patch, err = base.Patch(tip); err != nil {
			return "", err
		}
	}
	// What the reviewer reads is what the files hold: no bidi override or
	// invisible character may show them text in another order.
	return memgraph.SafeText(patch.String()), nil
}

// ErrDreamMoved means the dream's branch is not at the tip the reviewer
// was shown: approving it would merge something nobody saw. Nothing
// changed; show it again.
var ErrDreamMoved = errors.New("the dream changed since it was shown")

// ErrNoTip means an approval did not say which tip of the dream it
// approves.
var ErrNoTip = errors.New("approve needs the dream's tip as it was shown (mindmount review show N prints it)")

// reviewLocks makes one review action at a time per repository in this
// process, so two approvals of one dream cannot both merge it.
var reviewLocks sync.Map // dir -> *sync.Mutex

func (c *Consolidator) lockReview() func() {
	lk, _ := reviewLocks.LoadOrStore(c.r.Dir(), &sync.Mutex{})
	lk.(*sync.Mutex).Lock()
	return lk.(*sync.Mutex).Unlock
}

// SameTip reports whether shown (a full hash or a prefix of at least 7
// hex digits, as review prints it) names tip.
func SameTip(shown, tip string) bool {
	shown = strings.ToLower(strings.TrimSpace(shown))
	if len(shown) < 7 || len(shown) > len(tip) {
		return false
	}
	for _, r := range shown {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return strings.HasPrefix(tip, shown)
}

// Approve merges pending dream n into the live branch (as merge: auto
// would have) and returns the merge commit — exactly the tip the reviewer
// was shown, or nothing: a dream whose branch moved since is refused
// (ErrDreamMoved), one a run still writes is not pending (ErrNoDream).
// The merge records n as given and the branch is then deleted, as a
// rejected dream's is; a crash between the two leaves a branch that no
// longer waits (the cursor covers it).
func (c *Consolidator) Approve(ctx context.Context, n int, tip string) (string, error) {
	if strings.TrimSpace(tip) == "" {
		return "", ErrNoTip
	}
	defer c.lockReview()()
	d, err := c.find(n)
	if err != nil {
		return "", err
	}
	if !SameTip(tip, d.Tip) {
		err := fmt.Errorf("%w: %s is at %s, not %s; nothing was merged (show it again)", ErrDreamMoved, d.Branch, gitrepo.ShortHash(d.Tip), memgraph.ClipLine(tip, 40))
		c.setLast("", err)
		return "", err
	}
	if d.Base == d.Tip {
		// the tip is no commit of the run (something else moved the
		// branch): the dream shows nothing, and a merge of nothing is
		// no approval
		err := fmt.Errorf("%w: %s's tip %s is no commit of its run; nothing was merged", ErrDreamMoved, d.Branch, gitrepo.ShortHash(d.Tip))
		c.setLast("", err)
		return "", err
	}
	hash, err := c.merge(ctx, &dream{n: d.N, branch: d.Branch, base: d.Base, tip: d.Tip, chunks: d.Messages}, "Mindmount-Approved: "+d.Branch+"\n", d.N)
	if err == nil {
		if _, derr := c.w.Apply(ctx, tracker.Change{Branch: d.Branch, DeleteBranch: true, Parents: []string{d.Tip}, Author: Reviewer, When: c.cfg.Now()}); derr != nil {
			err = fmt.Errorf("merged as %s, but the branch %s stays: %w", gitrepo.ShortHash(hash), d.Branch, derr)
		}
	}
	c.setLast(fmt.Sprintf("%s approved: merged as %s", d.Branch, gitrepo.ShortHash(hash)), err)
	return hash, err
}

// Reject drops pending dream n: no memory changes, and its transcripts are
// never proposed again — one small commit moves the cursor past them (and
// records the dream's number as given) with the rejection and the reason
// in its trailers — and then the branch is deleted through the tracker.
// In that order: a crash between the two leaves a branch that no longer
// waits (the cursor covers it), never a rejection that is proposed again.
func (c *Consolidator) Reject(ctx context.Context, n int, reason string) (string, error) {
	defer c.lockReview()()
	d, err := c.find(n)
	if err != nil {
		return "", err
	}
	tc, err := c.cursorAt(d.Tip)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "consolidate: reject %s (%s)\n\n", d.Branch, strings.Join(d.Sources, ", "))
	for _, ch := range d.Changes {
		if ch.Kind != "used" {
			fmt.Fprintf(&b, "  not %s: %s — %s\n", ch.Kind, ch.Path, ch.Description)
		}
	}
	b.WriteString("\nMindmount-Rejected: " + d.Branch + "\n")
	if r := memgraph.ClipLine(redacted(reason), 300); r != "" {
		b.WriteString("Mindmount-Reason: " + r + "\n")
	}
	for attempt := 0; ; attempt++ {
		head, err := c.r.Head()
		if err != nil {
			return "", err
		}
		cur, err := c.cursorAt(head)
		if err != nil {
			return "", err
		}
		cur.Merge(tc)
		cur.Dreams = max(cur.Dreams, d.N)
		hash, err := c.w.Apply(ctx, tracker.Change{Changes: []gitrepo.Change{{Path: CursorFile, Data: cur.Render()}},
			Message: b.String(), Author: Reviewer, When: c.cfg.Now(), Worktree: true, Parents: []string{head}})
		if errors.Is(err, gitrepo.ErrRefMoved) && attempt < maxMergeAttempts {
			continue // the cursor moved meanwhile: read it again
		}
		if err == nil {
			_, err = c.w.Apply(ctx, tracker.Change{Branch: d.Branch, DeleteBranch: true, Parents: []string{d.Tip}, Author: Reviewer, When: c.cfg.Now()})
			if err != nil {
				err = fmt.Errorf("rejected in %s, but the branch %s stays: %w", gitrepo.ShortHash(hash), d.Branch, err)
			}
		}
		c.setLast(fmt.Sprintf("%s rejected", d.Branch), err)
		return hash, err
	}
}

// setLast records a review action's outcome for Status.
func (c *Consolidator) setLast(what string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now().Format("2006-01-02 15:04:05")
	if err != nil {
		if errors.Is(err, ErrNoDream) {
			return
		}
		c.last = fmt.Sprintf("review %s failed: %s", now, redacted(err.Error()))
		return
	}
	c.last = fmt.Sprintf("review %s: %s", now, what)
}
