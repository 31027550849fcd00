package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/secret"
)

// checkCommand is "mindmount check".
var checkCommand = newCommand(command{
	name:    "check",
	usage:   "check PATH",
	summary: "validate every memory file and print what is wrong",
	help: `Validates every memory file of the mindmount repository at PATH (every *.md
file except hidden folders, transcripts/ and the synthesized indexes) and
prints each problem as

    path:line: message

for example

    user_memory/likes-tea.md:3: unknown frontmatter key "colour"; allowed keys are ...

PATH may also be a folder or a single file inside a repository: then only
the files under it are checked, with exactly the rules (and the same
messages) a check of the whole repository gives them. Exits with status 1
when any file is invalid, 0 when all are valid.

What is checked: files are UTF-8 text without NUL bytes and at most 64 KiB;
frontmatter (the block between two '---' lines at the top) is closed, is
valid YAML and uses only the keys description, status, supersedes,
superseded_by, read_only, pinned, created, source, tags and topic; memories under
user_memory/ and character_memory/ have a non-empty description; status is
active, superseded, retracted or contradicted; access log lines read
"used, DD.MM.YY". When DIR is a git repository, a file whose read_only flag
was set, changed or removed since the last commit (or a read_only file that
was edited at all) is reported too, because mindmount will not commit it.
A memory holding an invisible format character (a bidi override such as
U+202E, a zero-width space) gets a warning with its line: an editor may show
that line in another order than it reads. Warnings do not fail the check.

Secrets: every file mindmount would commit (memories, the settings file,
and in a git repository any other file git does not ignore, outside
transcripts/) is scanned for the secrets it adds since the last commit —
API keys, tokens, private keys, passwords typed as sentences — and every
name for a secret, with the daemon's and the pre-commit hook's rules. A
finding names the file, line and rule, never the value. The operator's
commit_secrets (in .git/mindmount/config) turns this off, as it does for
the daemon.`,
}, runCheck)

// runCheck validates a repository.
func runCheck(ctx context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	// Root checking another user's repository checks as that user
	// (asOwner): git refuses a repository root does not own, and an
	// untracked file it could not list would be missed silently.
	if abs, err := filepath.Abs(args[0]); err == nil {
		if handed, err := asOwner(ctx, []string{"check", abs}, abs); handed {
			return err
		}
	}
	dir, rels, err := checkTargets(args[0])
	if err != nil {
		return err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil && !errors.Is(err, gitrepo.ErrNotRepo) {
		return err
	}
	commitSecrets := false
	if repo != nil {
		o, _ := (&memgraph.OperatorSource{Path: filepath.Join(repo.GitDir(), memgraph.OperatorFile)}).Get()
		commitSecrets = o.CommitSecrets
		if !commitSecrets {
			rels = append(rels, otherFiles(dir, rels, args[0])...)
		}
	}
	bad, total := 0, 0
	report := func(probs []memgraph.Problem) { // one file's problems
		for _, p := range probs {
			fmt.Fprintln(stdout, p.String())
		}
		total += len(probs)
		if len(probs) > 0 {
			bad++
		}
	}
	rules := tracker.Rules{Door: tracker.DoorAudit, CommitSecrets: commitSecrets}
	for _, rel := range rels {
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() && memgraph.SizeLimit(rel) > 0 && fi.Size() > memgraph.SizeLimit(rel) {
			// Judged by its size alone (the size rule), never read whole.
			report(tracker.Check(rel, tracker.Version{Exists: true, Size: fi.Size()}, tracker.Version{}, rules))
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			if tracker.Judged(rel) {
				fmt.Fprintf(stdout, "%s: cannot read: %v\n", secret.SafeName(rel), err)
				bad++
			}
			continue // gone since it was listed
		}
		// Without git there is no last commit: the file counts as
		// unchanged, so no read_only change is reported.
		before := tracker.Version{Data: data, Exists: true}
		if repo != nil {
			before = tracker.Version{}
			if p, ok, err := repo.ReadHead(rel); err == nil && ok {
				before = tracker.Version{Data: p, Exists: true}
			}
		}
		if memgraph.IsMemoryPath(rel) {
			warnHidden(rel, data)
		}
		report(tracker.Check(rel, tracker.Version{Data: data, Exists: true}, before, rules))
	}
	warnTopicConflicts(dir)
	if bad > 0 {
		fmt.Fprintf(stderr, "%d %s in %d of %d files\n", total, memgraph.Plural(total, "problem", "problems"), bad, len(rels))
		return exitError{1}
	}
	fmt.Fprintf(stdout, "%d %s checked, all valid\n", len(rels), memgraph.Plural(len(rels), "file", "files"))
	return nil
}

// warnHidden warns about an invisible format character in a memory file
// (memgraph.HiddenIn): a bidi override or a zero-width character lets a
// reader's editor show a line otherwise than it reads. A warning, not a
// problem: the file stays valid and is committed.
func warnHidden(rel string, data []byte) {
	if line, r := memgraph.HiddenIn(string(data)); line > 0 {
		fmt.Fprintf(stdout, "%s:%d: warning: invisible format character %U; an editor may show this line otherwise than it reads (mindmount shows it as an escape)\n", secret.SafeName(rel), line, r)
	}
}

// checkTargets resolves check's PATH to its repository root and the memory
// files under PATH, relative to that root.
func checkTargets(path string) (root string, rels []string, err error) {
	root, sub, err := repoOf(path)
	if err != nil {
		return "", nil, err
	}
	all, err := memgraph.MemoryFiles(root)
	if err != nil {
		return "", nil, err
	}
	if sub == "" {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(memgraph.SettingsFile))); err == nil {
			all = append(all, memgraph.SettingsFile) // memgraph.Validate checks it too
		}
		return root, all, nil
	}
	for _, rel := range all {
		if rel == sub || strings.HasPrefix(rel, sub+"/") {
			rels = append(rels, rel)
		}
	}
	if len(rels) == 0 {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			return "", nil, fmt.Errorf("%s is not a memory file (mindmount checks *.md files outside hidden folders and transcripts/)", path)
		}
	}
	return root, rels, nil
}

// scanForOutput reads the memories of dir for a command that prints from
// them (index, context, recall), warning on stderr that invalid files are
// left out.
func scanForOutput(dir string) (*memgraph.Graph, error) {
	if err := requireMindmountRepo(dir); err != nil {
		return nil, err
	}
	g, err := tracker.ScanServed(dir)
	if err != nil {
		return nil, err
	}
	warnInvalid(g, dir)
	return g, nil
}

// warnInvalid tells the user that the output skips invalid files.
func warnInvalid(g *memgraph.Graph, dir string) {
	if probs := g.Problems(); len(probs) > 0 {
		files := map[string]bool{}
		for _, p := range probs {
			files[p.Path] = true
		}
		fmt.Fprintf(stderr, "mindmount: %d invalid %s left out; run: mindmount check %s\n", len(files), memgraph.Plural(len(files), "file", "files"), dir)
	}
}

// otherFiles lists the files of the repository at dir, under path, that
// the daemon would commit and check does not validate as memories
// (attachments, notes in other formats): tracked and untracked files git
// does not ignore, outside transcripts/ (never committed) and the files
// already in rels. They are scanned for secrets like every commit.
func otherFiles(dir string, rels []string, path string) []string {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil
	}
	have := map[string]bool{}
	for _, r := range rels {
		have[r] = true
	}
	abs, _ := filepath.Abs(path)
	sub, _ := filepath.Rel(dir, abs)
	sub = filepath.ToSlash(sub)
	var extra []string
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || have[rel] || tracker.IsInbox(rel) || memgraph.IsMemoryPath(rel) {
			continue
		}
		if sub != "." && sub != "" && rel != sub && !strings.HasPrefix(rel, sub+"/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		have[rel] = true
		extra = append(extra, rel)
	}
	return extra
}
