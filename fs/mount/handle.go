package mount

import (
	"context"
	"sync"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
)

// handle is an open backing file. It forwards everything to go-fuse's
// loopback file and, for handles opened for writing, tells the graph and the
// tracker when the writer closes the file.
type handle struct {
	*fusefs.LoopbackFile
	n      *node
	write  bool
	writer string // process that opened it; flush may name a later one

	mu      sync.Mutex
	flushed bool // a flush reported the change; release need not again
}

// handleNoPassthrough hides PassthroughFd, for mounts that keep all I/O in
// the daemon (the default, see Options.Passthrough).
type handleNoPassthrough struct{ *handle }

func (h handleNoPassthrough) PassthroughFd() (int, bool) { return -1, false }

func (m *mountState) wrapHandle(n *node, fh fusefs.FileHandle, write bool, writer string) fusefs.FileHandle {
	lf, ok := fh.(*fusefs.LoopbackFile)
	if !ok || n == nil {
		return fh
	}
	h := &handle{LoopbackFile: lf, n: n, write: write, writer: writer}
	if !m.opt.Passthrough {
		return handleNoPassthrough{h}
	}
	return h
}

var _ = (fusefs.FileFlusher)((*handle)(nil))

// Flush runs on every close(2) of a written file, synchronously: by the time
// close returns, the graph has the new content and the kernel has dropped
// its cached indexes, so `echo > f; cat user_memory.md` sees the change.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	errno := h.LoopbackFile.Flush(ctx)
	if h.write {
		w := h.n.m.callers.of(ctx)
		if w == "" {
			w = h.writer
		}
		if rel, ok := h.n.rel(); ok {
			h.n.m.changed(rel, w)
		}
		h.mu.Lock()
		h.flushed = true
		h.mu.Unlock()
	}
	return errno
}

var _ = (fusefs.FileReleaser)((*handle)(nil))

// Release reports a written file once more when no flush did (a writer that
// was killed, or a kernel that skipped the flush); harmless when it repeats.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	errno := h.LoopbackFile.Release(ctx)
	if h.write {
		h.mu.Lock()
		flushed := h.flushed
		h.mu.Unlock()
		if !flushed {
			if rel, ok := h.n.rel(); ok {
				h.n.m.changed(rel, h.writer)
			}
		}
	}
	return errno
}
