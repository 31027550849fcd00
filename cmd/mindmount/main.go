// Command mindmount gives an AI agent a git repository of markdown memories and
// projects it into a directory with FUSE. Run "mindmount help" for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
)

// command is one subcommand. Each lives in its own file and registers itself
// from an init function, so adding a command touches one file.
type command struct {
	name    string
	usage   string // "init DIR [--user NAME]"
	summary string // one line for "mindmount help"
	help    string // paragraphs for "mindmount help NAME" / --help
	run     func(fl *flag.FlagSet, args []string) error
	flags   func(fl *flag.FlagSet) // optional: declares the command's flags
}

var commands = map[string]*command{}

// stdout and stderr are where commands print; tests swap them.
var stdout, stderr io.Writer = os.Stdout, os.Stderr

func register(c *command) { commands[c.name] = c }

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
				commandUsage(c, newFlagSet(c, stdout), stdout)
				return 0
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "mindmount: unknown command %q\nRun \"mindmount help\" for the list of commands.\n", name)
		return 2
	}
	fl := newFlagSet(c, stderr)
	if wantsHelp(args[1:]) {
		// Asked-for help is output, not an error: stdout, exit 0, the same
		// text as "mindmount help NAME".
		commandUsage(c, newFlagSet(c, stdout), stdout)
		return 0
	}
	ordered, err := interleave(fl, args[1:])
	if err != nil {
		fmt.Fprintf(stderr, "mindmount %s: %v\n", name, err)
		shortUsage(c, stderr)
		return 2
	}
	if err := fl.Parse(ordered); err != nil {
		// The flag package has printed the error and the short usage.
		return 2
	}
	if missing := missingArgs(c.usage, fl.Args()); missing != "" {
		fmt.Fprintf(stderr, "mindmount %s: missing %s\n", name, missing)
		shortUsage(c, stderr)
		return 2
	}
	if err := c.run(fl, fl.Args()); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintf(stderr, "mindmount %s: %v\n", name, err)
		return 1
	}
	return 0
}

func newFlagSet(c *command, out io.Writer) *flag.FlagSet {
	fl := flag.NewFlagSet("mindmount "+c.name, flag.ContinueOnError)
	fl.SetOutput(out)
	if c.flags != nil {
		c.flags(fl)
	}
	// Usage is what a mistake prints (a bad flag, a wrong argument count):
	// two lines, not the whole help.
	fl.Usage = func() { shortUsage(c, fl.Output()) }
	return fl
}

// shortUsage is the reminder printed after a usage mistake.
func shortUsage(c *command, w io.Writer) {
	fmt.Fprintf(w, "usage: mindmount %s\nRun \"mindmount %s --help\" for details.\n", c.usage, c.name)
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

func commandUsage(c *command, fl *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: mindmount %s\n\n%s\n", c.usage, strings.TrimSpace(c.help))
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
