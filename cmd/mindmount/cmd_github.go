package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/serve/github"
	"github.com/mindmount/mindmount/serve/host"
)

// githubCommand is "mindmount github": a project's memory and its
// hosting service (docs/pull-requests.md).
var githubCommand = &command{
	name:    "github",
	usage:   "github propose|recall REPO …",
	summary: "propose a project's memory changes as pull requests; recall memories on a new pull request or issue",
	help: `A project's memory lives on the branch mindmount/memory of its repository
(mindmount init DIR --project-branch PROJECT); its changes are approved as
pull requests. The token comes from $GITHUB_TOKEN only and is never
logged; --api (default $GITHUB_API_URL, else https://api.github.com) points
at GitHub Enterprise (https://HOST/api/v3) or a Gitea-compatible API.
--repo OWNER/NAME defaults to $GITHUB_REPOSITORY.`,
	subs: []*command{
		newCommand(command{
			name:    "propose",
			usage:   "github propose REPO [--repo OWNER/NAME] [--api URL]",
			summary: "push each waiting dream and open a pull request into the memory branch",
			help: `Pushes each waiting dream of REPO (mindmount/dream/N) to the project's
repository and opens one pull request into mindmount/memory listing what
it adds, updates and retires, with the supersede links and consolidation's
notes. A dream already proposed is left as it is; one whose pull request
was closed without merging is rejected (its sources are never proposed
again) and the rejection pushed to the memory branch.`,
		}, runGithubPropose),
		newCommand(command{
			name:    "recall",
			usage:   "github recall REPO --github-event PATH [--repo OWNER/NAME] [--api URL] [--min-score S] [-k N] [--dry-run]",
			summary: "comment the memories relevant to a new pull request or issue",
			help: `Builds a query from the pull request's or issue's title, body and changed
paths, recalls REPO's active memories (a superseded decision never
comes back) and posts one comment listing those scoring at least
--min-score, each linking to its memory file and its source; a later run
edits that comment (found by a hidden marker) instead of posting another.
Nothing is posted when nothing is relevant. --dry-run prints the comment.`,
		}, runGithubRecall),
	},
}

// githubOptions are the flags every "github" subcommand takes.
type githubOptions struct {
	repo, api, server string
}

func (o *githubOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.repo, "repo", "", "the project's repository `OWNER/NAME` (default $GITHUB_REPOSITORY)")
	fl.StringVar(&o.api, "api", "", "the hosting service's API `URL` (default $GITHUB_API_URL, else GitHub's)")
	fl.StringVar(&o.server, "server", "", "the web `URL` links point at (default $GITHUB_SERVER_URL, else https://github.com)")
}

// ownerRepo splits --repo (or $GITHUB_REPOSITORY) into owner and name.
func (o *githubOptions) ownerRepo() (string, string, error) {
	full := cmp.Or(o.repo, os.Getenv("GITHUB_REPOSITORY"))
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usageError{fmt.Sprintf("--repo %q: want OWNER/NAME (or set GITHUB_REPOSITORY)", full)}
	}
	return owner, name, nil
}

// runGithubPropose proposes REPO's waiting dreams as pull requests.
func runGithubPropose(ctx context.Context, o *githubOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	owner, name, err := o.ownerRepo()
	if err != nil {
		return err
	}
	cl, err := apiClient(o.api, owner, name)
	if err != nil {
		return err
	}
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	out, err := github.Propose(ctx, dir, cl, slog.Default())
	for _, pr := range out.Opened {
		fmt.Fprintf(stdout, "opened #%d for %s: %s\n", pr.Number, pr.HeadRef, pr.URL)
	}
	for _, pr := range out.Pending {
		fmt.Fprintf(stdout, "%s waits in #%d\n", pr.HeadRef, pr.Number)
	}
	for _, b := range out.Rejected {
		fmt.Fprintf(stdout, "%s rejected: its pull request was closed\n", b)
	}
	for _, b := range out.Merged {
		fmt.Fprintf(stdout, "%s was merged; pull %s to see it here\n", b, github.MemoryBranch)
	}
	for _, b := range out.Empty {
		fmt.Fprintf(stdout, "%s settled without a pull request: no memory changes\n", b)
	}
	if err == nil && len(out.Opened)+len(out.Pending)+len(out.Rejected)+len(out.Merged)+len(out.Empty) == 0 {
		fmt.Fprintln(stdout, "nothing to propose")
	}
	return err
}

// recallOpts are the flags of "github recall".
type recallOpts struct {
	githubOptions
	event    string
	file     string
	minScore float64
	k        int
	dryRun   bool
}

func (o *recallOpts) AddFlags(fl *flag.FlagSet) {
	o.githubOptions.AddFlags(fl)
	fl.StringVar(&o.event, "github-event", "", "the pull_request or issues event payload (`PATH`)")
	fl.StringVar(&o.file, "file", "", "a text `FILE` to recall for instead (title on the first line); prints the comment")
	fl.Float64Var(&o.minScore, "min-score", github.DefaultMinScore, "the least recall `SCORE` a memory needs to be shown")
	fl.IntVar(&o.k, "k", 5, "at most `N` memories")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print the comment instead of posting it")
}

// runGithubRecall comments the relevant memories on a new item.
func runGithubRecall(ctx context.Context, o *recallOpts, args []string) error {
	if len(args) != 1 || (o.event == "") == (o.file == "") {
		return errUsage
	}
	var it github.Item
	var err error
	if o.file != "" {
		data, err := readBounded(o.file, github.MaxEvent)
		if err != nil {
			return err
		}
		title, body, _ := strings.Cut(string(data), "\n")
		it, o.dryRun = github.Item{Title: title, Body: body}, true
	} else if it, err = readEvent(o.event); err != nil {
		return err
	}
	owner, name := it.Owner, it.Repo
	if o.repo != "" || owner == "" {
		if owner, name, err = o.ownerRepo(); err != nil && !o.dryRun {
			return err
		}
	}
	var cl *github.Client
	if !o.dryRun {
		if cl, err = apiClient(o.api, owner, name); err != nil {
			return err
		}
		if it.PR && len(it.Paths) == 0 {
			if it.Paths, err = cl.ChangedPaths(ctx, it.Number); err != nil {
				return err
			}
		}
	}
	g, err := scanForOutput(args[0])
	if err != nil {
		return err
	}
	useCachedVectors(g)
	links := github.Links{Server: cmp.Or(o.server, os.Getenv("GITHUB_SERVER_URL"), "https://github.com"), Owner: owner, Repo: name}
	body, hits := github.Recall(ctx, g, it, o.minScore, o.k, links)
	if body == "" {
		fmt.Fprintf(stdout, "nothing relevant (no active memory scores %.2f or more); no comment\n", o.minScore)
		return nil
	}
	if o.dryRun {
		fmt.Fprint(stdout, body)
		return nil
	}
	id, created, err := cl.Upsert(ctx, it.Number, body)
	if err != nil {
		return err
	}
	verb := "edited"
	if created {
		verb = "posted"
	}
	fmt.Fprintf(stdout, "%s comment %d on #%d: %d memories\n", verb, id, it.Number, len(hits))
	return nil
}

// initProjectBranch is "mindmount init DIR --project-branch PROJECT": DIR
// becomes a clone of PROJECT's memory branch, which is created (an orphan
// branch holding a fresh memory repository) and pushed when PROJECT has
// none. Either way the clone's dreams wait for review: approval is a pull
// request into the memory branch.
func initProjectBranch(ctx context.Context, o *initOptions, dir string) error {
	project := o.project
	if st, err := os.Stat(project); err == nil && st.IsDir() {
		// A local path: absolute, so the clone's remote names it from
		// wherever git runs.
		if project, err = filepath.Abs(project); err != nil {
			return err
		}
	}
	has, err := github.HasMemoryBranch(ctx, project)
	if err != nil {
		return err
	}
	if has {
		if err := github.Clone(ctx, project, dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Cloned %s of %s into %s\n", github.MemoryBranch, github.Redact(o.project), dir)
		// Completes what a clone lacks: the git hooks and merge drivers
		// live in .git, which a clone does not carry.
		if _, err := host.InitRepo(dir, host.InitOptions{User: o.user, Private: !o.shared}); err != nil {
			return err
		}
	} else {
		if !o.force {
			if err := host.CheckInitTarget(dir); err != nil {
				return err
			}
		}
		if err := initRepo(dir, o.user, !o.shared); err != nil {
			return err
		}
		if err := github.Adopt(ctx, project, dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Pushed it as the orphan branch %s of %s\n", github.MemoryBranch, github.Redact(o.project))
	}
	if err := github.WriteReviewMode(ctx, dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Dreams wait for review (merge: review); mindmount github propose %s opens them as pull requests.\n", dir)
	return nil
}
