package webui

import (
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The text a person reads of a page: no diff, no textarea, no tag (so
// no attribute: hidden form fields carry a path back as it is).
var (
	diffRE     = regexp.MustCompile(`(?s)<pre class="diff">.*?</pre>`)
	textareaRE = regexp.MustCompile(`(?s)<textarea[^>]*>.*?</textarea>`)
	tagRE      = regexp.MustCompile(`(?s)<[^>]*>`)
)

func readText(page string) string {
	page = diffRE.ReplaceAllString(page, "")
	page = textareaRE.ReplaceAllString(page, "")
	return tagRE.ReplaceAllString(page, "")
}

// TestFormatCharactersShownEscaped: a memory whose title and
// description hold a right-to-left override (U+202E) and a zero-width
// joiner, a file named with them (refused by the graph: it is listed as
// invalid), committed by an author and with a subject holding them too,
// shows them as visible escapes (\u202e, \u200d) on every page that
// prints them — and the diff view shows the change as it is.
func TestFormatCharactersShownEscaped(t *testing.T) {
	const rlo, zwj = "\u202e", "\u200d"
	name := "user_memory/pay" + rlo + "fdp.exe" + zwj + ".md"
	s := newSiteSeeded(t, func(dir string) {
		writeFiles(t, dir, map[string]string{
			"user_memory/invoice.md": memoryFile("Invoice "+rlo+"fdp"+zwj, "Wire money "+rlo+"eman"+zwj+" to evil", "You pay invoices."),
			name:                     memoryFile("Pay", "Pay "+rlo, "You pay."),
			"user_memory/bad.md":     "no front matter " + rlo,
			"user_memory/tea2.md":    memoryFile("Tea", "Tea again", "Tea."),
		})
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-qm", "add invoice "+rlo+"gnp"+zwj, "--author", "Mal"+rlo+"lory"+zwj+" <m@x>")
	})
	esc := url.PathEscape
	pages := []struct{ name, path string }{
		{"memories", "/"},
		{"memory", "/m/user_memory/invoice.md"},
		{"memory named", "/m/user_memory/" + esc("pay"+rlo+"fdp.exe"+zwj+".md")},
		{"edit named", "/edit/user_memory/" + esc("pay"+rlo+"fdp.exe"+zwj+".md")},
		{"log", "/log"},
		{"log by author", "/log?author=" + url.QueryEscape("Mal"+rlo+"lory"+zwj)},
		{"search", "/search?q=" + url.QueryEscape("wire money "+rlo)},
		{"status", "/status"},
		{"graph", "/graph"},
		{"flash", "/status?done=" + url.QueryEscape("saved "+rlo)},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			code, body := s.get(p.path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", p.path, code, body)
			}
			text := readText(body)
			if strings.Contains(text, rlo) || strings.Contains(text, zwj) {
				i := strings.Index(text, rlo)
				if i < 0 {
					i = strings.Index(text, zwj)
				}
				t.Fatalf("GET %s prints a format character unescaped: …%s…", p.path, text[max(0, i-60):min(len(text), i+60)])
			}
			if !strings.Contains(text, `\u202e`) {
				t.Fatalf("GET %s shows no escaped \\u202e:\n%s", p.path, body)
			}
		})
	}

	// The diff view is the change as it is, and the edit form's text and
	// hidden fields go back unchanged.
	_, body := s.get(pages[1].path)
	if d := diffRE.FindString(body); !strings.Contains(d, "description: Wire money "+rlo+"eman"+zwj+" to evil") {
		t.Fatalf("the diff view changed:\n%s", d)
	}
	_, body = s.get(pages[3].path)
	mustContain(t, body, `name="path" value="`+name+`"`)
	if ta := textareaRE.FindString(body); !strings.Contains(ta, "Pay "+rlo) {
		t.Fatalf("the edit form's text changed:\n%s", ta)
	}
}

// TestShownLeavesMarkupAlone: the display rule leaves HTML (rendered
// markdown, the graph), verbatim text and numbers as they are.
func TestShownLeavesMarkupAlone(t *testing.T) {
	for _, c := range []struct{ in, want any }{
		{"a\u202eb", `a\u202eb`},
		{verbatim("a\u202eb"), verbatim("a\u202eb")},
		{3, 3},
		{nil, nil},
	} {
		if got := shown(c.in); got != c.want {
			t.Errorf("shown(%#v) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

// TestMarkShownTextOnly: markShown makes the actions that print into
// text display-safe and leaves those in tags, attributes and textareas
// as they are.
func TestMarkShownTextOnly(t *testing.T) {
	const v = "a\u202eb"
	for _, c := range []struct{ tmpl, want string }{
		{`<p>{{.}}</p>`, `<p>a\u202eb</p>`},
		{`{{if .}}<b>{{.}}</b>{{else}}{{.}}{{end}}`, `<b>a\u202eb</b>`},
		{`<input value="{{.}}"> {{.}}`, "<input value=\"" + v + "\"> a\\u202eb"},
		{`<a title='x>{{.}}'>{{.}}</a>`, "<a title='x>" + v + "'>a\\u202eb</a>"},
		{`<textarea name="t">{{.}}</textarea><p>{{.}}</p>`, "<textarea name=\"t\">" + v + "</textarea><p>a\\u202eb</p>"},
		{`{{range $i, $s := .}}{{$s}}{{end}}`, "a\\u202eb"},
		{`<li class="x{{if .}} y{{end}}">{{.}}</li>`, `<li class="x y">a\u202eb</li>`},
	} {
		tm := template.Must(template.New("t").Funcs(funcs).Parse(c.tmpl))
		markShown(tm)
		var b strings.Builder
		var data any = v
		if strings.Contains(c.tmpl, "range") {
			data = []string{v}
		}
		if err := tm.Execute(&b, data); err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		if b.String() != c.want {
			t.Errorf("%s = %q, want %q", c.tmpl, b.String(), c.want)
		}
	}
}
