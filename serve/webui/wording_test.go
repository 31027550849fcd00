package webui

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestGraphLabelsStayInside: every memory's name on the graph fits in the
// picture: a retired one on the outer ring's right edge is drawn whole
// ("has-cat-miso", not cut to "has"). A glyph of the 12px labels is taken
// as 7px wide, more than the usual fonts draw.
func TestGraphLabelsStayInside(t *testing.T) {
	s := newSite(t)
	writeFiles(t, s.dir, map[string]string{
		"user_memory/has-cat-miso.md":   "---\ndescription: Has a cat, Miso\nstatus: contradicted\n---\n# Miso\n\n## Fact\nA cat.\n",
		"user_memory/lives-in-porto.md": memoryFile("Porto", "Lives in Porto", "Porto.", "03.11.26"),
	})
	s.settle()
	code, body := s.get("/graph")
	if code != http.StatusOK {
		t.Fatalf("graph: %d", code)
	}
	labels := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="(start|end)" class="label">([^<]*)</text>`).FindAllStringSubmatch(body, -1)
	if len(labels) < 2 {
		t.Fatalf("%d labels on the graph:\n%s", len(labels), body)
	}
	const glyph, size = 7.0, 800.0
	for _, l := range labels {
		x, _ := strconv.ParseFloat(l[1], 64)
		width := glyph * float64(len(l[3]))
		if l[2] == "start" && x+width > size || l[2] == "end" && x-width < 0 {
			t.Errorf("label %q at x=%s (%s) runs out of the %v-wide picture", l[3], l[1], l[2], size)
		}
	}
	mustContain(t, body, ">has-cat-miso</text>", "(1 use)</title>", "(0 uses)</title>")
	mustNotContain(t, body, "(1 uses)")
}

// TestOneUseIsSingular: a memory used once says "1 use", not "1 uses".
func TestOneUseIsSingular(t *testing.T) {
	s := newSite(t)
	writeFiles(t, s.dir, map[string]string{"user_memory/once.md": memoryFile("Once", "Used once", "Once.", "03.11.26")})
	s.settle()
	code, body := s.get("/m/user_memory/once.md")
	if code != http.StatusOK {
		t.Fatalf("memory page: %d", code)
	}
	if !strings.Contains(body, "1 use in the access log") {
		t.Fatalf("no \"1 use in the access log\":\n%s", body)
	}
}
