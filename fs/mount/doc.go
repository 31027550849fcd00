// Package fs is the mount: a FUSE projection of one mindmount repository.
//
// Every file of the working tree is passed through (go-fuse's loopback node,
// wrapped so each mutation reaches the change tracker and the in-memory
// graph), while a few files exist only in the mount: the ranked indexes
// user_memory.md and character_memory.md, the compiled CONTEXT.md,
// .mindmount/status, .mindmount/search/<query> and the .mindmount/consolidate control
// file. .git stays readable and refuses every write with EROFS; read_only
// memories refuse every change.
//
// The daemon is the only writer through the mount, so the kernel is allowed
// to cache entries, attributes and pages for a long time; whatever changes
// behind the kernel (an outside editor, git pull, a new index) is pushed out
// of its caches explicitly with NotifyContent / NotifyEntry / NotifyDelete.
//
// The mount answers OPEN with ENOSYS, so the kernel serves warm reads from
// its page cache without a request (node_io.go); refusals happen where data
// changes (WRITE, SETATTR, CREATE, RENAME, UNLINK, LINK, MKNOD), and a
// change is folded into the graph before the next read of a synthesized
// file.
//
// go-fuse's own package fs is imported as fusefs throughout.
package mount
