package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/gitrepo"
)

func init() {
	register(&command{
		name:    "check",
		usage:   "check DIR",
		summary: "validate every memory file and print what is wrong",
		help: `Validates every memory file of the engram repository DIR (every *.md file
except hidden folders, transcripts/ and the synthesized indexes) and prints
each problem as

    path:line: message

for example

    user_memory/likes-tea.md:3: unknown frontmatter key "colour"; allowed keys are ...

Exits with status 1 when any file is invalid, 0 when all are valid.

What is checked: files are UTF-8 text without NUL bytes and at most 64 KiB;
frontmatter (the block between two '---' lines at the top) is closed, is
valid YAML and uses only the keys description, status, supersedes,
superseded_by, read_only, created, source and tags; memories under
user_memory/ and character_memory/ have a non-empty description; status is
active, superseded, retracted or contradicted; access log lines read
"used, DD.MM.YY". When DIR is a git repository, a file whose read_only flag
was set, changed or removed since the last commit (or a read_only file that
was edited at all) is reported too, because engram will not commit it.`,
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				fl.Usage()
				return exitError{2}
			}
			dir := args[0]
			if err := requireDir(dir); err != nil {
				return err
			}
			rels, err := memgraph.MemoryFiles(dir)
			if err != nil {
				return err
			}
			repo, err := gitrepo.Open(dir)
			if err != nil && !errors.Is(err, gitrepo.ErrNotRepo) {
				return err
			}
			bad, total := 0, 0
			for _, rel := range rels {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
				if err != nil {
					fmt.Fprintf(stdout, "%s: cannot read: %v\n", rel, err)
					bad++
					continue
				}
				// Without git there is no last commit to judge read_only
				// changes against, so the file counts as unchanged.
				prev := data
				if repo != nil {
					prev = nil
					if p, ok, err := repo.ReadHead(rel); err == nil && ok {
						prev = p
					}
				}
				probs := memgraph.Validate(rel, data, prev)
				for _, p := range probs {
					fmt.Fprintln(stdout, p.String())
				}
				total += len(probs)
				if len(probs) > 0 {
					bad++
				}
			}
			if bad > 0 {
				fmt.Fprintf(stderr, "%d %s in %d of %d files\n", total, plural(total, "problem", "problems"), bad, len(rels))
				return exitError{1}
			}
			fmt.Fprintf(stdout, "%d %s checked, all valid\n", len(rels), plural(len(rels), "file", "files"))
			return nil
		},
	})
}

// requireDir turns a missing or non-directory DIR into a clear error.
func requireDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist (create a memory repository with: engram init %s)", dir, dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// scanForOutput reads the memories of dir for a command that prints from
// them (index, context, recall), warning on stderr that invalid files are
// left out.
func scanForOutput(dir string) (*memgraph.Graph, error) {
	if err := requireDir(dir); err != nil {
		return nil, err
	}
	g, err := memgraph.Scan(dir)
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
		fmt.Fprintf(stderr, "engram: %d invalid %s left out; run: engram check %s\n", len(files), plural(len(files), "file", "files"), dir)
	}
}
