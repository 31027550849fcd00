package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/mcpserver"
)

// mcpCommand is "mindmount mcp".
var mcpCommand = newCommand(command{
	name:    "mcp",
	usage:   "mcp REPO [--debounce 1s] [--consolidate=false] [--max-line BYTES]",
	summary: "serve a memory repository to an MCP client over stdio",
	help: `Serves the mindmount repository REPO over the Model Context Protocol on
standard input and output, for agents without a shell or a mount (desktop
assistants, IDE agents). Add it to the client's configuration as a command:

    {"mcpServers": {"mindmount": {"command": "mindmount", "args": ["mcp", "/home/ada/memory"]}}}

Tools: view, create, str_replace, insert, delete, rename (paths relative to
REPO, or under /memories/), recall, context and use. Resources:
user_memory.md, character_memory.md and CONTEXT.md, with change
notifications for subscribers.

Every write is validated before it touches the disk: an invalid result or a
change to a read_only file is refused with the validator's
"path:line: message" and nothing is written. Paths stay inside REPO (no
"..", no .git, no symbolic links). Each tool call that changes something is
one commit, authored "mcp (<client name>)". Changes made beside it (an
editor, git pull) are picked up as in "mindmount watch", and transcripts are
consolidated as there.

One message per line: a line that is not a JSON-RPC 2.0 message is
answered with JSON-RPC's error (-32700, -32600) and the session goes on;
a line over --max-line bytes (default 8 MiB) is refused and skipped.

It runs until the client closes the connection, or SIGINT/SIGTERM, then
commits what is pending. Logs go to standard error. Started while
another daemon serves REPO (a mount, a watch, the web page), it is served
by that daemon through its control socket instead (the repository's one
writer; only its own user may attach), and ends when the client or that
daemon does.`,
}, runMCPCommand)

// mcpOptions are the flags of "mindmount mcp".
type mcpOptions struct {
	daemon  daemonFlags
	maxLine int
}

func (o *mcpOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.IntVar(&o.maxLine, "max-line", defaultMaxLine, "refuse and skip an input line longer than `BYTES` (one JSON-RPC message)")
}

// runMCPCommand serves a repository over MCP on stdio.
func runMCPCommand(_ context.Context, o *mcpOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	if o.maxLine <= 0 {
		return usageError{"--max-line must be a positive number of bytes"}
	}
	if err := requireMindmountRepo(args[0]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if attached, err := attachMCP(ctx, args[0]); attached {
		return err
	}
	return runMCP(args[0], o.daemon.runtimeConfig(false, slog.Default()), stdioTransport(o.maxLine))
}

// runMCP serves the repository dir over transport until the client leaves
// or a signal arrives, then commits what is pending.
func runMCP(dir string, cfg host.RuntimeConfig, transport mcp.Transport) error {
	return runDaemon(dir, cfg, func(ctx context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		srv := mcpserver.New(rt, mcpserver.Options{Logger: cfg.Logger, Version: versionString()})
		ended := make(chan error, 1)
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			err := srv.Run(ctx, transport)
			// The client closed the connection: the normal end.
			if errors.Is(err, context.Canceled) || isClosed(err) {
				err = nil
			}
			ended <- err
		}()
		return ended, func(bool) error {
			<-finished // ctx is over: the server returns
			return nil
		}, nil
	})
}

// isClosed reports whether err only says the connection ended.
func isClosed(err error) bool {
	return err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF)
}
