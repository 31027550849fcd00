// Command mindmount gives an AI agent a git repository of markdown memories and
// projects it into a directory with FUSE. Run "mindmount help" for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
)

// command is one command or subcommand of mindmount. Commands are declared
// in one place, commandTable (cmd_commands.go), each with its arguments
// (usage), its options and its subcommands, so that dispatch, usage lines
// and --help all read the same declaration.
type command struct {
	name    string
	usage   string // "init DIR [--user NAME]"
	summary string // one line for "mindmount help" and its parent's help
	help    string // paragraphs for "mindmount help NAME" / --help
	// bind declares the command's flags on fl, bound to a fresh options
	// value, and returns the run that reads them (see newCommand). Nil for
	// a command that only groups its subcommands.
	bind func(fl *flag.FlagSet) runFunc
	// subs are the subcommands, chosen by the first argument that is not a
	// flag ("users add ROOT ID").
	subs []*command
}

// runFunc runs a command with its positional arguments.
type runFunc func(ctx context.Context, args []string) error

// flagAdder is a command's options: a plain struct whose AddFlags declares
// one flag per field (restic's model).
type flagAdder interface{ AddFlags(fl *flag.FlagSet) }

// newCommand declares a command whose flags are an O (a fresh one for each
// run, so nothing carries over between runs in one process) and whose work
// is run.
func newCommand[O any, P interface {
	*O
	flagAdder
}](c command, run func(ctx context.Context, opts P, args []string) error) *command {
	c.bind = func(fl *flag.FlagSet) runFunc {
		o := P(new(O))
		o.AddFlags(fl)
		return func(ctx context.Context, args []string) error { return run(ctx, o, args) }
	}
	return &c
}

// noOptions is the options of a command without flags.
type noOptions struct{}

func (*noOptions) AddFlags(*flag.FlagSet) {}

// usageError is a wrong use of a command: the message, then the short
// usage, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// errUsage is a wrong use that needs no words beyond the short usage.
var errUsage = usageError{}

// commands indexes commandTable by name.
var commands = func() map[string]*command {
	m := map[string]*command{}
	for _, c := range commandTable {
		m[c.name] = c
	}
	return m
}()

// stdout and stderr are where commands print; tests swap them.
var stdout, stderr io.Writer = os.Stdout, os.Stderr

// exitError carries an exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, out, errOut io.Writer) int {
	stdout, stderr = out, errOut
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel()})))
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "--version", "-version", "-V", "-v":
		name, args = "version", []string{"version"}
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				path := "mindmount " + c.name
				for _, a := range args[2:] { // "help users token"
					sub, _, ok := subcommand(c, []string{a})
					if !ok {
						break
					}
					c, path = sub, path+" "+sub.name
				}
				commandUsage(c, path, stdout)
				return 0
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		if guess := closestCommand(name); guess != "" {
			fmt.Fprintf(stderr, "mindmount: unknown command %q; did you mean %q?\n", name, guess)
		}
		fmt.Fprintf(stderr, "mindmount: unknown command %q\nRun \"mindmount help\" for the list of commands.\n", name)
		return 2
	}
	return runCommand(c, "mindmount "+name, args[1:])
}

// runCommand runs c (path is "mindmount users token") with the arguments
// after its name: a subcommand named by the first argument that is not a
// flag, else c itself.
func runCommand(c *command, path string, args []string) int {
	if sub, rest, ok := subcommand(c, args); ok {
		return runCommand(sub, path+" "+sub.name, rest)
	}
	if wantsHelp(args) {
		// Asked-for help is output, not an error: stdout, exit 0, the same
		// text as "mindmount help NAME".
		commandUsage(c, path, stdout)
		return 0
	}
	if c.bind == nil {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				fmt.Fprintf(stderr, "%s: unknown subcommand %q (one of: %s)\n", path, a, subNames(c))
				return 2
			}
		}
		fmt.Fprintf(stderr, "%s: missing the subcommand: %s (see %s --help)\n", path, subNames(c), path)
		return 2
	}
	fl, runIt := newFlagSet(c, path, stderr)
	ordered, err := interleave(fl, args)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		shortUsage(c, path, stderr)
		return 2
	}
	if err := fl.Parse(ordered); err != nil {
		// The flag package has printed the error and the short usage.
		return 2
	}
	if missing := missingArgs(c.usage, fl.Args()); missing != "" {
		fmt.Fprintf(stderr, "%s: missing %s\n", path, missing)
		shortUsage(c, path, stderr)
		return 2
	}
	if err := runIt(context.Background(), fl.Args()); err != nil {
		var ee exitError
		var ue usageError
		switch {
		case errors.As(err, &ee):
			return ee.code
		case errors.As(err, &ue):
			if ue.msg != "" {
				fmt.Fprintf(stderr, "%s: %s\n", path, ue.msg)
			}
			shortUsage(c, path, stderr)
			return 2
		}
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	return 0
}

// subcommand finds the subcommand of c named by the first argument that is
// not a flag, and returns the arguments without it.
func subcommand(c *command, args []string) (*command, []string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, s := range c.subs {
			if s.name == a {
				return s, append(append([]string{}, args[:i]...), args[i+1:]...), true
			}
		}
		break
	}
	return nil, nil, false
}

// subNames lists c's subcommands: "add, list, remove or token".
func subNames(c *command) string {
	var names []string
	for _, s := range c.subs {
		names = append(names, s.name)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// newFlagSet makes c's flag set, its flags bound to a fresh options value,
// and the run that reads them.
func newFlagSet(c *command, path string, out io.Writer) (*flag.FlagSet, runFunc) {
	fl := flag.NewFlagSet(path, flag.ContinueOnError)
	fl.SetOutput(out)
	var runIt runFunc
	if c.bind != nil {
		runIt = c.bind(fl)
	}
	// Usage is what a mistake prints (a bad flag, a wrong argument count):
	// two lines, not the whole help.
	fl.Usage = func() { shortUsage(c, path, fl.Output()) }
	return fl, runIt
}

// shortUsage is the reminder printed after a usage mistake.
func shortUsage(c *command, path string, w io.Writer) {
	fmt.Fprintf(w, "usage: mindmount %s\nRun \"%s --help\" for details.\n", c.usage, path)
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// missingArgs names the required positional arguments of usage (the
// upper-case placeholders and "a|b" choices before the first optional
// part, "[", or flag, and those right after a "--" separator) that args
// lacks, so every command says "missing MOUNTPOINT" the same way.
func missingArgs(usage string, args []string) string {
	depth := 0
	for _, w := range strings.Fields(usage)[1:] {
		if w == "|" && depth == 0 {
			return "" // two forms ("status REPO | status --root ROOT"): the command checks
		}
		depth += strings.Count(w, "[") - strings.Count(w, "]")
	}
	var req []string
	collecting := true
	depth = 0
	for _, w := range strings.Fields(usage)[1:] {
		outer := depth == 0
		depth += strings.Count(w, "[") - strings.Count(w, "]")
		if outer && w == "--" {
			collecting = true // "-- AGENT [ARGS...]": what follows the separator
			continue
		}
		if !outer || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-") {
			collecting = false // optional parts and flags
			continue
		}
		if !collecting {
			continue
		}
		w = strings.Trim(w, `"'`)
		upper := w == strings.ToUpper(w) && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_.") == ""
		if upper || strings.Contains(w, "|") { // a placeholder or a choice ("add|list")
			req = append(req, strings.TrimSuffix(w, "..."))
		}
	}
	if len(args) >= len(req) {
		return ""
	}
	return strings.Join(req[len(args):], " and ")
}

// interleave lets flags follow positional arguments ("mindmount init DIR
// --user ada"), which the standard flag package does not allow by itself.
func interleave(fl *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fl.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			// A value flag at the very end has no value: say so rather
			// than let the flag take a positional argument as its value
			// ("init DIR --user" must not name the user DIR).
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag --%s needs a value", name)
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(flags, pos...), nil
}

// commandUsage is c's --help: usage, help, subcommands, flags.
func commandUsage(c *command, path string, w io.Writer) {
	fmt.Fprintf(w, "usage: mindmount %s\n\n%s\n", c.usage, strings.TrimSpace(c.help))
	if len(c.subs) > 0 {
		fmt.Fprintf(w, "\nsubcommands (each with --help):\n")
		for _, s := range c.subs {
			fmt.Fprintf(w, "  mindmount %s\n    \t%s\n", s.usage, s.summary)
		}
	}
	fl, _ := newFlagSet(c, path, w)
	hasFlags := false
	fl.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nflags:\n")
		printFlags(fl, w)
	}
}

// printFlags lists flags the way usage lines write them: "--name VALUE",
// with the value's placeholder in capitals ("--kind KIND"), the default
// when it is not the zero value.
func printFlags(fl *flag.FlagSet, w io.Writer) {
	fl.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + strings.ToUpper(name)
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, text)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func usage(w io.Writer) {
	fmt.Fprint(w, `mindmount keeps an AI agent's memory as markdown files in a git repository.
Every change is a commit: "git log" is the memory's timeline and "git revert"
undoes a bad memory.

usage: mindmount COMMAND [ARGS] [FLAGS]

commands:
`)
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.summary != "" { // internal commands (worker) have none
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run "mindmount help COMMAND" or "mindmount COMMAND --help" for details, and
"mindmount --version" for the version.
Set MINDMOUNT_DEBUG=1 for debug logs.
`)
}

func logLevel() slog.Level {
	if os.Getenv("MINDMOUNT_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
