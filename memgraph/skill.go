package memgraph

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A skill is procedural memory in the open Agent Skills format: a folder
// skills/<name>/ holding SKILL.md (frontmatter with name and description,
// then instructions) and optional scripts/, references/ and assets/. The
// rules below are the format's, plus the keys Claude Code adds; mindmount
// keeps a skill's lifecycle in metadata (mindmount-status, mindmount-source)
// so the file stays valid for every harness that reads it.

const (
	// SkillsDir is the folder of the repository's skills.
	SkillsDir = "skills"
	// SkillFile is the file that makes a folder of SkillsDir a skill.
	SkillFile = "SKILL.md"
	// MaxSkillNameLen and MaxSkillDescLen are the format's limits.
	MaxSkillNameLen = 64
	MaxSkillDescLen = 1024
	// MaxSkillCompatLen is the format's limit of compatibility.
	MaxSkillCompatLen = 500
	// MaxSkillFileSize bounds every file of a skill's folder, as
	// MaxFileSize bounds a memory.
	MaxSkillFileSize = MaxFileSize
)

// SkillStatus is a skill's lifecycle (metadata key mindmount-status).
type SkillStatus string

const (
	SkillActive  SkillStatus = "active" // also when the key is absent
	SkillDraft   SkillStatus = "draft"
	SkillRetired SkillStatus = "retired"
)

// Metadata keys mindmount reads in a skill.
const (
	SkillStatusKey = "mindmount-status"
	SkillSourceKey = "mindmount-source"
)

// ErrSkill marks every problem of a skill's rules (errors.Is on
// Problem.Err).
var ErrSkill = errors.New("invalid skill")

// skillKeys are the frontmatter keys a SKILL.md may have: the Agent Skills
// format's, then Claude Code's.
var skillKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools",
	"disable-model-invocation", "user-invocable", "argument-hint", "context", "agent", "model", "hooks"}

var skillKeysText = strings.Join(skillKeys, ", ")

var skillNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// Skill is one parsed SKILL.md.
type Skill struct {
	Path          string // skills/<name>/SKILL.md
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string
	Status        SkillStatus
	Source        string // metadata mindmount-source
	Body          string // the text after the frontmatter
	BodyLine      int    // file line where Body starts
	Lines         int    // lines of the whole file
}

// Active reports whether the skill is listed and projected.
func (s *Skill) Active() bool { return s.Status == SkillActive }

// Folder is the skill's folder, skills/<name>.
func (s *Skill) Folder() string { return SkillDirOf(s.Path) }

// IsSkillFile reports whether rel is the SKILL.md of a skill folder
// (skills/<name>/SKILL.md).
func IsSkillFile(rel string) bool {
	els := strings.Split(rel, "/")
	return len(els) == 3 && els[0] == SkillsDir && els[1] != "" && els[2] == SkillFile && isCleanRel(rel)
}

// IsSkillPath reports whether rel lies inside a skill's folder
// (skills/<name>/...): SKILL.md, scripts, references and assets alike.
func IsSkillPath(rel string) bool {
	els := strings.Split(rel, "/")
	return len(els) >= 3 && els[0] == SkillsDir && els[1] != "" && isCleanRel(rel)
}

// SkillDirOf returns the skill folder rel lies in (skills/<name>), or "".
func SkillDirOf(rel string) string {
	if !IsSkillPath(rel) {
		return ""
	}
	els := strings.SplitN(rel, "/", 3)
	return els[0] + "/" + els[1]
}

// SkillPath is the SKILL.md of the skill called name.
func SkillPath(name string) string { return SkillsDir + "/" + name + "/" + SkillFile }

// ValidSkillName reports whether name follows the format's rule: at most
// 64 characters of a-z, 0-9 and single inner dashes.
func ValidSkillName(name string) bool {
	return len(name) <= MaxSkillNameLen && skillNameRe().MatchString(name)
}

// ValidateSkillPart checks a file of a skill's folder that is not its
// SKILL.md (a script, a reference, an asset): its name and its size.
// Secrets are found by the commit gate for every file alike.
func ValidateSkillPart(rel string, data []byte) []Problem {
	probs := nameProblems(rel)
	if p, ok := sizeProblem(sizeSkillPart, rel, int64(len(data))); ok {
		probs = append(probs, p)
	}
	return probs
}

// ParseSkill parses and validates a SKILL.md at rel. It never panics; the
// skill is never nil and holds what could be understood.
func ParseSkill(rel string, data []byte) (*Skill, []Problem) {
	s := &Skill{Path: rel, Status: SkillActive, Lines: bytes.Count(data, []byte("\n"))}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		s.Lines++
	}
	probs := nameProblems(rel)
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: rel, Line: line, Err: ErrSkill, Msg: fmt.Sprintf(format, args...)})
	}
	if p, ok := sizeProblem(sizeSkill, rel, int64(len(data))); ok {
		return s, append(probs, p)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		add(lineAt(data, i), "file contains a NUL byte at offset %d; SKILL.md must be plain UTF-8 text", i)
	}
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		add(lineAt(data, off), "file is not valid UTF-8 (first bad byte 0x%02x at offset %d); save it as UTF-8", data[off], off)
	}
	fm, rest, ok := splitFrontmatter(string(data))
	if !ok {
		add(1, "a skill starts with frontmatter: '---', 'name: <folder name>', 'description: <what it does and when to use it>', '---'")
		s.Body = rest
		return s, probs
	}
	s.Body, s.BodyLine = rest, strings.Count(fm, "\n")+1
	s.parseFront(fm, add)
	if s.Name != "" {
		if folder := strings.Split(rel, "/"); len(folder) == 3 && folder[1] != s.Name {
			add(2, "name %q must equal the skill's folder name %q; rename one of them", s.Name, folder[1])
		}
	}
	return s, probs
}

// parseFront decodes the frontmatter block fm (both "---" lines included).
func (s *Skill) parseFront(fm string, add problemFunc) {
	lines := strings.SplitAfter(fm, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	seen := map[string]int{}
	if len(lines) >= 2 {
		doc, ok := decodeYAML(strings.Join(lines[1:len(lines)-1], ""), add)
		if !ok {
			return
		}
		if doc.Kind != 0 && len(doc.Content) > 0 {
			top := doc.Content[0]
			if top.Kind != yaml.MappingNode {
				add(top.Line+1, "frontmatter must be a list of 'key: value' lines (allowed keys: %s)", skillKeysText)
				return
			}
			for i := 0; i+1 < len(top.Content); i += 2 {
				k, v := top.Content[i], top.Content[i+1]
				line := k.Line + 1
				if prev, dup := seen[k.Value]; dup {
					add(line, "frontmatter key %s appears twice (first on line %d); keep one", keyName(k.Value), prev)
					continue
				}
				seen[k.Value] = line
				s.setField(k.Value, v, line, add)
			}
		}
	}
	if _, ok := seen["name"]; !ok {
		add(1, "missing name: add 'name: <the folder's name>' to the frontmatter")
	}
	if _, ok := seen["description"]; !ok {
		add(1, "missing description: add 'description: <what the skill does and when to use it>' to the frontmatter")
	}
}

// setField decodes one frontmatter key of a skill.
func (s *Skill) setField(name string, v *yaml.Node, line int, add problemFunc) {
	text := func() (string, bool) {
		t, ok := scalarText(v)
		if !ok {
			add(line, "%s must be text", name)
		}
		return t, ok
	}
	switch name {
	case "name":
		if t, ok := text(); ok {
			if !ValidSkillName(t) {
				add(line, "name %q must be at most %d characters of lower-case a-z, 0-9 and single dashes, like deploy-staging", SafeLine(t), MaxSkillNameLen)
				return
			}
			s.Name = t
		}
	case "description":
		if t, ok := text(); ok {
			switch {
			case strings.TrimSpace(t) == "":
				add(line, "description is empty; say what the skill does and when to use it")
			case utf8.RuneCountInString(t) > MaxSkillDescLen:
				add(line, "description has %d characters; at most %d are allowed", utf8.RuneCountInString(t), MaxSkillDescLen)
			}
			s.Description = t
		}
	case "compatibility":
		if t, ok := text(); ok {
			if utf8.RuneCountInString(t) > MaxSkillCompatLen {
				add(line, "compatibility has %d characters; at most %d are allowed", utf8.RuneCountInString(t), MaxSkillCompatLen)
			}
			s.Compatibility = t
		}
	case "license":
		s.License, _ = text()
	case "argument-hint", "context", "agent", "model":
		text()
	case "disable-model-invocation", "user-invocable":
		var b bool
		if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
			add(line, "%s must be true or false", name)
		}
	case "allowed-tools":
		s.AllowedTools = s.tools(v, line, add)
	case "metadata":
		s.setMetadata(v, line, add)
	case "hooks":
		if v.Kind != yaml.MappingNode {
			add(line, "hooks must be a mapping of hook events, as in Claude Code's settings")
		}
	default:
		add(line, "unknown frontmatter key %s for a skill; allowed keys are %s (mindmount's own go under metadata: %s, %s)", keyName(name), skillKeysText, SkillStatusKey, SkillSourceKey)
	}
}

// tools reads allowed-tools: one space-separated line (the format) or a
// list (Claude Code).
func (s *Skill) tools(v *yaml.Node, line int, add problemFunc) []string {
	if t, ok := scalarText(v); ok {
		return strings.Fields(t)
	}
	if v.Kind != yaml.SequenceNode {
		add(line, "allowed-tools must be a line of tool names or a list of them")
		return nil
	}
	var out []string
	for _, e := range v.Content {
		t, ok := scalarText(e)
		if !ok {
			add(e.Line+1, "each of allowed-tools must be a tool name")
			continue
		}
		out = append(out, t)
	}
	return out
}

// setMetadata reads metadata, a map of text to text, and the lifecycle
// keys in it.
func (s *Skill) setMetadata(v *yaml.Node, line int, add problemFunc) {
	if v.Kind != yaml.MappingNode {
		add(line, "metadata must be a map of text keys to text values, like 'metadata: {%s: draft}'", SkillStatusKey)
		return
	}
	s.Metadata = map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		key, ok1 := scalarText(k)
		value, ok2 := scalarText(val)
		if !ok1 || !ok2 || k.Tag != "!!str" {
			add(k.Line+1, "metadata must map text to text; %s is not", keyName(k.Value))
			continue
		}
		s.Metadata[key] = value
		switch key {
		case SkillStatusKey:
			switch st := SkillStatus(value); st {
			case SkillActive, SkillDraft, SkillRetired:
				s.Status = st
			default:
				add(val.Line+1, "%s must be one of draft, active, retired", SkillStatusKey)
			}
		case SkillSourceKey:
			s.Source = value
		}
	}
}

// validateSkill is Validate for a skill's folder.
func validateSkill(rel string, data []byte) []Problem {
	if IsSkillFile(rel) {
		_, probs := ParseSkill(rel, data)
		return probs
	}
	return ValidateSkillPart(rel, data)
}

// parseSkillMemory is Parse for a file of a skill's folder: the memory a
// graph keeps for a SKILL.md (title the skill's name, its description, a
// status other than active when the skill is a draft or retired), with the
// bytes kept for Render.
func parseSkillMemory(rel string, data []byte) (*Memory, []Problem) {
	m := &Memory{Path: rel}
	text := string(data)
	if !IsSkillFile(rel) {
		m.raw.secs = []section{{raw: text, line: 1}}
		return m, ValidateSkillPart(rel, data)
	}
	s, probs := ParseSkill(rel, data)
	if fm, rest, ok := splitFrontmatter(text); ok && len(data) <= MaxSkillFileSize {
		m.raw.fm = fm
		m.raw.secs = []section{{raw: rest, line: s.BodyLine}}
	} else {
		m.raw.secs = []section{{raw: text, line: 1}}
	}
	m.Title, m.Front.Description, m.Front.Source = s.Name, s.Description, s.Source
	if !s.Active() {
		m.Front.Status = Status(s.Status)
	}
	return m, probs
}
