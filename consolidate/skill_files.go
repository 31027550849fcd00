package consolidate

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// The files of a learned skill besides its SKILL.md: a script the
// workflow runs, a reference it reads, an asset it fills in. The model
// names each by its path inside the skill's folder, under one of the
// format's folders (scripts/, references/, assets/); only a script may be
// executable, and git keeps its bit (mode 100755). A file the rules below
// refuse is skipped and described, never shortened: a cut script is a
// broken one. The gate judges each file as it judges a person's.

// Limits on the files of one learned skill.
const (
	MaxSkillFiles    = 4
	MaxSkillFileText = 20000 // bytes of one file's content
	maxSkillFilePath = 120   // bytes of its path inside the folder
	maxSkillFileEls  = 3     // folder, at most one subfolder, name
)

// skillFileDirs are the folders of a skill a learned file may go in.
var skillFileDirs = []string{"scripts", "references", "assets"}

// SkillFile is one file of a learned skill.
type SkillFile struct {
	Path       string `json:"path"` // inside the skill's folder, e.g. scripts/deploy.sh
	Content    string `json:"content"`
	Executable bool   `json:"executable"`
}

// parseSkillFiles reads the optional "files" list of one skill item.
// Bad items are skipped and described; the list is bounded by
// MaxSkillFiles.
func parseSkillFiles(m map[string]json.RawMessage) (files []SkillFile, problems []string) {
	v, ok := m["files"]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, []string{`"files" of a skill is not a list`}
	}
	seen := map[string]bool{}
	for i, it := range items {
		if len(files) == MaxSkillFiles {
			problems = append(problems, fmt.Sprintf("the skill has %d files; only the first %d are used", len(items), MaxSkillFiles))
			break
		}
		f, err := parseSkillFile(it)
		if err == nil && seen[f.Path] {
			err = fmt.Errorf("%s appears twice", f.Path)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("file %d skipped: %v", i, err))
			continue
		}
		seen[f.Path] = true
		files = append(files, f)
	}
	return files, problems
}

func parseSkillFile(raw json.RawMessage) (SkillFile, error) {
	m, err := fields(raw)
	if err != nil {
		return SkillFile{}, err
	}
	var f SkillFile
	if f.Path, err = stringField(m, "path", true); err != nil {
		return f, err
	}
	if f.Content, err = stringField(m, "content", true); err != nil {
		return f, err
	}
	if f.Executable, err = boolField(m, "executable"); err != nil {
		return f, err
	}
	if err := checkSkillFilePath(f.Path); err != nil {
		return f, err
	}
	if len(f.Content) > MaxSkillFileText {
		return f, fmt.Errorf("%s has %d bytes; a learned file may have at most %d", f.Path, len(f.Content), MaxSkillFileText)
	}
	f.Content = strings.ToValidUTF8(f.Content, "")
	if strings.ContainsRune(f.Content, 0) {
		return f, fmt.Errorf("%s holds a NUL byte; learned files are text", f.Path)
	}
	if f.Content != "" && !strings.HasSuffix(f.Content, "\n") {
		f.Content += "\n"
	}
	f.Executable = f.Executable && strings.HasPrefix(f.Path, "scripts/")
	return f, nil
}

// checkSkillFilePath says why p may not name a learned file inside a
// skill's folder: it must be a clean relative path under scripts/,
// references/ or assets/, with no hidden or control-character name.
func checkSkillFilePath(p string) error {
	if !utf8.ValidString(p) || len(p) > maxSkillFilePath {
		return fmt.Errorf("path %q is not a short UTF-8 path", memgraph.SafeLine(p))
	}
	els := strings.Split(p, "/")
	if len(els) < 2 || len(els) > maxSkillFileEls {
		return fmt.Errorf("path %q must be <folder>/<name> with folder one of %s", memgraph.SafeLine(p), strings.Join(skillFileDirs, ", "))
	}
	okDir := false
	for _, d := range skillFileDirs {
		okDir = okDir || els[0] == d
	}
	if !okDir {
		return fmt.Errorf("path %q is not under %s", memgraph.SafeLine(p), strings.Join(skillFileDirs, "/, ")+"/")
	}
	for _, el := range els {
		if el == "" || strings.HasPrefix(el, ".") || strings.ContainsAny(el, "\\") {
			return fmt.Errorf("path %q has an empty, hidden or odd element", memgraph.SafeLine(p))
		}
	}
	if err := memgraph.CheckName(p); err != nil {
		return fmt.Errorf("path is refused: %v", err)
	}
	return nil
}

// skillFile is one planned file of a learned skill: its content and
// whether git records it executable.
type skillFile struct {
	data []byte
	exec bool
}

// planSkillFiles adds the files of sk, each after the gate accepted it
// against its version at the dream's tip, to out.skills.
func (s *chunkRun) planSkillFiles(sk SkillDraft, rules tracker.Rules, out *outcome) {
	for _, f := range sk.Files {
		rel := memgraph.SkillsDir + "/" + sk.Name + "/" + f.Path
		if memgraph.SkillDirOf(rel) != memgraph.SkillsDir+"/"+sk.Name || memgraph.IsSkillFile(rel) {
			out.problems = append(out.problems, fmt.Sprintf("file %s of skill %s skipped: not inside its folder", memgraph.SafeLine(f.Path), sk.Name))
			continue
		}
		prev, err := s.headVersion(rel)
		if err != nil {
			out.problems = append(out.problems, fmt.Sprintf("file %s skipped: %v", rel, err))
			continue
		}
		after := tracker.Version{Data: []byte(f.Content), Exists: true}
		if probs := tracker.Check(rel, after, tracker.Version{Data: prev, Exists: prev != nil}, rules); len(probs) > 0 {
			out.problems = append(out.problems, "file "+rel+" not written: "+redacted(probs[0].String()))
			continue
		}
		out.skills[rel] = skillFile{data: []byte(f.Content), exec: f.Executable}
	}
}
