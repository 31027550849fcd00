package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// open opens the repository at dir for a sync: go-git over its files, with
// every pack a fetch receives checked object by object, as it streams in,
// before go-git reads any of it (boundedStorage).
func open(dir string) (*git.Repository, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, err
	}
	fs, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return r, nil
	}
	bs := boundedStorage{fs, &packGuard{}}
	wt, err := r.Worktree()
	if err != nil {
		return git.Open(bs, nil)
	}
	return git.Open(bs, wt.Filesystem)
}

// packGuard ends a fetch whose pack was refused. The remote keeps
// sending (a git-upload-pack child, for a remote on this machine, blocks
// writing the rest of the pack), and go-git waits for that child when the
// fetch ends: stopping to read would leave both hanging. Instead the
// refused rest is read into nothing while the fetch's context is
// cancelled, so go-git's next read fails, and it kills and reaps the child
// (or drops the connection) as for any cancelled fetch.
type packGuard struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	err    error
}

// refuse records why the pack was refused (the first reason wins) and
// cancels the fetch.
func (g *packGuard) refuse(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
		if g.cancel != nil {
			g.cancel()
		}
	}
}

// refused is why the last fetch's pack was refused, nil when it was not.
func (g *packGuard) refused() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// fetchContext is the context for a fetch through repo (made by open): a
// refused pack cancels it. refused tells afterwards why, if it did.
func fetchContext(ctx context.Context, repo *git.Repository) (fctx context.Context, cancel context.CancelFunc, refused func() error) {
	fctx, cancel = context.WithCancel(ctx)
	bs, ok := repo.Storer.(boundedStorage)
	if !ok {
		return fctx, cancel, func() error { return nil }
	}
	bs.g.mu.Lock()
	bs.g.cancel, bs.g.err = cancel, nil
	bs.g.mu.Unlock()
	return fctx, cancel, bs.g.refused
}

// boundedStorage is go-git's filesystem storage, except that a fetched
// pack reaches it only once every object in it is at most MaxBlob.
// go-git's own indexing of a pack reads each object whole into memory
// (and a delta's target whole, whatever size its header claims): a 600 MB
// blob cost a daemon 2.4 GB. Here the pack streams to a file beside the
// repository's packs while its headers are checked, and the first object
// over the limit ends the download: nothing of it is stored, and no object
// is ever held in memory, whatever the remote sends.
type boundedStorage struct {
	*filesystem.Storage
	g *packGuard
}

// PackfileWriter is where go-git's fetch writes the pack it receives.
func (s boundedStorage) PackfileWriter() (io.WriteCloser, error) {
	dir := s.Filesystem().Root()
	if dir == "" {
		return nil, errors.New("the repository's git folder is unknown")
	}
	dir = filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "tmp_fetch_")
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	w := &checkedPack{store: s.Storage, g: s.g, tmp: tmp, pw: pw, checked: make(chan error, 1)}
	go func() { w.checked <- checkPack(pr) }()
	return w, nil
}

// checkedPack is a pack on its way in: kept in tmp and read by checkPack
// at the same time; handed to go-git's writer only once checked whole.
type checkedPack struct {
	store   *filesystem.Storage
	g       *packGuard
	failed  error // the check's refusal: the rest is read into nothing
	tmp     *os.File
	pw      *io.PipeWriter
	checked chan error
	n       int64
}

func (w *checkedPack) Write(p []byte) (int, error) {
	if w.failed != nil {
		return len(p), nil // refused: the fetch is being cancelled (packGuard)
	}
	if _, err := w.tmp.Write(p); err != nil {
		return 0, err
	}
	// The pipe hands p to checkPack and waits until it has taken it; an
	// object over the limit closes the pipe with the error, which ends
	// the download: the fetch is cancelled, and nothing more is kept.
	if _, err := w.pw.Write(p); err != nil {
		w.failed = err
		w.g.refuse(err)
		return len(p), nil
	}
	w.n += int64(len(p))
	return len(p), nil
}

// Close waits for the check; a pack that passed is given to go-git, which
// indexes and stores it. The temporary file is gone either way.
func (w *checkedPack) Close() error {
	defer func() {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
	}()
	w.pw.Close()
	err := <-w.checked
	if w.n == 0 {
		return nil // nothing came; go-git says so itself
	}
	if err != nil {
		return err
	}
	if _, err := w.tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	inner, err := w.store.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := io.Copy(inner, w.tmp); err != nil {
		inner.Close()
		return err
	}
	return inner.Close()
}

// checkPack reads a pack from r as it arrives and fails at the first
// object larger than MaxBlob: a whole object by the size in its header, a
// delta by its own size and by the size of the object it makes (the
// second number of the delta's own header). Only a delta's first bytes are
// kept; everything else is inflated into nothing. It reads r to its end,
// or closes it with the error.
func checkPack(r *io.PipeReader) error {
	err := scanPack(r)
	if err != nil {
		r.CloseWithError(err)
		return err
	}
	io.Copy(io.Discard, r) // the trailer, and anything after it
	return nil
}

func scanPack(r io.Reader) error {
	sc := packfile.NewScanner(r)
	_, count, err := sc.Header()
	if err != nil {
		return fmt.Errorf("the remote's pack: %w", err)
	}
	for i := uint32(0); i < count; i++ {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("the remote's pack: %w", err)
		}
		if oh.Length > MaxBlob {
			return tooLarge(oh.Length)
		}
		var head deltaHead
		var sink io.Writer = io.Discard
		delta := oh.Type == plumbing.OFSDeltaObject || oh.Type == plumbing.REFDeltaObject
		if delta {
			sink = &head
		}
		if _, _, err := sc.NextObject(sink); err != nil {
			return fmt.Errorf("the remote's pack: %w", err)
		}
		if delta {
			target, ok := head.target()
			if !ok {
				return errors.New("the remote's pack: a delta without a valid header")
			}
			if target > uint64(MaxBlob) {
				return tooLarge(int64(min(target, 1<<62)))
			}
		}
	}
	return nil
}

func tooLarge(n int64) error {
	return fmt.Errorf("%w: the remote sent a file of %s, more than the %s a sync takes; nothing was fetched — remove it from the remote's history", ErrBlobTooLarge, sizeText(n), sizeText(MaxBlob))
}

// sizeText says n bytes in whole KiB, MiB or GiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// deltaHead keeps the first bytes of a delta: its header, two sizes.
type deltaHead struct{ b []byte }

func (h *deltaHead) Write(p []byte) (int, error) {
	if room := 20 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// target is the size of the object the delta makes: the second of the
// two base-128 numbers its data starts with (git's delta format).
func (h *deltaHead) target() (uint64, bool) {
	b := h.b
	var sizes [2]uint64
	for i := range sizes {
		var shift uint
		for {
			if len(b) == 0 || shift > 63 {
				return 0, false
			}
			c := b[0]
			b = b[1:]
			sizes[i] |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
	}
	return sizes[1], true
}
