package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// pageNames are the pages drawn inside layout.html; login.html stands
// alone.
var pageNames = []string{"memories", "memory", "log", "search", "status", "graph", "edit", "error", "users", "skills", "teams"}

var funcs = template.FuncMap{
	shownFunc:    shown,
	"pathURL":    pathEscape,
	"join":       strings.Join,
	"plural":     memgraph.Plural,
	"trimPrefix": strings.TrimPrefix,
	"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"when":       func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
	"rowctx":     func(p page, r memRow) map[string]any { return map[string]any{"Base": p.Base, "Row": r} },
	"commitctx": func(p page, c commit, open bool) map[string]any {
		return map[string]any{"Page": p, "C": c, "Open": open, "Next": p.Here}
	},
}

func parseTemplates() (map[string]*template.Template, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/commit.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		markShown(t)
		out[name] = t.Lookup("layout")
	}
	login, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/login.html")
	if err != nil {
		return nil, err
	}
	markShown(login)
	out["login"] = login.Lookup("login")
	return out, nil
}

// render executes a page into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, name string, code int, data any) {
	var b bytes.Buffer
	if err := s.pages[name].Execute(&b, data); err != nil {
		s.log.Error("web page template failed", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}
