package fs

import (
	"context"
	"fmt"
	"sync"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/gitrepo"
	"github.com/mindmount/mindmount/memgraph/tracker"
)

// UserRepo is one user's loaded repository as the multi-user mount sees it.
type UserRepo struct {
	Graph   *memgraph.Graph
	Tracker *tracker.Tracker
	Repo    *gitrepo.Repo
	// Consolidate asks for a consolidation run (.mindmount/consolidate).
	Consolidate func()
}

// userProxy stands for one user's graph and tracker in that user's subtree
// of a multi-user mount. Every call loads the user (Users.Acquire) for its
// duration, so the subtree the kernel knows stays valid while the daemon
// unloads idle users and loads them again: the kernel never sees a user
// disappear for being idle.
type userProxy struct {
	users Users
	id    string
	dir   string

	mu      sync.Mutex
	tracker *tracker.Tracker // the tracker subs and obs are attached to
	subs    []func(paths []string)
	obs     []func(rel string)
}

var (
	_ model   = (*userProxy)(nil)
	_ changes = (*userProxy)(nil)
)

// with runs fn on the user's loaded repository.
func (p *userProxy) with(fn func(r *UserRepo)) error {
	r, release, err := p.users.Acquire(context.Background(), p.id)
	if err != nil {
		return err
	}
	defer release()
	p.attach(r)
	fn(r)
	return nil
}

// attach subscribes the mount's listeners to a freshly loaded tracker.
// Trackers are never reused after an unload, so the old one's listeners
// simply never fire again.
func (p *userProxy) attach(r *UserRepo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tracker == r.Tracker {
		return
	}
	p.tracker = r.Tracker
	for _, fn := range p.subs {
		r.Tracker.Subscribe(fn)
	}
	for _, fn := range p.obs {
		r.Tracker.Observe(fn)
	}
}

func (p *userProxy) Root() string { return p.dir }

func (p *userProxy) Update(rel string) error {
	var err error
	if lerr := p.with(func(r *UserRepo) { err = r.Graph.Update(rel) }); lerr != nil {
		return lerr
	}
	return err
}

func (p *userProxy) Remove(rel string) { p.with(func(r *UserRepo) { r.Graph.Remove(rel) }) }

func (p *userProxy) Memories(kind memgraph.Kind) (out []*memgraph.Memory) {
	p.with(func(r *UserRepo) { out = r.Graph.Memories(kind) })
	return out
}

// ReadOnly fails safe: a user that cannot be loaded protects everything.
func (p *userProxy) ReadOnly(rel string) bool {
	ro := true
	p.with(func(r *UserRepo) { ro = r.Graph.ReadOnly(rel) })
	return ro
}

func (p *userProxy) Index(kind memgraph.Kind) []byte {
	return p.render(func(r *UserRepo) []byte { return r.Graph.Index(kind) })
}

func (p *userProxy) Context(opt memgraph.ContextOptions) []byte {
	return p.render(func(r *UserRepo) []byte { return r.Graph.Context(opt) })
}

// render returns what fn renders, or why the user cannot be loaded.
func (p *userProxy) render(fn func(r *UserRepo) []byte) []byte {
	var out []byte
	if err := p.with(func(r *UserRepo) { out = fn(r) }); err != nil {
		return []byte(fmt.Sprintf("mindmount: user %s cannot be served: %v\n", p.id, err))
	}
	return out
}

func (p *userProxy) Touch(rel, writer string) {
	p.with(func(r *UserRepo) { r.Tracker.Touch(rel, writer) })
}

func (p *userProxy) Renamed(oldRel, newRel, writer string) {
	p.with(func(r *UserRepo) { r.Tracker.Renamed(oldRel, newRel, writer) })
}

func (p *userProxy) Status() []byte {
	return p.render(func(r *UserRepo) []byte { return r.Tracker.Status() })
}

func (p *userProxy) Subscribe(fn func(paths []string)) {
	p.mu.Lock()
	p.subs = append(p.subs, fn)
	if p.tracker != nil {
		p.tracker.Subscribe(fn)
	}
	p.mu.Unlock()
}

func (p *userProxy) Observe(fn func(rel string)) {
	p.mu.Lock()
	p.obs = append(p.obs, fn)
	if p.tracker != nil {
		p.tracker.Observe(fn)
	}
	p.mu.Unlock()
}

// search renders .mindmount/search/<q> with the user's recall.
func (p *userProxy) search(q string) []byte {
	return p.render(func(r *UserRepo) []byte {
		if s := searchFunc(r.Graph); s != nil {
			return s(q)
		}
		return []byte("recall not available\n")
	})
}

// head reads rel as the user's last commit has it.
func (p *userProxy) head(rel string) (data []byte, ok bool, err error) {
	if lerr := p.with(func(r *UserRepo) { data, ok, err = r.Repo.ReadHead(rel) }); lerr != nil {
		return nil, false, lerr
	}
	return data, ok, err
}

// consolidate asks for a run (never blocks the writer of the control file:
// it is called on its own goroutine).
func (p *userProxy) consolidate() {
	p.with(func(r *UserRepo) {
		if r.Consolidate != nil {
			r.Consolidate()
		}
	})
}

// deps is what newMountState needs to project the user's subtree.
func (p *userProxy) deps() deps {
	return deps{graph: p, tracker: p, search: p.search, head: p.head}
}
