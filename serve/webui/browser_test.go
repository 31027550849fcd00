package webui

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

// The browser tests drive Debian's Chromium (apt-get install chromium;
// .ci/run installs it) with chromedp: no browser is downloaded. They skip
// only when no chromium is installed.

// chromiumPath finds the browser: $CHROMIUM, else chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium, or set CHROMIUM): the browser tests need Debian's Chromium")
	return ""
}

// browser is one headless Chromium tab that records every JavaScript
// dialog (alert, confirm, prompt) a page opens, and dismisses it.
type browser struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	dialogs []string
}

func newBrowser(t *testing.T) *browser {
	path := chromiumPath(t)
	home := t.TempDir()
	// Chromium binds a unix socket under $TMPDIR/org.chromium.Chromium.*/
	// and refuses to start when that path passes the 107 bytes a socket
	// address holds: under a long TMPDIR, its scratch folder goes to /tmp.
	if len(home) > 56 {
		short, err := os.MkdirTemp("/tmp", "mm-chromium-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(short) })
		home = short
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(filepath.Join(home, "profile")),
		// Chromium keeps crash reports under $HOME/.config: not the tester's.
		// and its org.chromium.Chromium.* scratch folders under $TMPDIR.
		chromedp.Env("HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+home),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.WindowSize(1100, 900),
		chromedp.Flag("disable-gpu", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	opened := make(chan struct{}, 16)
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*cdppage.EventJavascriptDialogOpening); ok {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(d.Type)+": "+d.Message)
			b.mu.Unlock()
			select {
			case opened <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-opened:
				chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
			}
		}
	}()
	return b
}

// do runs steps, each page step bounded by a minute.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML("html"))
		b.t.Fatalf("browser at %s: %v\n%s", loc, err, html)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *browser) eval(js string) []string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// startServer serves srv for a browser test. Its Close first cuts the
// browser's connections: a page's live stream would otherwise keep Close
// waiting while the browser (closed in a later cleanup) still runs.
func startServer(t *testing.T, srv *Server) *httptest.Server {
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// shot saves a PNG of the whole page as dir/name.png and checks that it is
// a PNG under 300 KB (the README's limit).
func (b *browser) shot(dir, name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) > 300<<10 {
		b.t.Fatalf("screenshot %s: %d bytes, want a PNG under 300 KB", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// shotDir is where the screenshots go: $MINDMOUNT_UI_SHOTS
// (scripts/ui-screenshots.sh sets it to docs/ui), else a temp dir.
func shotDir(t *testing.T) string {
	if d := os.Getenv("MINDMOUNT_UI_SHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestBrowserClickThrough: a person logs in with the printed URL, sees the
// memories in index order, opens one and sees its history and diff,
// reverts the consolidation that retired it and sees its status change and
// a "ui" commit in git log, edits a memory into an invalid state and sees
// the inline error and no commit, fixes it and sees the commit, and
// searches.
func TestBrowserClickThrough(t *testing.T) {
	b := newBrowser(t)
	dir := newRepo(t)
	consolidationSeed(t)(dir)
	model := llmtest.New(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{Consolidate: true, Idle: time.Hour, Every: 1 << 20, Provider: llm.NewOllama(model.OllamaURL(), "fake")})
	srv, err := New(Config{Single: rt, LoopbackHosts: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, srv)
	s := &site{t: t, srv: srv, ts: ts, rt: rt, dir: dir}
	shots := shotDir(t)

	// Log in with the URL mindmount ui prints.
	b.do(chromedp.Navigate(srv.LoginURL(ts.Listener.Addr().String())), chromedp.WaitVisible("table.mems"))
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); strings.Contains(loc, "token") {
		t.Fatalf("the token stayed in the address bar: %s", loc)
	}
	got := b.eval(`[...document.querySelectorAll("tr.mem td:nth-child(2) a")].map(a => a.textContent)`)
	want := []string{"user_memory/likes-tea.md", "user_memory/cats.md", "user_memory/lisbon.md", "character_memory/brief.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("memories in the browser: %v, want index order %v", got, want)
	}
	b.shot(shots, "memories")

	// The retired porto: behind the filter, with its history and diff.
	b.do(chromedp.Click(`a[href="/?retired=1"]`), chromedp.WaitVisible("table.retired"),
		chromedp.Click(`table.retired a[href="/m/user_memory/porto.md"]`), chromedp.WaitVisible("ol.history"))
	if st := b.text("p.status"); !strings.Contains(st, "contradicted") {
		t.Fatalf("porto's status line: %q", st)
	}
	if d := b.text("li.commit.consolidation .subject"); !strings.Contains(d, "consolidate transcripts/s1.jsonl") {
		t.Fatalf("porto's history: %q", d)
	}
	if diff := b.text("li.commit.consolidation pre.diff"); !strings.Contains(diff, "+status: contradicted") {
		t.Fatalf("the consolidation's diff: %q", diff)
	}
	b.shot(shots, "memory")

	// Revert the consolidation from porto's page.
	target := s.head()
	b.do(chromedp.Click(`li.commit.consolidation button.revert-btn`), chromedp.WaitVisible("p.flash"))
	if f := b.text("p.flash"); !strings.Contains(f, "reverted "+target[:8]) {
		t.Fatalf("flash after revert: %q", f)
	}
	if st := b.text("p.status"); !strings.Contains(st, "status: active") {
		t.Fatalf("porto's status after the revert: %q", st)
	}
	if log := s.git("log", "-2", "--format=%an %s"); !strings.HasPrefix(log, "ui ui: revert "+target[:8]) {
		t.Fatalf("git log after the revert:\n%s", log)
	}

	// The timeline shows the revert on top.
	b.do(chromedp.Click(`nav a[href="/log"]`), chromedp.WaitVisible("ol.history"))
	if subj := b.text("ol.history li.commit .subject"); !strings.Contains(subj, "revert "+target[:8]) {
		t.Fatalf("timeline top: %q", subj)
	}
	b.shot(shots, "log")

	// Edit cats into an invalid file: the error inline, nothing committed.
	head := s.head()
	b.do(chromedp.Navigate(ts.URL+"/m/user_memory/cats.md"), chromedp.Click("#edit"), chromedp.WaitVisible("#text"),
		chromedp.SetValue("#text", "---\ndescription: Has a cat named Miso\ncolour: grey\n---\n# Has a cat\n"),
		chromedp.Click("#save"), chromedp.WaitVisible("#problems"))
	if p := b.text("#problems"); !strings.Contains(p, "colour") {
		t.Fatalf("inline problems: %q", p)
	}
	if s.head() != head {
		t.Fatal("an invalid edit committed")
	}
	b.do(chromedp.SetValue("#text", "---\ndescription: Has a grey cat named Miso\n---\n# Has a cat\n\n## Fact\nA grey cat.\n"),
		chromedp.Click("#save"), chromedp.WaitVisible("p.flash"))
	if a := s.git("log", "-1", "--format=%an"); a != "ui" || s.head() == head {
		t.Fatalf("the fixed edit: author %q, head moved %v", a, s.head() != head)
	}
	mustContain(t, s.git("show", "HEAD:user_memory/cats.md"), "Has a grey cat named Miso")

	// Search from the header.
	b.do(chromedp.SetValue(`header input[name="q"]`, "green tea"), chromedp.Submit(`header form.search`), chromedp.WaitVisible("ol.hits"))
	if h := b.text("ol.hits li.hit"); !strings.Contains(h, "user_memory/likes-tea.md") || !strings.Contains(h, "score") {
		t.Fatalf("search hit: %q", h)
	}

	b.do(chromedp.Navigate(ts.URL+"/graph"), chromedp.WaitVisible("svg.graph"))
	b.shot(shots, "graph")

	// A consolidation dreams on its branch and merges into main with two
	// parents; its Revert button on the timeline undoes the merge against
	// main (git revert -m 1): the dream's memory goes, a ui commit on top.
	merge := dreamItalian(t, rt, model)
	b.do(chromedp.Navigate(ts.URL+"/log"), chromedp.WaitVisible("ol.history"),
		chromedp.Click(`button.revert-btn[data-commit="`+merge+`"]`), chromedp.WaitVisible("p.flash"))
	if f := b.text("p.flash"); !strings.Contains(f, "reverted "+merge[:8]) {
		t.Fatalf("flash after reverting the merge: %q", f)
	}
	if got := s.git("log", "-1", "--format=%an%n%P"); got != "ui\n"+merge {
		t.Fatalf("after reverting the merge, the last commit is %q, want ui's on %s", got, merge)
	}
	if _, err := os.Stat(filepath.Join(dir, "user_memory/speaks-italian.md")); !os.IsNotExist(err) {
		t.Fatalf("the dream's memory is still there: %v", err)
	}

	if len(b.dialogs) > 0 {
		t.Fatalf("dialogs opened: %v", b.dialogs)
	}
}

// TestBrowserXSS: memories and commits that carry <script>, an
// "><img onerror=…> and a javascript: link render as text in a real
// browser: no dialog opens on any page and nothing of the payload runs.
// And should escaping ever fail, the CSP still blocks inline script: an
// inline handler planted in the page does not run.
func TestBrowserXSS(t *testing.T) {
	b := newBrowser(t)
	dir := newRepo(t)
	xssSeed(t)(dir)
	rt := startRuntime(t, dir, host.RuntimeConfig{})
	srv, err := New(Config{Single: rt, LoopbackHosts: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, srv)
	b.do(chromedp.Navigate(srv.LoginURL(ts.Listener.Addr().String())), chromedp.WaitVisible("table.mems"))
	name := "user_memory/\"><svg onload=alert('name')>.md"
	for _, p := range []string{"/", "/?retired=1", "/m/user_memory/xss.md", "/m/" + pathEscape(name), "/log", "/search?q=alert+script", "/status", "/graph", "/edit/user_memory/xss.md"} {
		b.do(chromedp.Navigate(ts.URL+p), chromedp.WaitVisible("main"))
		// Links a click would follow: none may run script.
		if js := b.eval(`[...document.querySelectorAll("a[href]")].map(a => a.href).filter(h => /^javascript:/i.test(h))`); len(js) > 0 {
			t.Errorf("%s has javascript: links %v", p, js)
		}
		if ev := b.eval(`[...document.querySelectorAll("*")].flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name)).map(a => e.tagName + " " + a.name))`); len(ev) > 0 {
			t.Errorf("%s has event handler attributes %v", p, ev)
		}
	}
	// The payload shows as text.
	b.do(chromedp.Navigate(ts.URL+"/m/user_memory/xss.md"), chromedp.WaitVisible("main"))
	if fm := b.text("table.front"); !strings.Contains(fm, "<script>alert('desc')</script>") {
		t.Fatalf("the description is not shown as text: %q", fm)
	}
	// The CSP: an inline handler put into the page does not run. The
	// promise resolves from a listener added after the attribute handler,
	// so an allowed handler would have run by then.
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`new Promise(done => {
		document.body.insertAdjacentHTML("beforeend", '<img id="planted" src="/nonexistent.png" onerror="window.pwned=1">');
		document.getElementById("planted").addEventListener("error", () => setTimeout(() => done(window.pwned === undefined ? [] : [String(window.pwned)]), 0));
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Fatalf("the CSP let an inline handler run: pwned=%v", v)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) > 0 {
		t.Fatalf("dialogs opened: %v", b.dialogs)
	}
}

// TestBrowserPhoneAndDark: at a phone's width no page scrolls sideways,
// and the colours follow the system's dark or light preference.
func TestBrowserPhoneAndDark(t *testing.T) {
	b := newBrowser(t)
	dir := newRepo(t)
	consolidationSeed(t)(dir)
	rt := startRuntime(t, dir, host.RuntimeConfig{})
	srv, err := New(Config{Single: rt, LoopbackHosts: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, srv)
	b.do(chromedp.Navigate(srv.LoginURL(ts.Listener.Addr().String())), chromedp.WaitVisible("table.mems"),
		chromedp.EmulateViewport(390, 844))
	for _, p := range []string{"/", "/m/user_memory/porto.md", "/log", "/search?q=tea", "/status", "/graph", "/edit/user_memory/cats.md"} {
		b.do(chromedp.Navigate(ts.URL+p), chromedp.WaitVisible("main"))
		if w := b.eval(`document.documentElement.scrollWidth > window.innerWidth + 1 ? [String(document.documentElement.scrollWidth)] : []`); len(w) > 0 {
			t.Errorf("%s is %spx wide on a 390px screen", p, w[0])
		}
	}
	background := func(scheme string) string {
		t.Helper()
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
		b.do(chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("main"))
		return b.eval(`[getComputedStyle(document.body).backgroundColor]`)[0]
	}
	light, dark := background("light"), background("dark")
	if light != "rgb(255, 255, 255)" || dark == light {
		t.Fatalf("background light %s, dark %s: want white, then a dark colour", light, dark)
	}
}

// TestBrowserLive: an operator watching the list sees a memory an agent
// writes appear without reloading (server-sent events and live.js), and
// the timeline gets its commit.
func TestBrowserLive(t *testing.T) {
	b := newBrowser(t)
	dir := newRepo(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{})
	srv, err := New(Config{Single: rt, LoopbackHosts: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, srv)
	b.do(chromedp.Navigate(srv.LoginURL(ts.Listener.Addr().String())), chromedp.WaitVisible("table.mems"))
	// A marker on the page that a reload would lose.
	b.eval(`window.kept = "yes"; []`)
	writeFiles(t, dir, map[string]string{"user_memory/new-fact.md": memoryFile("New", "Appeared while watching", "A new fact.")})
	b.do(chromedp.WaitVisible(`a[href="/m/user_memory/new-fact.md"]`))
	if v := b.eval(`[String(window.kept)]`); v[0] != "yes" {
		t.Fatal("the page was reloaded, not updated in place")
	}
	b.do(chromedp.Navigate(ts.URL+"/log"), chromedp.WaitVisible("ol.history"))
	writeFiles(t, dir, map[string]string{"user_memory/second.md": memoryFile("Second", "Second while watching", "Another fact.")})
	b.do(chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("li.commit .subject")].some(e => e.textContent.includes("user_memory/second.md"))`))
}
