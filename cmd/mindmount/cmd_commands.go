package main

// commandTable is every command of mindmount, declared here with its
// arguments (usage), summary, options and subcommands: dispatch, usage
// lines and --help all read it, so a subcommand cannot go missing from its
// parent's help. Each command's options, help text and runX live in its
// own file (cmd_NAME.go). Not yet here (still registered from init() in
// their files, the old way): consolidate, eval.
var commandTable = []*command{
	checkCommand,
	contextCommand,
	githooksCommand,
	hookCommand,
	hooksCommand,
	importCommand,
	indexCommand,
	initCommand,
	mcpCommand,
	mountCommand,
	recallCommand,
	reindexCommand,
	remoteCommand,
	agentCommand,
	serveCommand,
	statusCommand,
	syncCommand,
	uiCommand,
	usersCommand,
	versionCommand,
	watchCommand,
	workerCommand,
}
