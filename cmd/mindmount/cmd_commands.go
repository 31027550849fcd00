package main

// commandTable is every command of mindmount, declared here with its
// arguments (usage), summary, options and subcommands: dispatch, usage
// lines and --help all read it, so a subcommand cannot go missing from its
// parent's help. Each command's options, help text and runX live in its
// own file (cmd_NAME.go).
var commandTable = []*command{
	addCommand,
	checkCommand,
	clusterCommand,
	consolidateCommand,
	doctorCommand,
	contextCommand,
	evalCommand,
	githooksCommand,
	githubCommand,
	hookCommand,
	hooksCommand,
	importCommand,
	ingestCommand,
	indexCommand,
	initCommand,
	mcpCommand,
	mergeCursorCommand,
	mountCommand,
	promoteCommand,
	recallCommand,
	reindexCommand,
	remoteCommand,
	reviewCommand,
	skillsCommand,
	agentCommand,
	serveCommand,
	serviceCommand,
	statusCommand,
	statusLineCommand,
	syncCommand,
	teamCommand,
	teamsCommand,
	uiCommand,
	usersCommand,
	versionCommand,
	watchCommand,
	workerCommand,
	teamWorkerCommand,
}
