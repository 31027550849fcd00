package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' arguments are named as in the file-oriented memory tool
// (path, file_text, old_str, new_str, insert_line, insert_text, old_path,
// new_path, view_range), so a model trained on it needs no new habits.

type viewArgs struct {
	Path      string `json:"path" jsonschema:"file or directory, relative to the memory root or under /memories/"`
	ViewRange []int  `json:"view_range,omitempty" jsonschema:"optional [first, last] line numbers (1-based; last -1 = to the end)"`
}

type createArgs struct {
	Path     string `json:"path" jsonschema:"the new file, e.g. user_memory/likes-tea.md"`
	FileText string `json:"file_text" jsonschema:"the whole file: frontmatter with a description, a # title, ## Fact, ## Access log"`
}

type strReplaceArgs struct {
	Path   string `json:"path" jsonschema:"the file to edit"`
	OldStr string `json:"old_str" jsonschema:"text that occurs exactly once in the file"`
	NewStr string `json:"new_str" jsonschema:"its replacement (may be empty)"`
}

type insertArgs struct {
	Path       string `json:"path" jsonschema:"the file to edit"`
	InsertLine int    `json:"insert_line" jsonschema:"insert after this line number (0 = at the top)"`
	InsertText string `json:"insert_text" jsonschema:"the text to insert"`
}

type deleteArgs struct {
	Path string `json:"path" jsonschema:"the memory to retire"`
	Hard bool   `json:"hard,omitempty" jsonschema:"remove the file instead of retiring it (status: retracted); history keeps it either way"`
}

type renameArgs struct {
	OldPath string `json:"old_path" jsonschema:"the file to move"`
	NewPath string `json:"new_path" jsonschema:"its new path (must not exist)"`
}

type recallArgs struct {
	Query string `json:"query" jsonschema:"a question or keywords in plain words"`
	K     int    `json:"k,omitempty" jsonschema:"how many memories to return (default 10)"`
	Kind  string `json:"kind,omitempty" jsonschema:"only user or character memories"`
	All   bool   `json:"all,omitempty" jsonschema:"include retired (superseded, retracted, contradicted) memories"`
	Scope string `json:"scope,omitempty" jsonschema:"where to search: personal, a team's name, or all (default: personal memory and every team attached)"`
}

type contextArgs struct {
	Budget int `json:"budget,omitempty" jsonschema:"size limit in estimated tokens (4 bytes each); default 8192"`
}

type useArgs struct {
	Path string `json:"path" jsonschema:"the memory that helped"`
}

func boolPtr(b bool) *bool { return &b }

// schema is the input schema of T, open to arguments it does not name: a
// model used to the single memory tool sends "command" along, and an
// extra argument must not turn a good call into an error.
func schema[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // the argument types above are static: a test catches this
	}
	sc.AdditionalProperties = nil
	return sc
}

// addTools registers the ten tools.
func (s *server) addTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	edit := &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "view", InputSchema: schema[viewArgs](), Annotations: ro,
		Description: "Show a memory file with line numbers (optionally only view_range), or list a directory with each memory's description and use count. /memories is the root; user_memory.md, character_memory.md and CONTEXT.md are generated views."}, s.view)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "create", InputSchema: schema[createArgs](), Annotations: edit,
		Description: "Create (or overwrite) a memory file with file_text. One fact per file; the file must be valid (frontmatter with a description under user_memory/ and character_memory/), else nothing is written."}, s.create)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "str_replace", InputSchema: schema[strReplaceArgs](), Annotations: edit,
		Description: "Replace old_str, which must occur exactly once in the file, with new_str."}, s.strReplace)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "insert", InputSchema: schema[insertArgs](), Annotations: edit,
		Description: "Insert insert_text after line insert_line (0 = at the top)."}, s.insert)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "delete", InputSchema: schema[deleteArgs](), Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true)},
		Description: "Retire a memory: it gets status: retracted and leaves the indexes, context and recall, but stays on disk and in history. hard: true removes the file instead."}, s.delete)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "rename", InputSchema: schema[renameArgs](), Annotations: edit,
		Description: "Move a memory file from old_path to new_path."}, s.rename)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "recall", InputSchema: schema[recallArgs](), Annotations: ro,
		Description: "Find the memories that answer a question, best first: path, description and the matching sentence. Active memories only unless all is true."}, s.recall)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "context", InputSchema: schema[contextArgs](), Annotations: ro,
		Description: "The compiled context (CONTEXT.md): persona, memory indexes, user profile, system blocks and a tree of other memory, within an optional budget in tokens."}, s.compiled)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "use", InputSchema: schema[useArgs](), Annotations: edit,
		Description: "Record that a memory helped: appends 'used, DD.MM.YY' to its Access log. Ranking depends on it."}, s.use)
	s.addSkillsTool() // skills.go
}
