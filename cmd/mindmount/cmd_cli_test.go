package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMissingArgs(t *testing.T) {
	for _, tc := range []struct {
		usage string
		args  []string
		want  string
	}{
		{"mount REPO MOUNTPOINT [--debounce 1s]", nil, "REPO and MOUNTPOINT"},
		{"mount REPO MOUNTPOINT [--debounce 1s]", []string{"r"}, "MOUNTPOINT"},
		{"mount REPO MOUNTPOINT [--debounce 1s]", []string{"r", "m"}, ""},
		{"index DIR [user|character]", nil, "DIR"},
		{"index DIR [user|character]", []string{"d", "user"}, ""},
		{"version", nil, ""},
		{"hooks install|uninstall [--harness NAME] REPO_OR_MOUNT", nil, "install|uninstall"},
		{"users add|list|remove ROOT [ID]", nil, "add|list|remove and ROOT"},
		{"users add|list|remove ROOT [ID]", []string{"list", "r"}, ""},
		{"serve --root ROOT [--mount MNT]", nil, ""},
		{"status REPO | status --root ROOT", []string{"r"}, ""},
		{"status REPO | status --root ROOT", nil, ""},
		{"context DIR [--max-bytes N | --max-tokens N]", nil, "DIR"},
		{`recall REPO "QUESTION" [-k N]`, []string{"r"}, "QUESTION"},
		{"hook EVENT", nil, "EVENT"},
		{"run [--repo DIR] [--transcript FILE] -- AGENT [ARGS...]", nil, "AGENT"},
		{"run [--repo DIR] [--transcript FILE] -- AGENT [ARGS...]", []string{"sh"}, ""},
		{"hooks install|uninstall [--harness NAME [--scope user|project]] REPO_OR_MOUNT", []string{"install"}, ""},
	} {
		if got := missingArgs(tc.usage, tc.args); got != tc.want {
			t.Errorf("missingArgs(%q, %q) = %q, want %q", tc.usage, tc.args, got, tc.want)
		}
	}
}

// A missing argument is one line that says what is missing plus a pointer
// to --help, never the whole help text.
func TestMissingArgumentIsShort(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"check"}, &out, &errOut)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) > 3 || !strings.Contains(lines[0], "missing PATH") {
		t.Fatalf("stderr:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "mindmount check --help") {
		t.Fatalf("no pointer to --help:\n%s", errOut.String())
	}
}

// "mindmount run" with no agent says so, like every other command (issue 11.7).
func TestRunMissingAgent(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"run", "--repo", "x"}, {"run", "--"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 2 {
			t.Fatalf("%q: exit %d, want 2", args, code)
		}
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if lines[0] != "mindmount run: missing AGENT" || len(lines) != 3 || !strings.Contains(lines[2], "mindmount run --help") {
			t.Errorf("%q: stderr:\n%s", args, errOut.String())
		}
	}
}

func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"check", "--help"}, {"check", "-h"}, {"help", "check"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("%q: exit %d", args, code)
		}
		if !strings.Contains(out.String(), "usage: mindmount check") || errOut.Len() != 0 {
			t.Fatalf("%q: stdout %q stderr %q", args, out.String(), errOut.String())
		}
	}
}

func TestFlagsPrintedWithDoubleDash(t *testing.T) {
	var out, errOut bytes.Buffer
	run([]string{"help", "init"}, &out, &errOut)
	if !strings.Contains(out.String(), "--user NAME") || strings.Contains(out.String(), "\n  -user") {
		t.Fatalf("help:\n%s", out.String())
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "mindmount ") {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
}

// "init DIR --user" must not take DIR as the user's name.
func TestValueFlagWithoutValue(t *testing.T) {
	dir := t.TempDir() + "/mem"
	var out, errOut bytes.Buffer
	code := run([]string{"init", dir, "--user"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "--user needs a value") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestHelpNamesWhatExists: users --help lists token, serve's usage shows
// --http, and serve with nothing to serve says what it needs.
func TestHelpNamesWhatExists(t *testing.T) {
	var out, errb bytes.Buffer
	run([]string{"users", "--help"}, &out, &errb)
	if h := out.String() + errb.String(); !strings.Contains(h, "users add|list|remove|token") || !strings.Contains(h, "mindmount users token ROOT ID") {
		t.Errorf("users --help:\n%s", h)
	}
	out.Reset()
	errb.Reset()
	run([]string{"serve", "--help"}, &out, &errb)
	if h := out.String() + errb.String(); !strings.Contains(h, "[--http ADDR]") {
		t.Errorf("serve --help:\n%s", h)
	}
	out.Reset()
	run([]string{"-v"}, &out, &errb)
	if !strings.HasPrefix(out.String(), "mindmount "+versionString()+" (") {
		t.Errorf("-v: %q", out.String())
	}
	errb.Reset()
	if code := run([]string{"serve", "--root", t.TempDir()}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--mount MNT") || !strings.Contains(errb.String(), "--http ADDR") {
		t.Errorf("serve with nothing to serve: exit %d\n%s", code, errb.String())
	}
}
