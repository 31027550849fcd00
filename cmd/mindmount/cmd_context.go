package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// contextCommand is "mindmount context".
var contextCommand = newCommand(command{
	name:    "context",
	usage:   "context DIR [--max-bytes N | --max-tokens N]",
	summary: "print the compiled context (CONTEXT.md) to give an agent",
	help: `Prints the context an agent should start with, the same text the mount
shows as CONTEXT.md: character.md (the persona), the character memory
index, user.md, the user memory index, every system/*.md block, and then a
tree of the other markdown files in the repository ("external memory") with
each file's description, for the agent to read when relevant.

Frontmatter is left out, and so are retired memories (status superseded,
retracted or contradicted) and invalid files (see "mindmount check DIR").

The output is kept within --max-bytes (default 32768), or --max-tokens
estimated at 4 bytes a token (32768 bytes is about 8,000 tokens).
When it does not fit, the persona and blocks come first, the lists share
the rest, each cut list says how many entries are missing, and the output
ends with a line like

    <!-- mindmount: context truncated at 32600 bytes (budget 32768); omitted: 120 user memories -->

so a cut is never silent.

Example:

    mindmount context ~/memory --max-bytes 16000 > prompt.md`,
}, runContext)

// contextOptions are the flags of "mindmount context".
type contextOptions struct {
	maxBytes, maxTokens int
}

func (o *contextOptions) AddFlags(fl *flag.FlagSet) {
	fl.IntVar(&o.maxBytes, "max-bytes", 0, "size limit of the output in `bytes` (default 32768)")
	fl.IntVar(&o.maxTokens, "max-tokens", 0, "size limit in estimated `tokens` (4 bytes each), instead of --max-bytes")
}

// runContext prints the compiled context of the repository DIR.
func runContext(_ context.Context, o *contextOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	g, err := scanForOutput(args[0])
	if err != nil {
		return err
	}
	if o.maxBytes < 0 || o.maxTokens < 0 || o.maxBytes > 0 && o.maxTokens > 0 {
		return fmt.Errorf("give one positive limit: --max-bytes or --max-tokens")
	}
	_, err = stdout.Write(g.Context(memgraph.ContextOptions{MaxBytes: o.maxBytes, MaxTokens: o.maxTokens}))
	return err
}
