package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestEveryCommandInHelp: every command is listed by "mindmount help",
// every subcommand by its parent's --help (the token subcommand once went
// missing from users --help), each --help names its flags, and every flag
// has help text. Help and dispatch read one declaration, commandTable.
func TestEveryCommandInHelp(t *testing.T) {
	var top bytes.Buffer
	if code := run([]string{"help"}, &top, &bytes.Buffer{}); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for name, c := range commands {
		if c.summary != "" && !strings.Contains(top.String(), "  "+name+" ") {
			t.Errorf("mindmount help does not list %s", name)
		}
		checkHelp(t, c, []string{name})
	}
}

func checkHelp(t *testing.T, c *command, path []string) {
	t.Helper()
	var out bytes.Buffer
	args := append(append([]string{}, path...), "--help")
	if code := run(args, &out, &bytes.Buffer{}); code != 0 {
		t.Errorf("%s: exit %d", strings.Join(args, " "), code)
		return
	}
	h := out.String()
	if !strings.HasPrefix(h, "usage: mindmount "+c.usage+"\n") || strings.TrimSpace(c.help) == "" {
		t.Errorf("%s --help has no usage line or no help:\n%s", strings.Join(path, " "), h)
	}
	for _, s := range c.subs {
		if s.summary == "" || !strings.Contains(h, "mindmount "+s.usage+"\n") || !strings.Contains(h, s.summary) {
			t.Errorf("%s --help does not list its subcommand %s:\n%s", strings.Join(path, " "), s.name, h)
		}
		checkHelp(t, s, append(append([]string{}, path...), s.name))
	}
	fl, _ := newFlagSet(c, "mindmount "+strings.Join(path, " "), &bytes.Buffer{})
	fl.VisitAll(func(f *flag.Flag) {
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("%s: flag --%s has no help text", strings.Join(path, " "), f.Name)
		}
		if !strings.Contains(h, "  --"+f.Name) {
			t.Errorf("%s --help does not name --%s", strings.Join(path, " "), f.Name)
		}
	})
}

// TestSubcommandDispatch: a subcommand is chosen by name, its own flags
// parsed, and a wrong use says what is missing.
func TestSubcommandDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"users"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "missing the subcommand: add, list, remove or token") {
		t.Errorf("users: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"users", "frob", "x"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown subcommand "frob"`) {
		t.Errorf("users frob: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"users", "token", "list"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "mindmount users token list: missing ROOT") {
		t.Errorf("users token list: exit %d, %q", code, errb.String())
	}
	root := t.TempDir()
	out.Reset()
	errb.Reset()
	if code := run([]string{"users", "list", root}, &out, &errb); code != 0 || !strings.Contains(out.String(), "ID") {
		t.Errorf("users list: exit %d, %q %q", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := run([]string{"users", "add", root, "alice", "--uid"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--uid needs a value") {
		t.Errorf("users add --uid: exit %d, %q", code, errb.String())
	}
}
