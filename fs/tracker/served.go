package tracker

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// ScanServed reads the memories of dir as a model may see them, as the
// daemon serves them: a memory whose uncommitted version adds a secret is
// held back, so the last committed version stands in for it (a new one is
// left out). index, context, recall, consolidation and the harness hooks
// print from it, without a daemon. Without git nothing is committed, and
// every memory with a secret is left out.
func ScanServed(dir string) (*memgraph.Graph, error) {
	g, err := memgraph.Scan(dir)
	if err != nil {
		return nil, err
	}
	r, err := gitrepo.Open(dir)
	if errors.Is(err, gitrepo.ErrNotRepo) {
		for _, rel := range g.Paths() {
			if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err == nil && len(SecretProblems(rel, data, nil)) > 0 {
				g.Remove(rel)
			}
		}
		return g, nil
	}
	if err != nil {
		return nil, err
	}
	g.KeepSkillUses(ReadSkillUses(r.GitDir()), nil) // the skills list ranks by them
	if o, _ := (&memgraph.OperatorSource{Path: filepath.Join(r.GitDir(), memgraph.OperatorFile)}).Get(); o.CommitSecrets {
		return g, nil
	}
	dirty, err := r.Dirty()
	if err != nil {
		return nil, err
	}
	for _, rel := range dirty {
		if !memgraph.IsMemoryPath(rel) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			continue // deleted: Scan did not read it either
		}
		head, inHead, _ := r.ReadHead(rel)
		if len(SecretProblems(rel, data, head)) == 0 {
			continue
		}
		if inHead {
			g.Put(rel, head)
		} else {
			g.Remove(rel)
		}
	}
	return g, nil
}
