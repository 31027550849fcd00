package golden

import (
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// isBatchPrompt reports whether an extraction's system prompt is the one
// for a pull request or an issue: it names the four kinds and the
// sibling rule.
func isBatchPrompt(system string) bool {
	for _, want := range append(append([]string(nil), consolidate.ProjectKinds...), "never contradict or supersede each other") {
		if !strings.Contains(system, want) {
			return false
		}
	}
	return true
}

// scriptPRs is the scripted model of the pull-request set. Extraction
// answers the facts of the item whose heading the text carries, and
// nothing unless the batch prompt was used. Decisions follow PRDecide.
func scriptPRs(c llmtest.Call) llmtest.Reply {
	switch c.Kind {
	case llmtest.KindExtract:
		var facts []map[string]any
		for _, it := range PRHistory {
			if !isBatchPrompt(c.System) || !strings.Contains(c.Prompt, fmt.Sprintf("# %s: %s\n", it.Source, it.Title)) {
				continue
			}
			for _, f := range it.Facts {
				facts = append(facts, map[string]any{"kind": f.Kind, "slug": f.Slug, "description": f.Description, "fact": f.Fact,
					"episode": "", "topic": f.Topic, "search": []string{}, "keywords": f.Keywords, "pinned": false})
			}
		}
		if facts == nil {
			facts = []map[string]any{}
		}
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts, "skills": []any{}})}
	case llmtest.KindDecide:
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": PRDecide(c.Prompt)})}
	}
	return llmtest.Reply{Content: "{}"}
}

// PRDecide is the scripted decision for a batch: a fact DELETEs the first
// candidate offered for the same topic that has the same kind (tags) — a
// reversed decision, a replaced convention — else it is ADDed. It ignores
// the "same source" mark on purpose: it is a model that breaks the
// sibling rule, which consolidation must hold itself.
func PRDecide(prompt string) []consolidate.Decision {
	var out []consolidate.Decision
	fact, tag, target := -1, "", ""
	var path string
	var sameTopic bool
	flush := func() {
		if fact < 0 {
			return
		}
		d := consolidate.Decision{Fact: fact, Action: consolidate.ActionAdd}
		if target != "" {
			d.Action, d.Target = consolidate.ActionDelete, target
		}
		out = append(out, d)
	}
	for _, line := range strings.Split(prompt, "\n") {
		switch {
		case strings.HasPrefix(line, "<fact number=\""):
			flush()
			fmt.Sscanf(line, "<fact number=\"%d\"", &fact)
			tag, target, path = "", "", ""
		case strings.HasPrefix(line, "tags: "):
			tag = strings.TrimPrefix(line, "tags: ")
		case strings.HasPrefix(line, "- path: "):
			path, sameTopic = strings.TrimPrefix(line, "- path: "), false
		case strings.HasPrefix(line, "  offered because: "):
			sameTopic = strings.Contains(line, "same topic")
		case strings.HasPrefix(line, "  tags: ") && sameTopic && target == "" && tag != "" && strings.TrimPrefix(line, "  tags: ") == tag:
			target = path
		}
	}
	flush()
	return out
}
