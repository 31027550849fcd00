package recall

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"
)

const (
	// fusionDepth is how many results of each ranking enter the fusion.
	fusionDepth = 50
	// rrfK is the usual reciprocal-rank-fusion constant: it damps the
	// difference between the first few ranks of either list.
	rrfK = 60
	// QueryTimeout bounds the embedding of a query; past it the keyword
	// ranking answers alone.
	QueryTimeout = 2 * time.Second
	// downFor is how long the query path skips a model that just failed, so
	// a dead server costs one timeout, not one per query.
	downFor = 30 * time.Second
	// maxBackoff bounds the wait between background fill attempts.
	maxBackoff = 5 * time.Minute
	qcacheMax  = 256
)

// vecState is a document's embedding: the cache key of its text and, once
// known, the normalised vector.
type vecState struct {
	key [32]byte
	vec []float32
}

// embedText is what gets embedded for a document.
func embedText(d Doc) string {
	return d.Title + "\n" + d.Description + "\n" + d.Fact
}

// vectorIndex is the vector side of an Index.
type vectorIndex struct {
	v          *Vectors
	background bool
	pending    map[string]struct{} // paths without a vector (guarded by Index.mu)
	wake       chan struct{}
	stop       chan struct{}
	done       chan struct{}

	qmu       sync.Mutex
	qcache    map[string][]float32
	downUntil time.Time
}

// SetVectors enables vector recall with the cache v. With background set, a
// goroutine embeds new and changed documents as they are put; without it,
// only vectors already cached (or built by Reindex) are used. Writes never
// wait for the model either way. Call Close to stop the goroutine.
func (ix *Index) SetVectors(v *Vectors, background bool) error {
	if err := v.Load(); err != nil {
		return err
	}
	vi := &vectorIndex{
		v: v, background: background,
		pending: map[string]struct{}{},
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		qcache:  map[string][]float32{},
	}
	ix.Close()
	ix.mu.Lock()
	ix.vectors = vi
	for _, e := range ix.byPath {
		vi.attach(e, vecState{})
	}
	ix.mu.Unlock()
	if background {
		go ix.fill(vi)
	} else {
		close(vi.done)
	}
	return nil
}

// Close stops background embedding. The index stays usable.
func (ix *Index) Close() {
	ix.mu.Lock()
	vi := ix.vectors
	ix.vectors = nil
	ix.mu.Unlock()
	if vi != nil {
		close(vi.stop)
		<-vi.done
	}
}

func (ix *Index) vectorsOf() *vectorIndex {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.vectors
}

// VectorCount returns how many documents have a vector and how many are
// indexed.
func (ix *Index) VectorCount() (withVector, total int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, e := range ix.byPath {
		if e.vec.vec != nil {
			withVector++
		}
	}
	return withVector, len(ix.byPath)
}

// attach gives e its vector from the cache, or queues it. Called with
// Index.mu held; never calls the model.
func (vi *vectorIndex) attach(e *entry, prev vecState) {
	k := vi.v.key(embedText(e.doc))
	e.vec = vecState{key: k}
	if prev.key == k && prev.vec != nil {
		e.vec.vec = prev.vec
		return
	}
	if vec := vi.v.cached(k); vec != nil {
		e.vec.vec = vec
		return
	}
	vi.pending[e.doc.Path] = struct{}{}
	if vi.background {
		select {
		case vi.wake <- struct{}{}:
		default:
		}
	}
}

// fill embeds pending documents in the background until Close.
func (ix *Index) fill(vi *vectorIndex) {
	defer close(vi.done)
	defer func() {
		if r := recover(); r != nil {
			slog.Error("recall: background embedding stopped", "panic", r)
		}
	}()
	backoff := time.Second
	for {
		select {
		case <-vi.stop:
			return
		case <-vi.wake:
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			go func() {
				select {
				case <-vi.stop:
				case <-ctx.Done():
				}
				cancel()
			}()
			n, err := ix.embedPending(ctx, vi, embedBatch, nil)
			cancel()
			if err != nil {
				slog.Warn("recall: embedding memories failed; keyword recall only until it works", "err", err, "retry_in", backoff)
				t := time.NewTimer(backoff)
				select {
				case <-vi.stop:
					t.Stop()
					return
				case <-t.C:
				}
				backoff = min(backoff*2, maxBackoff)
				continue
			}
			backoff = time.Second
			if n == 0 {
				break
			}
		}
	}
}

// embedPending embeds up to limit pending documents (all with limit 0),
// attaching vectors to entries whose text has not changed meanwhile. It
// returns how many it embedded.
func (ix *Index) embedPending(ctx context.Context, vi *vectorIndex, limit int, progress func(done, total int)) (int, error) {
	type job struct {
		path string
		key  [32]byte
		text string
	}
	ix.mu.Lock()
	var jobs []job
	for p := range vi.pending {
		e := ix.byPath[p]
		if e == nil || e.vec.vec != nil {
			delete(vi.pending, p)
			continue
		}
		jobs = append(jobs, job{p, e.vec.key, embedText(e.doc)})
		if limit > 0 && len(jobs) == limit {
			break
		}
	}
	ix.mu.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].path < jobs[j].path })

	done := 0
	if progress != nil {
		progress(0, len(jobs))
	}
	for start := 0; start < len(jobs); start += embedBatch {
		batch := jobs[start:min(start+embedBatch, len(jobs))]
		texts := make([]string, len(batch))
		for i, j := range batch {
			texts[i] = j.text
		}
		vecs, err := vi.v.Embed(ctx, texts)
		if err != nil {
			return done, err
		}
		ix.mu.Lock()
		for i, j := range batch {
			if e := ix.byPath[j.path]; e != nil && e.vec.key == j.key {
				e.vec.vec = vecs[i]
				delete(vi.pending, j.path)
			}
		}
		ix.mu.Unlock()
		done += len(batch)
		if progress != nil {
			progress(done, len(jobs))
		}
	}
	return done, nil
}

// Reindex embeds every document that has no vector yet, reporting progress
// after each batch (done of total documents). It needs SetVectors first.
func (ix *Index) Reindex(ctx context.Context, progress func(done, total int)) (int, error) {
	vi := ix.vectorsOf()
	if vi == nil {
		return 0, nil
	}
	n, err := ix.embedPending(ctx, vi, 0, progress)
	if err != nil {
		return n, err
	}
	// Reindex is the explicit, offline moment to drop the vectors of
	// memories that changed or went away, once they outnumber the live ones.
	ix.mu.RLock()
	keep := make(map[[32]byte]bool, len(ix.byPath))
	for _, e := range ix.byPath {
		keep[e.vec.key] = true
	}
	ix.mu.RUnlock()
	if vi.v.Len() > 2*len(keep)+compactSlack {
		if err := vi.v.compact(keep); err != nil {
			return n, err
		}
	}
	return n, nil
}

// compactSlack keeps small caches from being rewritten for a few strays.
const compactSlack = 64

// queryVector embeds q within QueryTimeout, or returns nil.
func (vi *vectorIndex) queryVector(ctx context.Context, q string) []float32 {
	vi.qmu.Lock()
	if vec, ok := vi.qcache[q]; ok {
		vi.qmu.Unlock()
		return vec
	}
	if time.Now().Before(vi.downUntil) {
		vi.qmu.Unlock()
		return nil
	}
	vi.qmu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	vecs, err := vi.v.e.Embed(ctx, []string{q})
	var vec []float32
	if err == nil && len(vecs) == 1 {
		vec = normalize(vecs[0])
	}
	vi.qmu.Lock()
	defer vi.qmu.Unlock()
	if vec == nil {
		slog.Debug("recall: query embedding failed; keyword ranking only", "err", err)
		vi.downUntil = time.Now().Add(downFor)
		return nil
	}
	if len(vi.qcache) >= qcacheMax {
		clear(vi.qcache)
	}
	vi.qcache[q] = vec
	return vec
}

// rankLocked returns up to n eligible docs by cosine similarity to qvec.
func (vi *vectorIndex) rankLocked(ix *Index, qvec []float32, opt Options, n int) []scored {
	out := make([]scored, 0, n+1)
	for _, e := range ix.byID {
		if e == nil || e.vec.vec == nil || !ix.eligible(e.id, opt) {
			continue
		}
		out = ix.keepBest(out, scored{e.id, dot(qvec, e.vec.vec)}, n)
	}
	return out
}

// fuse combines rankings by reciprocal rank fusion: each list gives a doc
// 1/(rrfK + rank). A doc near the top of both lists wins; a doc only one
// list likes still appears.
func (ix *Index) fuse(lists ...[]scored) []scored {
	sum := map[int32]float64{}
	for _, l := range lists {
		for r, s := range l {
			sum[s.id] += 1 / float64(rrfK+r+1)
		}
	}
	out := make([]scored, 0, len(sum))
	for id, s := range sum {
		out = append(out, scored{id, s})
	}
	sort.Slice(out, func(i, j int) bool { return ix.better(out[i], out[j]) })
	return out
}
