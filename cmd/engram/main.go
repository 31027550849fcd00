// Command engram gives an AI agent a git repository of markdown memories and
// projects it into a directory with FUSE. Run "engram help" for the commands.
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
	summary string // one line for "engram help"
	help    string // paragraphs for "engram help NAME" / --help
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
		fmt.Fprintf(stderr, "engram: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	fl := newFlagSet(c, stderr)
	if err := fl.Parse(interleave(fl, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.run(fl, fl.Args()); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintf(stderr, "engram %s: %v\n", name, err)
		return 1
	}
	return 0
}

func newFlagSet(c *command, out io.Writer) *flag.FlagSet {
	fl := flag.NewFlagSet("engram "+c.name, flag.ContinueOnError)
	fl.SetOutput(out)
	if c.flags != nil {
		c.flags(fl)
	}
	fl.Usage = func() { commandUsage(c, fl, fl.Output()) }
	return fl
}

// interleave lets flags follow positional arguments ("engram init DIR
// --user ada"), which the standard flag package does not allow by itself.
func interleave(fl *flag.FlagSet, args []string) []string {
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
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(flags, pos...)
}

func commandUsage(c *command, fl *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: engram %s\n\n%s\n", c.usage, strings.TrimSpace(c.help))
	hasFlags := false
	fl.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nflags:\n")
		fl.PrintDefaults()
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `engram keeps an AI agent's memory as markdown files in a git repository.
Every change is a commit: "git log" is the memory's timeline and "git revert"
undoes a bad memory.

usage: engram COMMAND [ARGS] [FLAGS]

commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run "engram help COMMAND" or "engram COMMAND --help" for details.
Set ENGRAM_DEBUG=1 for debug logs.
`)
}

func logLevel() slog.Level {
	if os.Getenv("ENGRAM_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
