// Package remote syncs a mindmount repository with a git remote (a private
// GitHub repository, or any git URL): fetch, a merge with package hooks'
// drivers committed as one two-parent commit through the repository's one
// writer, and push. A daemon runs it beside the write path (Serve): pushes
// follow commits after a debounce, fetches run on start and periodically,
// failures back off, and no write ever waits on the network.
//
// Credentials (a token) come from an environment variable or a 0600 file
// outside every repository and reach go-git only in memory: never
// .git/config, a URL, a log line, an error, the status or a commit.
package remote
