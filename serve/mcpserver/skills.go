package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/memgraph"
)

type skillsArgs struct {
	Name string `json:"name,omitempty" jsonschema:"a skill's name: return its SKILL.md; empty: list every active skill"`
}

// addSkillsTool registers "skills": the list of active skills, most used
// first, or one skill's SKILL.md (a read, counted as a use of it).
func (s *server) addSkillsTool() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "skills", InputSchema: schema[skillsArgs](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Procedures this memory knows (Agent Skills, skills/<name>/SKILL.md). Without name: every active skill as path and when to use it, most used first. With name: that skill's SKILL.md; follow it, and view the files it names under its folder."}, s.skills)
}

func (s *server) skills(_ context.Context, _ *mcp.CallToolRequest, in skillsArgs) (*mcp.CallToolResult, any, error) {
	if in.Name == "" {
		var b strings.Builder
		for _, sk := range s.g.Skills() {
			if sk.Status == memgraph.SkillActive {
				fmt.Fprintf(&b, "- %s — %s (uses: %d)\n", memgraph.SafeLine(sk.Path), memgraph.SafeLine(sk.Description), sk.Uses)
			}
		}
		if b.Len() == 0 {
			return textResult("no active skills; a skill is a folder skills/<name>/ with a SKILL.md"), nil, nil
		}
		return textResult(b.String()), nil, nil
	}
	if !memgraph.ValidSkillName(in.Name) {
		return nil, nil, fmt.Errorf("%q is not a skill name (lower-case a-z, 0-9 and dashes); call skills without a name to list them", in.Name)
	}
	rel := memgraph.SkillPath(in.Name)
	m := s.g.Get(rel)
	if m == nil {
		return nil, nil, fmt.Errorf("no skill %s; call skills without a name to list them", in.Name)
	}
	data, ok, err := s.tree.read(rel)
	if err != nil || !ok {
		return nil, nil, fmt.Errorf("cannot read %s", rel)
	}
	s.g.RecordSkillUse(rel)
	return textResult(string(data)), nil, nil
}
