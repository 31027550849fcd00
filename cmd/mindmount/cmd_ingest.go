package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/github"
)

// ingestCommand is "mindmount ingest".
var ingestCommand = newCommand(command{
	name:    "ingest",
	usage:   "ingest REPO (--file FILE --source LABEL [--url URL] [--commit SHA] | --github-event PATH) [--api URL]",
	summary: "consolidate a merged pull request or an issue into a project's memory, as one batch",
	help: `Consolidates one text — a merged pull request or an issue — into the memory
repository REPO (a project's memory: mindmount init --project-branch) as
one batch: durable decisions, conventions, gotchas and dead ends are
extracted and decided against the existing memories; facts from one
source never supersede each other. Each memory it adds names its source
("source: PR#231 https://… merge abc1234"), and so does the commit
(Mindmount-Source, Mindmount-Provenance).

--file FILE --source LABEL ingests a text file under that label, with
--url and --commit as its provenance. --github-event PATH reads a
pull_request or issues event payload ($GITHUB_EVENT_PATH); with
$GITHUB_TOKEN set, the changed paths, review comments, comments and the
titles of linked issues are read from the API (--api, default
$GITHUB_API_URL, else https://api.github.com). An event of a pull request
into the memory branch itself (a proposal) is not ingested.

The text is kept in REPO/transcripts/github/ (a local inbox git
ignores); the cursor remembers it, so ingesting the same item again
proposes nothing new. With merge: review (set by init --project-branch)
the result is a dream branch that waits: mindmount github propose opens
it as a pull request.

` + providerEnvHelp,
}, runIngest)

// ingestOptions are the flags of "mindmount ingest".
type ingestOptions struct {
	providerOptions
	file, source, url, commit string
	event, api                string
}

func (o *ingestOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.file, "file", "", "the text `FILE` to ingest (with --source)")
	fl.StringVar(&o.source, "source", "", "the batch `LABEL` of --file, e.g. PR#231")
	fl.StringVar(&o.url, "url", "", "where the source can be read")
	fl.StringVar(&o.commit, "commit", "", "the source's merge commit")
	fl.StringVar(&o.event, "github-event", "", "a pull_request or issues event payload (`PATH`)")
	fl.StringVar(&o.api, "api", "", "the hosting service's API `URL` (default $GITHUB_API_URL, else GitHub's)")
	fl.StringVar(&o.Model, "model", "", "chat model (default $MINDMOUNT_MODEL)")
	fl.StringVar(&o.LLM, "llm", "", "the model `PROVIDER`: ollama, openai or anthropic (default $MINDMOUNT_LLM, else ollama)")
}

// runIngest ingests one item.
func runIngest(ctx context.Context, o *ingestOptions, args []string) error {
	if len(args) != 1 || (o.event == "") == (o.file == "") {
		return errUsage
	}
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	it, skip, err := ingestItem(ctx, o)
	if err != nil || skip != "" {
		if skip != "" {
			fmt.Fprintln(stdout, skip)
		}
		return err
	}
	return ingestInto(ctx, dir, it, o.providerOptions)
}

// ingestItem reads the item --file or --github-event names; skip says
// why an event is not ingested.
func ingestItem(ctx context.Context, o *ingestOptions) (it github.Item, skip string, err error) {
	if o.file != "" {
		if o.source == "" {
			return it, "", usageError{"--file needs --source LABEL (e.g. PR#231)"}
		}
		data, err := readBounded(o.file, consolidate.MaxTranscriptSize)
		if err != nil {
			return it, "", err
		}
		return fileItem(o.source, o.url, o.commit, string(data))
	}
	it, err = readEvent(o.event)
	if err != nil {
		return it, "", err
	}
	if it.BaseRef == github.MemoryBranch || strings.HasPrefix(it.HeadRef, consolidate.DreamPrefix) {
		return it, fmt.Sprintf("%s is a proposal into %s, not ingested (mindmount github propose settles it)", it.Source(), github.MemoryBranch), nil
	}
	if it.PR && !it.Merged {
		return it, fmt.Sprintf("%s is not merged; only merged pull requests are ingested", it.Source()), nil
	}
	if cl, err := apiClient(o.api, it.Owner, it.Repo); err == nil {
		if err := cl.Complete(ctx, &it); err != nil {
			return it, "", err
		}
	} else if !errors.Is(err, github.ErrNoToken) {
		return it, "", err
	}
	return it, "", nil
}

// labelRE is a --source label: "PR#231", "issue#12", "ADR-7".
var labelRE = lazyRegexp(`^(?i:(PR|issue))#([0-9]{1,9})$`)

// fileItem is --file's text as an item labelled source.
func fileItem(source, url, commit, text string) (github.Item, string, error) {
	m := labelRE().FindStringSubmatch(source)
	if m == nil {
		return github.Item{}, "", usageError{fmt.Sprintf("--source %q: want PR#N or issue#N", memgraph.ClipLine(source, 40))}
	}
	var n int
	fmt.Sscanf(m[2], "%d", &n)
	title, body, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return github.Item{PR: strings.EqualFold(m[1], "PR"), Number: n, Title: strings.TrimLeft(title, "# "), Body: body,
		URL: url, MergeCommit: commit, Merged: commit != ""}, "", nil
}

// readEvent reads an event payload file.
func readEvent(path string) (github.Item, error) {
	data, err := readBounded(path, github.MaxEvent)
	if err != nil {
		return github.Item{}, err
	}
	return github.ParseEvent(data)
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", path, st.Size(), limit)
	}
	return os.ReadFile(path)
}

// apiClient is the hosting service's API for owner/repo, with the token
// from the environment only ($GITHUB_TOKEN).
func apiClient(api, owner, repo string) (*github.Client, error) {
	if api == "" {
		api = os.Getenv("GITHUB_API_URL")
	}
	return github.NewClient(api, os.Getenv("GITHUB_TOKEN"), owner, repo, nil)
}

// ingestInto consolidates the item into dir as one batch.
func ingestInto(ctx context.Context, dir string, it github.Item, opt providerOptions) error {
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	p, err := newProvider(opt)
	if err != nil {
		return err
	}
	rep, err := github.Ingest(ctx, dir, it, p, slog.Default())
	if err != nil {
		return fmt.Errorf("consolidation failed, nothing was changed: %w", err)
	}
	if len(rep.Sources) == 0 {
		fmt.Fprintf(stdout, "%s: nothing new (already ingested)\n", it.Source())
		return nil
	}
	return printRun(rep, nil)
}
