package mcpserver

import (
	"context"
	"log/slog"
)

// quiet passes on only warnings and errors: the SDK logs every session's
// start and end at Info, which would drown the daemon's own log (and a
// desktop client shows a stdio server's standard error to its user).
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}

func (q quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(as)} }
func (q quiet) WithGroup(name string) slog.Handler    { return quiet{q.Handler.WithGroup(name)} }

var _ slog.Handler = quiet{}

// sdkLogger is the logger handed to the MCP SDK.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(quiet{log.Handler()}).With("component", "mcp")
}
