package webui

import (
	"fmt"
	"html/template"
	"reflect"
	"strings"
	"text/template/parse"

	"github.com/mindmount/mindmount/memgraph"
)

// The page's one rule for display-safe text: whatever a template prints
// as text passes through shown, which writes control and invisible
// format characters (bidi overrides and isolates, zero-width spaces and
// joiners: memgraph.Hidden) as visible escapes (\u202e) with
// memgraph.SafeText, so a memory's name, description or a commit's
// subject cannot show a reviewer text in another order than it holds.
// The templates do not name it: markShown appends it to every action in
// text context when the templates are parsed. Attribute values (hidden
// form fields, links) and a textarea's content are left alone — they go
// back to the server as they are and are not read as text — and so is
// verbatim text: the diff view shows a change byte for byte.

// shownFunc is the name markShown gives shown in the templates.
const shownFunc = "shown"

// verbatim is text a template prints as it is (a diff's line): shown
// leaves it unchanged.
type verbatim string

// shown is the display-safe form of v: strings, errors and Stringers
// through memgraph.SafeText; HTML (rendered markdown, the graph, which
// escape their own text), verbatim text and non-text values unchanged.
func shown(v any) any {
	switch x := v.(type) {
	case nil, template.HTML, verbatim:
		return v
	case string:
		return memgraph.SafeText(x)
	case error:
		return memgraph.SafeText(x.Error())
	case fmt.Stringer:
		return memgraph.SafeText(x.String())
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return memgraph.SafeText(rv.String())
	}
	return v
}

// markShown appends shown to every action of t's templates that prints
// into text (not into a tag, an attribute or a textarea). Call it after
// parsing, before the first Execute (which escapes the templates).
func markShown(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			var m marker
			m.walk(tt.Tree.Root)
		}
	}
}

// marker follows where a template's text leaves the HTML parser: in
// text, in a tag (and in which quote), or in a textarea.
type marker struct {
	inTag    bool
	quote    byte
	opening  string // the name of the opening tag being read ("" in a closing one)
	textarea bool   // between <textarea …> and </textarea>
}

func (m *marker) walk(n parse.Node) {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			m.walk(c)
		}
	case *parse.TextNode:
		m.text(x.Text)
	case *parse.ActionNode:
		if !m.inTag && !m.textarea && len(x.Pipe.Decl) == 0 {
			cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: x.Pos,
				Args: []parse.Node{parse.NewIdentifier(shownFunc).SetPos(x.Pos)}}
			x.Pipe.Cmds = append(x.Pipe.Cmds, cmd)
		}
	case *parse.IfNode:
		m.branches(&x.BranchNode)
	case *parse.RangeNode:
		m.branches(&x.BranchNode)
	case *parse.WithNode:
		m.branches(&x.BranchNode)
	}
}

// branches walks both branches from the same state; the templates end
// them where they began (html/template requires it of contexts too).
func (m *marker) branches(b *parse.BranchNode) {
	start := *m
	m.walk(b.List)
	end := *m
	*m = start
	m.walk(b.ElseList)
	*m = end
}

// text advances the state over literal template text.
func (m *marker) text(s []byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case m.quote != 0:
			if c == m.quote {
				m.quote = 0
			}
		case m.inTag:
			switch c {
			case '"', '\'':
				m.quote = c
			case '>':
				m.inTag = false
				m.textarea = m.opening == "textarea"
			}
		case c == '<' && i+1 < len(s):
			name, closing := tagName(s[i+1:])
			if name == "" || (m.textarea && !(closing && name == "textarea")) {
				continue
			}
			m.inTag, m.textarea, m.opening = true, false, ""
			if !closing {
				m.opening = name
			}
		}
	}
}

// tagName is the lower-case name of the tag whose text after "<" is s
// ("" when s starts no tag; "!" for a comment or doctype) and whether it
// closes one.
func tagName(s []byte) (name string, closing bool) {
	if len(s) > 0 && s[0] == '/' {
		closing, s = true, s[1:]
	}
	if len(s) > 0 && s[0] == '!' && !closing {
		return "!", false
	}
	n := 0
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9' && n > 0) {
		n++
	}
	return strings.ToLower(string(s[:n])), closing
}
