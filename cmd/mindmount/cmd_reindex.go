package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// newEmbedder builds the embedding model from the environment. A variable
// so tests can swap in a fake.
var newEmbedder = func() (recall.Embedder, string, error) {
	p, err := providerFromEnv()
	if err != nil {
		return nil, "", err
	}
	return p, embedModel(p), nil
}

// reindexCommand is "mindmount reindex".
var reindexCommand = newCommand(command{
	name:    "reindex",
	usage:   "reindex REPO",
	summary: "build the vectors that let recall match by meaning",
	help: `Embeds every memory of the repository REPO that has no vector yet, with
the model configured for consolidation (MINDMOUNT_LLM=ollama|openai,
MINDMOUNT_EMBED_MODEL, OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY), and
stores the vectors in REPO/.mindmount/cache/vectors, outside git. Vectors
are keyed by the model and the memory's text, so running it again only
embeds what changed; deleting the folder is always safe.

Afterwards "mindmount recall" fuses keyword and vector rankings. On a
terminal a progress bar shows how many memories are done.`,
}, runReindex)

// runReindex rebuilds the recall index.
func runReindex(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return reindex(ctx, args[0])
}

func reindex(ctx context.Context, repo string) error {
	if err := requireMindmountRepo(repo); err != nil {
		return err
	}
	e, model, err := newEmbedder()
	if err != nil {
		return err
	}
	g, err := memgraph.Scan(repo)
	if err != nil {
		return err
	}
	dir := filepath.Join(g.Root(), filepath.FromSlash(memgraph.VectorCacheDir))
	ix := g.RecallIndex()
	v := recall.NewVectors(e, model, dir)
	defer v.Close()
	if err := ix.SetVectors(v, false); err != nil {
		return err
	}
	defer ix.Close()
	had, total := ix.VectorCount()

	bar := newProgress(stderr)
	n, err := ix.Reindex(ctx, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("embedding with %s failed after %d of %d memories: %w", model, n, total-had, err)
	}
	fmt.Fprintf(stdout, "%d memories: %d embedded now, %d already cached (model %s, cache %s)\n",
		total, n, had, model, memgraph.VectorCacheDir)
	return nil
}

// progress draws a one-line bar on a terminal and nothing elsewhere, so
// logs and pipes stay clean.
type progress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		p.tty = term.IsTerminal(int(f.Fd()))
	}
	return p
}

func (p *progress) update(done, total int) {
	if !p.tty || total == 0 {
		return
	}
	// Redraw at most 20 times a second, and always the final state.
	if done != total && time.Since(p.last) < 50*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.drawn = true
	fmt.Fprintf(p.w, "\r%s", progressLine(done, total, 30))
}

func (p *progress) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// progressLine renders "[#####.....] 120/240 memories  50%".
func progressLine(done, total, width int) string {
	if total <= 0 {
		return ""
	}
	done = min(max(done, 0), total)
	fill := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d memories %3d%%",
		strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, done*100/total)
}
