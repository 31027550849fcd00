package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// readExisting reads a file a tool is about to change.
func (s *server) readExisting(rel string) ([]byte, error) {
	data, ok, err := s.tree.read(rel)
	switch {
	case errors.Is(err, errSymlink):
		return nil, fmt.Errorf("%s: %w", rel, err)
	case errors.Is(err, errIsDir):
		return nil, fmt.Errorf("%s is a directory; name a file in it", rel)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", rel, err)
	case !ok:
		return nil, fmt.Errorf("%s does not exist; create it, or view %s to see what there is", rel, parentOf(rel))
	}
	return data, nil
}

// replaceFile is the write step shared by the editing tools: rel's new
// content is computed from its current one by change, validated against
// HEAD, and only then written and committed. verb, when set, is what the
// commit's subject says the tool did ("use", "retire") where git sees only
// an update.
func (s *server) replaceFile(ctx context.Context, req *mcp.CallToolRequest, rel, verb string, change func(old []byte) ([]byte, error)) (string, error) {
	return s.commit(ctx, req, func() (tracker.Edit, error) {
		old, err := s.readExisting(rel)
		if err != nil {
			return tracker.Edit{}, err
		}
		if err := s.canChange(rel); err != nil {
			return tracker.Edit{}, err
		}
		data, err := change(old)
		if err != nil {
			return tracker.Edit{}, err
		}
		if err := s.check(rel, data); err != nil {
			return tracker.Edit{}, err
		}
		if err := s.tree.write(rel, data); err != nil {
			return tracker.Edit{}, writeError(rel, err)
		}
		return tracker.Edit{Paths: []string{rel}, Verb: verb}, nil
	})
}

func writeError(rel string, err error) error {
	if errors.Is(err, errSymlink) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return fmt.Errorf("cannot write %s: %v", rel, err)
}

func (s *server) create(ctx context.Context, req *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, any, error) {
	rel, err := s.writable(in.Path)
	if err != nil {
		return nil, nil, err
	}
	existed := false
	hash, err := s.commit(ctx, req, func() (tracker.Edit, error) {
		_, ok, err := s.tree.read(rel)
		switch {
		case errors.Is(err, errIsDir):
			return tracker.Edit{}, fmt.Errorf("%s is a directory", rel)
		case err != nil:
			return tracker.Edit{}, writeError(rel, err)
		}
		existed = ok
		if err := s.canCreate(rel); err != nil {
			return tracker.Edit{}, err
		}
		data := []byte(in.FileText)
		if len(data) > 0 && !strings.HasSuffix(in.FileText, "\n") {
			data = append(data, '\n')
		}
		if err := s.check(rel, data); err != nil {
			return tracker.Edit{}, err
		}
		if err := s.tree.write(rel, data); err != nil {
			return tracker.Edit{}, writeError(rel, err)
		}
		return tracker.Edit{Paths: []string{rel}}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	verb := "created"
	if existed {
		verb = "overwrote"
	}
	return done(verb+" "+shown(rel), hash), nil, nil
}

func (s *server) strReplace(ctx context.Context, req *mcp.CallToolRequest, in strReplaceArgs) (*mcp.CallToolResult, any, error) {
	rel, err := s.writable(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if in.OldStr == "" {
		return nil, nil, errors.New("old_str is empty; give text that occurs exactly once in the file (use insert to add text)")
	}
	hash, err := s.replaceFile(ctx, req, rel, "", func(old []byte) ([]byte, error) {
		text := string(old)
		switch n := strings.Count(text, in.OldStr); n {
		case 1:
			return []byte(strings.Replace(text, in.OldStr, in.NewStr, 1)), nil
		case 0:
			return nil, fmt.Errorf("old_str was not found in %s (0 matches); view the file and copy the text exactly, whitespace included", shown(rel))
		default:
			return nil, fmt.Errorf("old_str occurs %d times in %s (lines %s); include more of the surrounding text so it matches exactly once", n, shown(rel), matchLines(text, in.OldStr))
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return done("replaced 1 occurrence in "+shown(rel), hash), nil, nil
}

// matchLines lists the line numbers where sub starts in text.
func matchLines(text, sub string) string {
	var lines []string
	off := 0
	for {
		i := strings.Index(text[off:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(text[:off+i], "\n")+1))
		off += i + max(len(sub), 1)
		if off > len(text) {
			break
		}
	}
	return strings.Join(lines, ", ")
}

func (s *server) insert(ctx context.Context, req *mcp.CallToolRequest, in insertArgs) (*mcp.CallToolResult, any, error) {
	rel, err := s.writable(in.Path)
	if err != nil {
		return nil, nil, err
	}
	hash, err := s.replaceFile(ctx, req, rel, "", func(old []byte) ([]byte, error) {
		text := string(old)
		lines := strings.SplitAfter(text, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if in.InsertLine < 0 || in.InsertLine > len(lines) {
			return nil, fmt.Errorf("insert_line %d is outside %s, which has %d lines; use 0 to %d", in.InsertLine, shown(rel), len(lines), len(lines))
		}
		ins := in.InsertText
		if !strings.HasSuffix(ins, "\n") {
			ins += "\n"
		}
		if in.InsertLine > 0 && !strings.HasSuffix(lines[in.InsertLine-1], "\n") {
			lines[in.InsertLine-1] += "\n"
		}
		out := strings.Join(lines[:in.InsertLine], "") + ins + strings.Join(lines[in.InsertLine:], "")
		return []byte(out), nil
	})
	if err != nil {
		return nil, nil, err
	}
	return done(fmt.Sprintf("inserted %d %s after line %d of %s", strings.Count(strings.TrimSuffix(in.InsertText, "\n"), "\n")+1, memgraph.Plural(strings.Count(strings.TrimSuffix(in.InsertText, "\n"), "\n")+1, "line", "lines"), in.InsertLine, shown(rel)), hash), nil, nil
}

func (s *server) delete(ctx context.Context, req *mcp.CallToolRequest, in deleteArgs) (*mcp.CallToolResult, any, error) {
	rel, err := s.writable(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if in.Hard {
		hash, err := s.commit(ctx, req, func() (tracker.Edit, error) {
			if _, err := s.readExisting(rel); err != nil {
				return tracker.Edit{}, err
			}
			if err := s.canChange(rel); err != nil {
				return tracker.Edit{}, err
			}
			if err := s.tree.remove(rel); err != nil {
				return tracker.Edit{}, fmt.Errorf("cannot remove %s: %v", rel, err)
			}
			return tracker.Edit{Paths: []string{rel}}, nil
		})
		if err != nil {
			return nil, nil, err
		}
		return done("removed "+shown(rel)+" (hard delete; git history still has it)", hash), nil, nil
	}
	if err := s.canChange(rel); err != nil {
		return nil, nil, err
	}
	if memgraph.KindOf(rel) == memgraph.KindBlock {
		// character.md, user.md and system/ are always in context, status
		// or not: retiring one would change nothing a model can see.
		return nil, nil, fmt.Errorf("%s is a block that is always in the context, so it cannot be retired; edit it with str_replace, or remove it with hard: true", shown(rel))
	}
	already := false
	hash, err := s.replaceFile(ctx, req, rel, "retire", func(old []byte) ([]byte, error) {
		m, probs := memgraph.Parse(rel, old)
		if len(probs) > 0 {
			return nil, fmt.Errorf("%s is invalid (%s); fix it first, or delete it with hard: true", rel, probs[0])
		}
		if m.Front.Status == memgraph.StatusRetracted {
			already = true
			return old, nil
		}
		m.SetStatus(memgraph.StatusRetracted, "")
		return m.Render(), nil
	})
	if err != nil {
		return nil, nil, err
	}
	if already {
		return textResult(shown(rel) + " was already retired (status: retracted); nothing changed. Use hard: true to remove the file."), nil, nil
	}
	return done("retired "+shown(rel)+": status is now retracted, so it leaves the indexes, context and recall but stays on disk and in history (hard: true removes the file)", hash), nil, nil
}

func (s *server) rename(ctx context.Context, req *mcp.CallToolRequest, in renameArgs) (*mcp.CallToolResult, any, error) {
	from, err := s.writable(in.OldPath)
	if err != nil {
		return nil, nil, fmt.Errorf("old_path: %v", err)
	}
	to, err := s.writable(in.NewPath)
	if err != nil {
		return nil, nil, fmt.Errorf("new_path: %v", err)
	}
	if from == to {
		return nil, nil, errors.New("old_path and new_path are the same file")
	}
	hash, err := s.commit(ctx, req, func() (tracker.Edit, error) {
		data, err := s.readExisting(from)
		if err != nil {
			return tracker.Edit{}, err
		}
		if err := s.canChange(from); err != nil {
			return tracker.Edit{}, err
		}
		if err := s.canCreate(to); err != nil {
			return tracker.Edit{}, err
		}
		switch _, ok, err := s.tree.read(to); {
		case errors.Is(err, errSymlink):
			return tracker.Edit{}, fmt.Errorf("new_path %s: %w", to, err)
		case ok || errors.Is(err, errIsDir):
			return tracker.Edit{}, fmt.Errorf("%s already exists; pick another new_path, or delete it first", shown(to))
		}
		if err := s.check(to, data); err != nil {
			return tracker.Edit{}, err
		}
		if err := s.tree.rename(from, to); err != nil {
			return tracker.Edit{}, writeError(to, err)
		}
		return tracker.Edit{Paths: []string{from, to}, Renames: [][2]string{{from, to}}}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return done("renamed "+shown(from)+" to "+shown(to), hash), nil, nil
}

// now is the clock of use stamps; tests may set it.
var now = time.Now

func (s *server) use(ctx context.Context, req *mcp.CallToolRequest, in useArgs) (*mcp.CallToolResult, any, error) {
	rel, err := s.writable(in.Path)
	if err != nil {
		return nil, nil, err
	}
	uses := 0
	hash, err := s.replaceFile(ctx, req, rel, "use", func(old []byte) ([]byte, error) {
		m, probs := memgraph.Parse(rel, old)
		if len(probs) > 0 {
			return nil, fmt.Errorf("%s is invalid (%s); fix it first", rel, probs[0])
		}
		m.AddUse(now())
		uses = m.Uses
		return m.Render(), nil
	})
	if err != nil {
		return nil, nil, err
	}
	return done(fmt.Sprintf("stamped used, %s on %s (%d %s)", now().Format(memgraph.DateLayout), shown(rel), uses, memgraph.Plural(uses, "use", "uses")), hash), nil, nil
}
