package consolidate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"gopkg.in/yaml.v3"
)

// A learned skill: the extraction answer may carry skills (a reusable,
// durable, multi-step workflow the transcript shows), each written as
// skills/<name>/SKILL.md in the Agent Skills format through the same
// commit as the chunk's memories. A new skill is a draft
// (metadata mindmount-status: draft) unless the operator's file says
// "skills: auto"; an existing skill of the same name gets the new
// description and body and keeps its status and other keys. The gate
// (tracker.Check) judges each file: a refused one is a problem of the
// run, never written.

// Limits on the skills a model may hand us.
const (
	MaxSkills        = 3
	MaxSkillBodyText = 20000
)

// SkillDraft is one skill the extraction found.
type SkillDraft struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"body"`
	// Files are the skill's other files (skill_files.go), none by
	// default.
	Files []SkillFile `json:"files,omitempty"`
}

// ParseSkills reads the optional "skills" list of an extraction answer.
// A missing list is none; a malformed item is skipped and described.
func ParseSkills(answer string) (skills []SkillDraft, problems []string) {
	raw, err := firstJSONObject(answer)
	if err != nil {
		return nil, nil
	}
	m, err := fields(raw)
	if err != nil {
		return nil, nil
	}
	v, ok := m["skills"]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, []string{`"skills" in the answer is not a list`}
	}
	for i, it := range items {
		if len(skills) == MaxSkills {
			problems = append(problems, fmt.Sprintf("the model returned %d skills; only the first %d are used", len(items), MaxSkills))
			break
		}
		sk, fprobs, err := parseSkillDraft(it)
		for _, p := range fprobs {
			problems = append(problems, fmt.Sprintf("skill %d: %s", i, p))
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("skill %d skipped: %v", i, err))
			continue
		}
		skills = append(skills, sk)
	}
	return skills, problems
}

func parseSkillDraft(raw json.RawMessage) (SkillDraft, []string, error) {
	m, err := fields(raw)
	if err != nil {
		return SkillDraft{}, nil, err
	}
	var s SkillDraft
	if s.Name, err = stringField(m, "name", true); err != nil {
		return s, nil, err
	}
	if s.Description, err = stringField(m, "description", true); err != nil {
		return s, nil, err
	}
	if s.Body, err = stringField(m, "body", true); err != nil {
		return s, nil, err
	}
	var probs []string
	s.Files, probs = parseSkillFiles(m)
	s.Name = shorten(strings.TrimSpace(stripControl(s.Name)), MaxSlugFromModel)
	s.Description = strings.Join(strings.Fields(stripControl(strings.ToValidUTF8(s.Description, ""))), " ")
	s.Body = shorten(strings.TrimSpace(stripControl(strings.ToValidUTF8(s.Body, ""))), MaxSkillBodyText)
	if s.Body == "" {
		return s, probs, fmt.Errorf("empty body")
	}
	return s, probs, nil
}

// skill redacts every field of s.
func (r *redactor) skill(s *SkillDraft) {
	s.Name = r.text(s.Name)
	s.Description = r.text(s.Description)
	s.Body = r.text(s.Body)
	for i := range s.Files {
		s.Files[i].Content = r.text(s.Files[i].Content)
	}
}

// skillStatus is the status of a new learned skill: active when the
// repository's operator file (else the default one) says "skills: auto",
// else draft.
func (c *Consolidator) skillStatus() memgraph.SkillStatus {
	c.mergeMode() // fills in c.cfg.Operator
	for _, src := range []*memgraph.OperatorSource{c.cfg.Operator, c.cfg.Default} {
		if o, _ := src.Get(); o.Skills != "" {
			if o.Skills == memgraph.MergeAuto {
				return memgraph.SkillActive
			}
			return memgraph.SkillDraft
		}
	}
	return memgraph.SkillDraft
}

// planSkills renders each learned skill into out.skills, after the gate
// accepted it against its version at the dream's tip.
func (s *chunkRun) planSkills(skills []SkillDraft, out *outcome) {
	rules := s.c.gateRules()
	for _, sk := range skills {
		rel := memgraph.SkillPath(sk.Name)
		if !memgraph.IsSkillFile(rel) {
			out.problems = append(out.problems, fmt.Sprintf("skill %q skipped: its name is not one folder name", memgraph.SafeLine(sk.Name)))
			continue
		}
		prev, err := s.headVersion(rel)
		if err != nil {
			out.problems = append(out.problems, fmt.Sprintf("skill %s skipped: %v", sk.Name, err))
			continue
		}
		data, err := s.renderSkill(sk, prev)
		if err != nil {
			out.problems = append(out.problems, fmt.Sprintf("skill %s skipped: %v", memgraph.SafeLine(sk.Name), err))
			continue
		}
		after := tracker.Version{Data: data, Exists: true}
		if probs := tracker.Check(rel, after, tracker.Version{Data: prev, Exists: prev != nil}, rules); len(probs) > 0 {
			out.problems = append(out.problems, "skill "+memgraph.SafeLine(sk.Name)+" not written: "+redacted(probs[0].String()))
			continue
		}
		out.skills[rel] = skillFile{data: data}
		s.planSkillFiles(sk, rules, out)
	}
}

// renderSkill writes sk as a SKILL.md. Over an existing file (prev) the
// frontmatter is kept but for description and mindmount-source; the body
// is replaced. A new one gets name, description and metadata.
func (s *chunkRun) renderSkill(sk SkillDraft, prev []byte) ([]byte, error) {
	var top yaml.Node
	if prev != nil {
		old, _ := memgraph.ParseSkill(memgraph.SkillPath(sk.Name), prev)
		lines := strings.SplitAfter(string(prev), "\n")
		if old.BodyLine >= 3 && old.BodyLine-1 <= len(lines) {
			fm := strings.Join(lines[1:old.BodyLine-2], "")
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(fm), &doc); err == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
				top = *doc.Content[0]
			}
		}
	}
	if top.Kind != yaml.MappingNode {
		top = yaml.Node{Kind: yaml.MappingNode}
		setKey(&top, "name", scalar(sk.Name))
		setKey(&top, "description", scalar(""))
		meta := &yaml.Node{Kind: yaml.MappingNode}
		setKey(meta, memgraph.SkillStatusKey, scalar(string(s.c.skillStatus())))
		setKey(&top, "metadata", meta)
	}
	setKey(&top, "description", scalar(sk.Description))
	meta := getKey(&top, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		meta = &yaml.Node{Kind: yaml.MappingNode}
		setKey(&top, "metadata", meta)
	}
	setKey(meta, memgraph.SkillSourceKey, scalar(s.src))
	fm, err := yaml.Marshal(&top)
	if err != nil {
		return nil, err
	}
	return []byte("---\n" + string(fm) + "---\n\n" + sk.Body + "\n"), nil
}

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// getKey returns the value of key in mapping m, or nil.
func getKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key in mapping m to v, appending it when absent.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

// Bounds of the existing skills the extraction prompt lists.
const (
	maxKnownSkills     = 40
	maxKnownSkillChars = 4000
)

// knownSkills lists the repository's skills that are not retired, for the
// extraction prompt, so that a correction to a procedure returns the
// existing skill's name (an update) instead of a second skill. "" when
// there are none.
func (s *chunkRun) knownSkills() string {
	var b strings.Builder
	n := 0
	for _, e := range s.c.g.Skills() {
		if e.Status == memgraph.SkillRetired {
			continue
		}
		line := "- " + e.Name + ": " + memgraph.ClipLine(e.Description, 200) + "\n"
		if n == maxKnownSkills || b.Len()+len(line) > maxKnownSkillChars {
			break
		}
		b.WriteString(line)
		n++
	}
	if n == 0 {
		return ""
	}
	return "\n\nSkills already in the memory (to correct or extend one, return it with the same name and the complete new body):\n" + b.String()
}
