package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// hookMarker identifies the pre-commit script mindmount wrote: install replaces
// and uninstall removes only a script that carries it.
const hookMarker = "# mindmount pre-commit hook"

// preCommitScript calls the mindmount on PATH: a hook that named an absolute
// path would break when mindmount moves or was run from a temporary build.
const preCommitScript = `#!/bin/sh
` + hookMarker + ` (installed by "mindmount hooks install"; "mindmount hooks uninstall" removes it).
# It judges the staged memory files with the rules the mindmount daemon uses.
if ! command -v mindmount >/dev/null 2>&1; then
	echo "mindmount pre-commit: mindmount is not on PATH, so this commit is not checked" >&2
	exit 0
fi
exec mindmount hook pre-commit "$@"
`

// Drivers are the merge drivers mindmount registers: the git config name,
// its description and command, and the paths it applies to.
var Drivers = []struct{ Name, Desc, Command, Pattern string }{
	{"mindmount-cursor", "mindmount consolidation cursor", "mindmount merge-cursor %O %A %B", ".mindmount/cursor.json"},
	{"mindmount-memory", "mindmount memory file", "mindmount merge-memory %O %A %B %P", "*.md"},
}

// attrMarker brackets the lines install adds to .git/info/attributes.
const attrMarker = "# mindmount merge drivers"

// Install puts mindmount into the git clone dir: the pre-commit hook, the
// merge drivers in the clone's config, and their attributes in
// .git/info/attributes (so they apply even where the committed
// .gitattributes predates them). Running it again changes nothing. A
// pre-commit hook that is not mindmount's is left alone and reported.
func Install(dir string) error {
	gitDir, err := gitDirOf(dir)
	if err != nil {
		return err
	}
	hook := filepath.Join(gitDir, "hooks", "pre-commit")
	if b, err := os.ReadFile(hook); err == nil && !isOurHook(b) {
		return fmt.Errorf("%s already has a pre-commit hook that is not mindmount's; add the line \"mindmount hook pre-commit || exit 1\" to it", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(hook, []byte(preCommitScript), 0o755); err != nil {
		return err
	}
	if err := setDrivers(dir, false); err != nil {
		return err
	}
	return setAttributes(gitDir, false)
}

// Uninstall removes what Install added (an edited hook without mindmount's
// marker is left alone).
func Uninstall(dir string) error {
	gitDir, err := gitDirOf(dir)
	if err != nil {
		return err
	}
	hook := filepath.Join(gitDir, "hooks", "pre-commit")
	if b, err := os.ReadFile(hook); err == nil && isOurHook(b) {
		if err := os.Remove(hook); err != nil {
			return err
		}
	}
	if err := setDrivers(dir, true); err != nil {
		return err
	}
	return setAttributes(gitDir, true)
}

// isOurHook reports whether a pre-commit script is one install wrote, now
// or before the rename.
func isOurHook(script []byte) bool {
	return strings.Contains(string(script), hookMarker) || strings.Contains(string(script), legacyHookMarker)
}

func gitDirOf(dir string) (string, error) {
	r, err := gitrepo.Open(dir)
	if err != nil {
		return "", err
	}
	return r.GitDir(), nil
}

// setDrivers adds (or removes) the merge driver sections of the clone's
// config. A driver the user configured differently is kept.
func setDrivers(dir string, remove bool) error {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return err
	}
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	merge := cfg.Raw.Section("merge")
	for _, name := range legacyDrivers {
		if isLegacyDriver(merge.Subsection(name).Option("driver")) {
			merge.RemoveSubsection(name)
		}
	}
	for _, d := range Drivers {
		if remove {
			if merge.Subsection(d.Name).Option("driver") == d.Command {
				merge.RemoveSubsection(d.Name)
			}
			continue
		}
		sec := merge.Subsection(d.Name)
		if cur := sec.Option("driver"); cur != "" && !strings.HasPrefix(cur, "mindmount ") && !strings.Contains(cur, "/mindmount") {
			continue
		}
		sec.SetOption("name", d.Desc)
		sec.SetOption("driver", d.Command)
	}
	return repo.SetConfig(cfg)
}

// setAttributes rewrites mindmount's block of .git/info/attributes.
func setAttributes(gitDir string, remove bool) error {
	p := filepath.Join(gitDir, "info", "attributes")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var keep []string
	in := false
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		switch {
		case l == attrMarker || l == legacyAttrMarker:
			in = true
		case l == attrMarker+" end" || l == legacyAttrMarker+" end":
			in = false
		case !in && l != "":
			keep = append(keep, l)
		}
	}
	if !remove {
		keep = append(keep, attrMarker)
		for _, d := range Drivers {
			keep = append(keep, d.Pattern+" merge="+d.Name)
		}
		keep = append(keep, attrMarker+" end")
	}
	text := strings.Join(keep, "\n")
	if text != "" {
		text += "\n"
	}
	if text == string(old) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, []byte(text), 0o644)
}
